import Foundation
import Testing
import PhotoWallCore
import PhotoWallPostgres
import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallTesting

/// Every store one adapter gives: what the contract suites exercise.
typealias Adapter = ObjectStore & FileRecordStore & UploadRecordStore & FriendGraphStore & FeedStore & BulkLoading

/// The databases each contract suite runs over, as `@Test(arguments: Backend.allCases)`.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { self == .sqlite ? "SQLite" : "PostgreSQL" }

    /// The wall's feed, by literal names (the adapters know no class of the app).
    static let projection = FeedProjection(imageClass: "WallImage", authorField: "userFBId",
                                           commentClass: "WallImageComment", commentImageField: "imageObjectId")

    /// A fresh empty database: a file in a new temporary folder, or a new database on the test
    /// PostgreSQL server. `reopen` opens another adapter on the same database (a second process).
    /// Without PostgreSQL the `.postgres` case records `TestPostgres.skipNote` as a warning and is cancelled.
    /// `reopenFeed` is the projection `reopen` opens with (default: `feed`).
    func open(feed: FeedProjection? = Backend.projection,
              reopenFeed: FeedProjection?? = nil) throws -> (db: any Adapter, reopen: @Sendable () throws -> any Adapter) {
        let later = reopenFeed ?? feed
        switch self {
        case .sqlite:
            let dir = NSTemporaryDirectory() + "pw-contract-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let path = dir + "/db.sqlite"
            // As `photowall serve` opens it: rows read by objectId kept in memory (`CachedRow`), so every
            // contract holds with that cache on. (The second adapter is another process: without it.)
            return (try SQLiteAdapter(path: path, feedProjection: feed, rowCacheSeconds: 5),
                    { try SQLiteAdapter(path: path, feedProjection: later) })
        case .postgres:
            guard TestPostgres.adminURL != nil else {
                // A warning prints in every run's output; the cancel ends the case without passing it.
                Issue.record(Comment(rawValue: TestPostgres.skipNote), severity: .warning)
                try Test.cancel(Comment(rawValue: TestPostgres.skipNote))
            }
            let url = try TestPostgres.freshDatabase()
            return (try PostgresAdapter(url: url, maxConnections: 8, feedProjection: feed),
                    { try PostgresAdapter(url: url, maxConnections: 1, feedProjection: later) })
        }
    }
}

/// A new object of `cls` with these fields, created and updated now.
func object(_ cls: String, _ fields: [String: JSON], acl: ACL? = nil, id: String = ParseIdentifier.alphanumeric()) -> StoredObject {
    let now = ParseDate.now()
    return StoredObject(className: cls, objectId: id, createdAt: now, updatedAt: now, fields: fields, acl: acl)
}
