import Foundation
import PhotoWallCore
import PhotoWallServices
import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallTesting
import PhotoWallWall
import Testing

/// The services and the wall as `photowall serve` builds them, in process, on a real SQLite file in
/// a fresh temporary folder, with three users: `owner` and `friend` (friends at the provider) and
/// `stranger`.
final class WallFixture {
    let dir: String
    let database: SQLiteAdapter
    let files: FileService
    let wall: Wall
    let objects: ObjectService
    let users: UserService
    private(set) var owner = AuthContext.anonymous, friend = AuthContext.anonymous, stranger = AuthContext.anonymous

    /// - Parameter userCacheSeconds: `ObjectService`'s cache of the users `include` reads (0: off).
    init(visibility: WallRules.Visibility = .friends, feedThreshold: Int = 300, userCacheSeconds: Double = 0) throws {
        dir = NSTemporaryDirectory() + "/photowall-wall-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        database = try SQLiteAdapter(path: dir + "/photowall.sqlite", feedProjection: WallSchema.feedProjection)
        try WallSchema.createClasses(database)
        var config = ServerConfig()
        config.publicServerURL = "http://127.0.0.1:1/parse"
        files = FileService(records: database, objects: database, store: try FileSystemStore(root: dir), config: config)
        wall = Wall(database: database, fileRecords: database, feedStore: database, friendGraph: database, providers: [:], files: files,
                    masterKey: config.masterKey, options: Wall.Options(visibility: visibility, feedThreshold: feedThreshold),
                    logger: Logger(label: "wall-test", level: .error))
        objects = ObjectService(store: database, fileRecords: database, config: config, installing: wall, userCacheSeconds: userCacheSeconds)
        users = try UserService(objects: objects)
        owner = try user("1001", "Olga Owner")
        friend = try user("1002", "Fred Friend")
        stranger = try user("1003", "Sam Stranger")
        try database.replaceFriends(of: "1001", with: ["1002"], syncedAt: .now())
        try database.replaceFriends(of: "1002", with: ["1001"], syncedAt: .now())
        try database.replaceFriends(of: "1003", with: [], syncedAt: .now())
    }

    deinit { removeTree(dir) }

    /// A `_User` with a Facebook id, made by the master key, as a session of theirs sees itself.
    func user(_ fbId: String, _ name: String) throws -> AuthContext {
        let made = try objects.create(className: "_User", body: ["username": .string("fb_" + fbId), "fbId": .string(fbId),
                                                                 "name": .string(name)], auth: .master)
        let stored = try #require(try objects.fetchStored(className: "_User", objectId: made.objectId))
        return AuthContext(user: stored, sessionToken: "r:" + fbId)
    }

    /// A `WallImage` without a file (no thumbnails to make) saved by `auth`.
    func image(_ caption: String, by auth: AuthContext) throws -> String {
        try objects.create(className: WallSchema.imageClass, body: ["caption": .string(caption)], auth: auth).objectId
    }

    /// A `WallImageComment` on `imageId` saved by `auth`.
    func comment(_ text: String, on imageId: String, by auth: AuthContext) throws -> String {
        try objects.create(className: WallSchema.commentClass, body: ["comment": .string(text), "imageObjectId": .string(imageId)],
                           auth: auth).objectId
    }
}

/// The `ParseError` `body` throws, or nil when it returns.
func parseError<T>(_ body: () throws -> T) -> ParseError? {
    do { _ = try body(); return nil } catch let error as ParseError { return error } catch {
        Issue.record("not a ParseError: \(error)")
        return nil
    }
}
