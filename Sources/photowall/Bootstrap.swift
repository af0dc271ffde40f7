import PhotoWallCore
import PhotoWallStorage

/// The photo wall's classes, created at start with the indexes their queries need
/// (`userFBId $in [...]` ordered by `createdAt`, comments by `imageObjectId`).
enum Bootstrap {
    static func createClasses(_ db: any DatabaseAdapter) throws(ParseError) {
        try db.ensureClass("WallImage", fields: ["image": .file, "thumbnail": .file, "display": .file, "width": .number, "height": .number,
                                         "user": .pointer("_User"), "userFBId": .string],
                           indexedFields: ["userFBId", "user.objectId", "image.name", "thumbnail.name", "display.name"], uniqueFields: [])
        try db.ensureClass("WallImageComment", fields: ["comment": .string, "user": .pointer("_User"), "userFBId": .string,
                                                        "imageObjectId": .string, "imageUserFBId": .string],
                           indexedFields: ["imageObjectId", "userFBId", "imageUserFBId"], uniqueFields: [])
    }
}
