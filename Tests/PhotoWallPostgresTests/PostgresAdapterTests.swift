import Foundation
import Testing
import PhotoWallCore
@testable import PhotoWallPostgres
import PhotoWallStorage
import PhotoWallTesting

/// What only the PostgreSQL adapter does (migrations, plans, its feed threshold), on a fresh database
/// per test. What every adapter does is in the contract suites of PhotoWallStorageTests.
@Suite(.enabled(if: TestPostgres.adminURL != nil, Comment(rawValue: TestPostgres.skipNote)))
struct PostgresAdapterTests {
    let url: String
    let db: PostgresAdapter

    static let projection = FeedProjection(imageClass: "WallImage", authorField: "userFBId",
                                           commentClass: "WallImageComment", commentImageField: "imageObjectId")

    init() throws {
        url = try TestPostgres.freshDatabase()
        db = try PostgresAdapter(url: url, maxConnections: 8, feedProjection: Self.projection)
    }

    func object(_ cls: String, _ fields: [String: JSON], acl: ACL? = nil, id: String = ParseIdentifier.alphanumeric()) -> StoredObject {
        let now = ParseDate.now()
        return StoredObject(className: cls, objectId: id, createdAt: now, updatedAt: now, fields: fields, acl: acl)
    }

    @Test func migrationsAreRecordedAndIdempotent() throws {
        let again = try PostgresAdapter(url: url, maxConnections: 1)
        #expect(try again.schema(of: "_User") == nil)
        let conn = try PostgresConnection(conninfo: url)
        #expect(try conn.query("SELECT max(version) FROM \"_MIGRATIONS\"").first?[0] == "8")
    }

    @Test func explainUsesTheExpressionIndexForTheWallQuery() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string, "user": .pointer("_User")],
                           indexedFields: ["userFBId", "user.objectId"], uniqueFields: [])
        let conn = try PostgresConnection(conninfo: url)
        // 4,000 rows from 400 authors, then fresh statistics, so the planner has a real choice.
        try conn.execute("""
            INSERT INTO "c_WallImage"("objectId", "createdAt", "updatedAt", doc)
            SELECT 'o' || g, 1600000000000 + g, 1600000000000 + g,
                   jsonb_build_object('userFBId', (g % 400)::text, 'user', jsonb_build_object('__type', 'Pointer', 'className', '_User', 'objectId', 'u' || (g % 400)))
            FROM generate_series(1, 4000) g;
            ANALYZE "c_WallImage";
            """)
        let wall = StoredQuery(className: "WallImage",
                               predicate: .inList("userFBId", [.string("1"), .string("2"), .string("3")], negated: false),
                               order: [SortKey(path: "createdAt", descending: true)], limit: 20, readers: ["*", "someone"])
        let plan = try db.explain(wall)
        #expect(plan.contains("i_WallImage_userFBId"), "\(plan)")
        #expect(try db.find(wall).count == 20)
        #expect(try db.find(wall).map(\.createdAt.millisecondsSince1970) == (try db.find(wall).map(\.createdAt.millisecondsSince1970)).sorted(by: >))
        let byPointer = StoredQuery(className: "WallImage", predicate: .compare("user", .eq, .pointer(className: "_User", objectId: "u7")),
                                    order: [SortKey(path: "createdAt", descending: true)], limit: 5, readers: nil)
        #expect(try db.explain(byPointer).contains("i_WallImage_user_objectId"))
        #expect(try db.count(byPointer) == 10)
    }

    @Test func feedThresholdGrowsWithTheSquareRootOfTheImages() throws {
        #expect(PostgresAdapter.feedThreshold(images: 0) == 50)
        #expect(PostgresAdapter.feedThreshold(images: 1_000_000) == 212)
        #expect(PostgresAdapter.feedThreshold(images: 10_000_000) == 670)
        // A new database has no WallImage statistics yet: the floor.
        #expect(db.suggestedFeedThreshold() == 50)
    }

    @Test func aDatabaseOfTheWallSchemaKeepsItsFeedAndFriends() throws {
        // A database as the releases before app-blind storage left it (schema version 7: friend columns
        // "userFBId"/"friendFBId"), with a wall on it made the way those releases made it.
        let old = try TestPostgres.freshDatabase()
        let conn = try PostgresConnection(conninfo: old)
        try conn.execute("CREATE TABLE \"_MIGRATIONS\" (version integer PRIMARY KEY, \"appliedAt\" timestamptz NOT NULL DEFAULT now())")
        for (i, sql) in PostgresAdapter.migrations(Self.projection).prefix(7).enumerated() {
            try conn.execute(sql)
            try conn.execute("INSERT INTO \"_MIGRATIONS\"(version) VALUES (\(i + 1))")
        }
        try conn.execute("""
            CREATE TABLE "c_WallImage" ("objectId" text PRIMARY KEY, "createdAt" bigint NOT NULL,
                "updatedAt" bigint NOT NULL, doc jsonb NOT NULL, acl jsonb, rperm text[], wperm text[]);
            ALTER TABLE "c_WallImage" ADD COLUMN "feedAuthor" text GENERATED ALWAYS AS (doc->>'userFBId') STORED;
            CREATE INDEX "i_WallImage_feedAuthor" ON "c_WallImage"("feedAuthor", "createdAt" DESC, "objectId" DESC);
            CREATE INDEX "i_WallImage_feedTime" ON "c_WallImage"("createdAt" DESC, "objectId" DESC) INCLUDE ("feedAuthor");
            INSERT INTO "_SCHEMA" VALUES ('WallImage', '{"userFBId":{"type":"String"}}');
            INSERT INTO "c_WallImage"("objectId", "createdAt", "updatedAt", doc) VALUES
                ('img1', 1000, 1000, '{"userFBId":"f1"}'), ('img2', 2000, 2000, '{"userFBId":"me"}'), ('img3', 3000, 3000, '{"userFBId":"stranger"}');
            INSERT INTO "_FRIENDS"("userFBId", "friendFBId") VALUES ('me', 'f1');
            INSERT INTO "_FRIEND_SYNC"("userFBId", "syncedAt") VALUES ('me', 500);
            """)
        let db = try PostgresAdapter(url: old, maxConnections: 2, feedProjection: Self.projection)
        #expect(try conn.query("SELECT max(version) FROM \"_MIGRATIONS\"").first?[0] == "8")
        #expect(try db.friends(of: "me") == ["f1"])
        #expect(try db.friendsSyncedAt("me") == ParseDate(millisecondsSince1970: 500))
        for strategy in [FeedStrategy.perAuthor, .globalScan] {
            let page = try db.feedKeys(authors: nil, viewer: "me", before: nil, limit: 10, strategy: strategy, scanLimit: 100)
            #expect(page.keys.map(\.objectId) == ["img2", "img1"], "\(strategy)")
        }
        try db.insert(StoredObject(className: "WallImage", objectId: "img4", createdAt: ParseDate(millisecondsSince1970: 4000),
                                   updatedAt: ParseDate(millisecondsSince1970: 4000), fields: ["userFBId": "f1"], acl: nil))
        #expect(try db.feedKeys(authors: nil, viewer: "me", before: nil, limit: 10, strategy: .perAuthor, scanLimit: 100).keys.map(\.objectId)
                == ["img4", "img2", "img1"])
    }
}

