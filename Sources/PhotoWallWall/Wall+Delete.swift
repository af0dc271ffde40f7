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
            let onImage = Predicate.compare(WallSchema.commentImageField, .eq, .string(image.objectId))
            try deleteAll(WallSchema.commentClass, onImage)
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
                    events?.publish(.deleted(photo))
                    removePhoto(photo)
                }
            }
            try deleteAll(WallSchema.commentClass, byUser)
            while true {
                let owned = try fileRecords.fileNames(ownedBy: user.objectId, limit: 500)
                if owned.isEmpty { break }
                for name in owned { _ = try fileRecords.deleteFile(named: name); _ = try? files.store.delete(name) }
            }
        } catch {
            logger.warning("could not delete a user's photos, comments or files", ["objectId": user.objectId, "cause": "\(error)"])
        }
    }

    /// Deletes every `className` object matching `predicate`; with a listening event bus, reads them
    /// first and publishes each delete (LiveQuery `delete` events for cascades).
    func deleteAll(_ className: String, _ predicate: Predicate) throws(ParseError) {
        guard let events, events.hasListeners else {
            _ = try database.deleteAll(className: className, predicate: predicate)
            return
        }
        let doomed = try database.find(StoredQuery(className: className, predicate: predicate, readers: nil))
        _ = try database.deleteAll(className: className, predicate: predicate)
        for o in doomed { events.publish(.deleted(o)) }
    }
}
