import Foundation
import Testing
import PhotoWallCore
@testable import PhotoWallPostgres
import PhotoWallSQL
@testable import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallTesting

/// Databases made before the adapters became app-blind (schema version 7: SQLite's feed table
/// `_WALL_FEED(…, userFBId)`, friend columns `userFBId`/`friendFBId` on both) open with their wall,
/// feed and friends intact, and take new writes.
@Suite struct WallSchemaMigrationTests {
    /// A version-7 database holding three images (by `f1`, `me`, `stranger`) and `me`'s friend `f1`,
    /// as those releases left it; `inspect` runs a query on it and gives the first column.
    struct Version7 {
        var open: () throws -> any Adapter
        var inspect: (String) throws -> [String]
    }

    static func version7(_ backend: Backend) throws -> Version7 {
        let projection = Backend.projection
        switch backend {
        case .sqlite:
            let dir = NSTemporaryDirectory() + "pw-v7-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let path = dir + "/photowall.sqlite"
            let raw = try SQLiteDatabase(path: path)
            try raw.write { conn in
                for sql in SQLiteAdapter.migrations.prefix(7) { try conn.execute(sql) }
                try conn.execute("""
                    CREATE TABLE "c_WallImage" (objectId TEXT PRIMARY KEY, createdAt INTEGER NOT NULL,
                        updatedAt INTEGER NOT NULL, doc TEXT NOT NULL, acl TEXT, rperm TEXT, wperm TEXT);
                    INSERT INTO _SCHEMA VALUES ('WallImage', '{"userFBId":{"type":"String"}}');
                    INSERT INTO "c_WallImage" VALUES ('img1', 1000, 1000, '{"userFBId":"f1"}', NULL, NULL, NULL),
                                                     ('img2', 2000, 2000, '{"userFBId":"me"}', NULL, NULL, NULL),
                                                     ('img3', 3000, 3000, '{"userFBId":"stranger"}', NULL, NULL, NULL);
                    INSERT INTO _WALL_FEED VALUES ('img1', 1000, 'f1'), ('img2', 2000, 'me'), ('img3', 3000, 'stranger');
                    INSERT INTO _FRIENDS(userFBId, friendFBId) VALUES ('me', 'f1');
                    INSERT INTO _FRIEND_SYNC(userFBId, syncedAt) VALUES ('me', 500);
                    PRAGMA user_version = 7;
                    """)
            }
            return Version7(open: { try SQLiteAdapter(path: path, feedProjection: projection) },
                            inspect: { sql in try raw.read { conn in try conn.query(sql).compactMap { $0[0].text ?? $0[0].integer.map { String($0) } } } })
        case .postgres:
            guard TestPostgres.adminURL != nil else {
                Issue.record(Comment(rawValue: TestPostgres.skipNote), severity: .warning)
                try Test.cancel(Comment(rawValue: TestPostgres.skipNote))
            }
            let url = try TestPostgres.freshDatabase()
            var setup = "CREATE TABLE \"_MIGRATIONS\" (version integer PRIMARY KEY, \"appliedAt\" timestamptz NOT NULL DEFAULT now());\n"
            for (i, sql) in PostgresAdapter.migrations(projection).prefix(7).enumerated() {
                setup += sql + ";\nINSERT INTO \"_MIGRATIONS\"(version) VALUES (\(i + 1));\n"
            }
            setup += """
                CREATE TABLE "c_WallImage" ("objectId" text PRIMARY KEY, "createdAt" bigint NOT NULL,
                    "updatedAt" bigint NOT NULL, doc jsonb NOT NULL, acl jsonb, rperm text[], wperm text[]);
                ALTER TABLE "c_WallImage" ADD COLUMN "feedAuthor" text GENERATED ALWAYS AS (doc->>'userFBId') STORED;
                CREATE INDEX "i_WallImage_feedAuthor" ON "c_WallImage"("feedAuthor", "createdAt" DESC, "objectId" DESC);
                CREATE INDEX "i_WallImage_feedTime" ON "c_WallImage"("createdAt" DESC, "objectId" DESC) INCLUDE ("feedAuthor");
                INSERT INTO "_SCHEMA" VALUES ('WallImage', '{"userFBId":{"type":"String"}}');
                INSERT INTO "c_WallImage"("objectId", "createdAt", "updatedAt", doc) VALUES
                    ('img1', 1000, 1000, '{"userFBId":"f1"}'), ('img2', 2000, 2000, '{"userFBId":"me"}'),
                    ('img3', 3000, 3000, '{"userFBId":"stranger"}');
                INSERT INTO "_FRIENDS"("userFBId", "friendFBId") VALUES ('me', 'f1');
                INSERT INTO "_FRIEND_SYNC"("userFBId", "syncedAt") VALUES ('me', 500);
                """
            _ = try TestPostgres.sql(url, setup)
            return Version7(open: { try PostgresAdapter(url: url, maxConnections: 2, feedProjection: projection) },
                            inspect: { sql in try TestPostgres.sql(url, sql).split(separator: "\n").map(String.init) })
        }
    }

    @Test(arguments: Backend.allCases)
    func aDatabaseOfTheWallSchemaKeepsItsFeedAndFriends(_ backend: Backend) throws {
        let old = try Self.version7(backend)
        let db = try old.open()
        #expect(try db.friends(of: "me") == ["f1"])
        #expect(try db.friendsSyncedAt("me") == ParseDate(millisecondsSince1970: 500))
        for strategy in [FeedStrategy.perAuthor, .globalScan] {
            let page = try db.feedKeys(authors: nil, viewer: "me", before: nil, limit: 10, strategy: strategy, scanLimit: 100)
            #expect(page.keys.map(\.objectId) == ["img2", "img1"], "\(strategy)")
        }
        try db.insert(StoredObject(className: "WallImage", objectId: "img4", createdAt: ParseDate(millisecondsSince1970: 4000),
                                   updatedAt: ParseDate(millisecondsSince1970: 4000), fields: ["userFBId": "f1"], acl: nil))
        try db.delete(className: "WallImage", objectId: "img1", writers: nil)
        for strategy in [FeedStrategy.perAuthor, .globalScan] {
            let page = try db.feedKeys(authors: nil, viewer: "me", before: nil, limit: 10, strategy: strategy, scanLimit: 100)
            #expect(page.keys.map(\.objectId) == ["img4", "img2"], "\(strategy) after an insert and a delete")
        }
        switch backend {
        case .sqlite:
            #expect(try old.inspect("SELECT name FROM sqlite_master WHERE name LIKE '%FEED%' ORDER BY name") == ["_FEED", "_FEED_COMMENTS", "i_FEED_author", "i_FEED_time"])
            #expect(try old.inspect("SELECT name FROM pragma_table_info('_FRIENDS') ORDER BY name") == ["friendId", "userId"])
            #expect(try old.inspect("PRAGMA user_version") == ["11"])
        case .postgres:
            #expect(try old.inspect("SELECT max(version) FROM \"_MIGRATIONS\"") == ["11"])
            #expect(try old.inspect("SELECT column_name FROM information_schema.columns WHERE table_name = '_FRIENDS' ORDER BY 1") == ["friendId", "userId"])
        }
        // Opening again changes nothing.
        #expect(try old.open().friends(of: "me") == ["f1"])
    }
}
