import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

extension Wall {
    /// Clean-up after deletes (the deletion is committed; failures are logged, the delete stands):
    /// - a `WallImage` takes its comments and its `image`, `thumbnail` and `display` files (records
    ///   and bytes; a file another photo also names stays);
    /// - a `_User` takes their photos (as above), their comments, and every other file they own,
    ///   in pages of 500 within the request (`UserService.delete` removes their sessions).
    public func afterDelete(_ object: StoredObject, auth: AuthContext) {
        switch object.className {
        case WallSchema.imageClass: removePhoto(object)
        case "_User": removeUserContent(object)
        default: break
        }
    }

    /// A deleted photo's comments and files.
    func removePhoto(_ image: StoredObject) {
        do {
            _ = try database.deleteAll(className: WallSchema.commentClass,
                                       predicate: .compare(WallSchema.commentImageField, .eq, .string(image.objectId)))
        } catch {
            logger.warning("could not delete a photo's comments", ["objectId": image.objectId, "cause": "\(error)"])
        }
        let names = WallSchema.fileFields.compactMap { image.fields[$0]?["name"]?.stringValue }
        files.deleteUnreferenced(names, className: WallSchema.imageClass, fields: WallSchema.fileFields, excluding: image.objectId, logger: logger)
    }

    /// A deleted user's photos (with their comments and files), comments, and other files.
    func removeUserContent(_ user: StoredObject) {
        let byUser = Predicate.compare("user", .eq, .pointer(className: "_User", objectId: user.objectId))
        do throws(ParseError) {
            while true {
                let photos = try database.find(StoredQuery(className: WallSchema.imageClass, predicate: byUser, limit: 500, readers: nil))
                if photos.isEmpty { break }
                for photo in photos {
                    try database.delete(className: WallSchema.imageClass, objectId: photo.objectId, writers: nil)
                    removePhoto(photo)
                }
            }
            _ = try database.deleteAll(className: WallSchema.commentClass, predicate: byUser)
            while true {
                let owned = try fileRecords.fileNames(ownedBy: user.objectId, limit: 500)
                if owned.isEmpty { break }
                for name in owned { _ = try fileRecords.deleteFile(named: name); _ = try? files.store.delete(name) }
            }
        } catch {
            logger.warning("could not delete a user's photos, comments or files", ["objectId": user.objectId, "cause": "\(error)"])
        }
    }
}
