import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

/// The photo wall's classes, created at start with their declared fields (`WallRules.clientFields`
/// and `serverFields`) and the indexes their queries need (`userFBId $in [...]` ordered by
/// `createdAt`, comments by `imageObjectId`, files by name).
enum Bootstrap {
    static func createClasses(_ db: any ObjectStore) throws(ParseError) {
        func fields(_ c: String) -> [String: FieldType] { WallRules.clientFields[c]!.merging(WallRules.serverFields[c]!) { a, _ in a } }
        try db.ensureClass("WallImage", fields: fields("WallImage"),
                           indexedFields: ["userFBId", "user.objectId", "image.name", "thumbnail.name", "display.name"], uniqueFields: [])
        try db.ensureClass("WallImageComment", fields: fields("WallImageComment"),
                           indexedFields: ["imageObjectId", "userFBId", "imageUserFBId", "user.objectId"], uniqueFields: [])
    }
}
