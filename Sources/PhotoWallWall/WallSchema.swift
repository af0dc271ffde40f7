import PhotoWallCore
import PhotoWallStorage

/// The photo wall's classes: their names, declared fields and indexes, and the feed projection.
///
/// - `WallImage`: a photo. Clients write `image` (a File), `caption` and `likes`; the server sets
///   `thumbnail` and `display` (Files made from `image`), `width` and `height` (upright pixels),
///   `user` (Pointer to `_User`) and `userFBId` (the author's wall id, `WallRules.wallId`).
/// - `WallImageComment`: a comment. Clients write `comment`, `imageObjectId` (fixed after create)
///   and `image`; the server sets `user`, `userFBId` and `imageUserFBId` (the image's author).
///
/// Created at start with these fields (other fields need the master key) and the indexes their
/// queries need (`userFBId $in [...]` ordered by `createdAt`, comments by `imageObjectId`, files by name).
public enum WallSchema {
    /// The photo class.
    public static let imageClass = "WallImage"
    /// The comment class.
    public static let commentClass = "WallImageComment"
    /// The image's author id field (the wall id of `user`), which the feed and the read scope go by.
    /// With `imageClass`, `commentClass` and `commentImageField`: the storage adapters' feed projection.
    public static let authorField = "userFBId"
    /// The comment's image id field.
    public static let commentImageField = "imageObjectId"
    /// What the storage adapters project for the feed: images by author, comments by image.
    public static let feedProjection = FeedProjection(imageClass: imageClass, authorField: authorField,
                                                      commentClass: commentClass, commentImageField: commentImageField)
    /// The comment's field holding its image's author (the comments' read scope goes by it).
    public static let commentImageAuthorField = "imageUserFBId"
    /// The image's File fields: the upload and the two made from it. Served to the wall's audience only.
    public static let fileFields = ["image", "thumbnail", "display"]

    /// The client-writable fields of the wall classes and their types (`ClassWriteRules.declaredFields`).
    public static let clientFields: [String: [String: FieldType]] = [
        imageClass: ["image": .file, "caption": .string, "likes": .number],
        commentClass: ["comment": .string, commentImageField: .string, "image": .pointer(imageClass)],
    ]

    /// The fields the server sets on the wall classes and their types.
    public static let serverFields: [String: [String: FieldType]] = [
        imageClass: ["thumbnail": .file, "display": .file, "width": .number, "height": .number,
                     "user": .pointer("_User"), authorField: .string],
        commentClass: ["user": .pointer("_User"), authorField: .string, commentImageAuthorField: .string],
    ]

    /// Creates (or completes) the wall classes with their declared fields and indexes.
    /// - Throws: what the adapter's `ensureClass` throws.
    public static func createClasses(_ db: any ObjectStore) throws(ParseError) {
        func fields(_ c: String) -> [String: FieldType] { clientFields[c]!.merging(serverFields[c]!) { a, _ in a } }
        try db.ensureClass(imageClass, fields: fields(imageClass),
                           indexedFields: [authorField, "user.objectId", "image.name", "thumbnail.name", "display.name"], uniqueFields: [])
        try db.ensureClass(commentClass, fields: fields(commentClass),
                           indexedFields: [commentImageField, authorField, commentImageAuthorField, "user.objectId"], uniqueFields: [])
    }
}