/// Two adapters on one database, as two PhotoWall processes sharing PostgreSQL.
@Suite(.enabled(if: TestPostgres.adminURL != nil, Comment(rawValue: TestPostgres.skipNote)))
struct PostgresSharedDatabaseTests {
    @Test func aFieldAddedByAnotherProcessComparesByItsType() throws {
        let url = try TestPostgres.freshDatabase()
        let a = try PostgresAdapter(url: url, maxConnections: 2)
        let b = try PostgresAdapter(url: url, maxConnections: 2)
        let now = ParseDate.now()
        try a.insert(StoredObject(className: "S", objectId: "sObject001", createdAt: now, updatedAt: now, fields: ["x": 1], acl: nil))
        #expect(try b.schema(of: "S")?.fields["x"] == .number)  // b learns the class on first use
        try a.insert(StoredObject(className: "S", objectId: "sObject002", createdAt: now, updatedAt: now,
                                  fields: ["when": ["__type": "Date", "iso": "2024-05-01T00:00:00.000Z"]], acl: nil))
        // b's cache lacks "when"; the query still compares it as a Date.
        let q = StoredQuery(className: "S", predicate: .compare("when", .gt, .date(ParseDate(iso: "2024-01-01T00:00:00.000Z")!)), readers: nil)
        #expect(try b.find(q).map(\.objectId) == ["sObject002"])
        // And b's write with another type is refused against a's committed schema.
        do {
            try b.insert(StoredObject(className: "S", objectId: "sObject003", createdAt: now, updatedAt: now, fields: ["when": "soon"], acl: nil))
            Issue.record("expected a schema mismatch")
        } catch {
            #expect(error.code == .incorrectType)
        }
    }

    @Test func nulCharactersAreAClientError() throws {
        let db = try PostgresAdapter(url: try TestPostgres.freshDatabase(), maxConnections: 1)
        let now = ParseDate.now()
        do {
            try db.insert(StoredObject(className: "N", objectId: "nObject001", createdAt: now, updatedAt: now, fields: ["s": "a\u{0}b"], acl: nil))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidJSON)
        }
    }
}
