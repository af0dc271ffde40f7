import PhotoWallCore
import PhotoWallStorage

/// Stored wall objects for bulk loading (`photowall seed-demo`), written past the object service:
/// the same fields and ACL ("everyone reads, the owner writes") a client's save gets.
extension WallSchema {
    /// The stored fields of a photo made from the uploaded file `imageName`: `image` and the
    /// `thumbnail`, `display`, `width` and `height` that `thumbnails` makes and stores, without URLs.
    /// - Throws: what `ThumbnailService.thumbnailFields` throws.
    public static func demoPhoto(imageName: String, thumbnails: ThumbnailService) throws(ParseError) -> [String: JSON] {
        let image: JSON = ["__type": "File", "name": .string(imageName)]
        var fields = try thumbnails.thumbnailFields(for: ["image": image]).fields
        fields["image"] = image
        for k in fileFields { if case .object(var f) = fields[k] { f["url"] = nil; fields[k] = .object(f) } }
        return fields
    }

    /// A `WallImage` of the user `ownerId` (wall id `ownerWallId`) with a photo's fields (`demoPhoto`).
    public static func demoImage(objectId: String, createdAt: ParseDate, photo: [String: JSON], ownerId: String,
                                 ownerWallId: String, caption: String) -> StoredObject {
        var fields = photo
        fields["user"] = ["__type": "Pointer", "className": "_User", "objectId": .string(ownerId)]
        fields[authorField] = .string(ownerWallId)
        fields["caption"] = .string(caption)
        return StoredObject(className: imageClass, objectId: objectId, createdAt: createdAt, updatedAt: createdAt, fields: fields,
                            acl: ACL(entries: ["*": .init(read: true, write: false), ownerId: .init(read: true, write: true)]))
    }

    /// A `WallImageComment` by the user `authorId` (wall id `authorWallId`) on the image `imageId`
    /// of the user with wall id `imageOwnerWallId`.
    public static func demoComment(objectId: String, createdAt: ParseDate, text: String, authorId: String, authorWallId: String,
                                   imageId: String, imageOwnerWallId: String) -> StoredObject {
        StoredObject(className: commentClass, objectId: objectId, createdAt: createdAt, updatedAt: createdAt, fields: [
            "comment": .string(text),
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(authorId)],
            authorField: .string(authorWallId), commentImageField: .string(imageId), commentImageAuthorField: .string(imageOwnerWallId),
        ], acl: ACL(entries: ["*": .init(read: true, write: false), authorId: .init(read: true, write: true)]))
    }
}
