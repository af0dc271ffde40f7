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

    /// Array parameters (`$in` lists, permission sets) reach PostgreSQL element for element, whatever
    /// they hold; a class name's table is quoted, a `"` in it doubled.
    @Test func textArraysAndTableNamesAreQuoted() throws {
        let items = ["plain", "", "a\"b", "c\\d", "\\\"", "{x,y}", "NULL", " sp ", "é", "日本", "\u{1F600}"]
        let literal = PostgresQueryCompiler.textArrayLiteral(items)
        #expect(literal.hasPrefix(#"{"plain","","a\"b","c\\d","\\\"","#))
        #expect(PostgresQueryCompiler.textArrayLiteral([]) == "{}")
        let conn = try PostgresConnection(conninfo: url)
        let back = try conn.query("SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS t(x, i) ORDER BY i", [literal]).rows.map { $0[0] }
        #expect(back == items.map { Optional($0) })
        #expect(PostgresAdapter.table("WallImage") == #""c_WallImage""#)
        #expect(PostgresAdapter.table(#"a"b"#) == #""c_a""b""#)
    }

    @Test func migrationsAreRecordedAndIdempotent() throws {
        let again = try PostgresAdapter(url: url, maxConnections: 1)
        #expect(try again.schema(of: "_User") == nil)
        let conn = try PostgresConnection(conninfo: url)
        #expect(try conn.query("SELECT max(version) FROM \"_MIGRATIONS\"").first?[0] == "11")
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

    /// A field index is `(field, "createdAt", "objectId")`: a page of one value newest first (with the
    /// compiler's `objectId` tiebreak) is read from the index with no Sort node; an index of the
    /// earlier shape, `(field, "createdAt")`, is made again by the next `ensureClass`.
    @Test func fieldIndexesServeNewestFirstWithoutASort() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: [], uniqueFields: [])
        let conn = try PostgresConnection(conninfo: url)
        try conn.execute("""
            CREATE INDEX "i_WallImage_userFBId" ON "c_WallImage" ((doc->>'userFBId'), "createdAt");
            INSERT INTO "c_WallImage"("objectId", "createdAt", "updatedAt", doc)
            SELECT 'o' || g, 1600000000000 + g / 3, 1600000000000, jsonb_build_object('userFBId', (g % 400)::text)
            FROM generate_series(1, 4000) g;
            ANALYZE "c_WallImage";
            """)
        let page = StoredQuery(className: "WallImage", predicate: .compare("userFBId", .eq, .string("7")),
                               order: [SortKey(path: "createdAt", descending: true)], limit: 5, readers: ["*", "someone"])
        #expect(try db.explain(page).contains("Sort"), "the earlier index sorts")
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        let def = try conn.query("SELECT indexdef FROM pg_indexes WHERE indexname = 'i_WallImage_userFBId'").first?[0]
        #expect(def?.hasSuffix(#""createdAt", "objectId")"#) == true, "\(def ?? "no index")")
        let plan = try db.explain(page)
        #expect(plan.contains("i_WallImage_userFBId") && !plan.contains("Sort"), "\(plan)")
        #expect(try db.find(page).map(\.objectId) == ["o3607", "o3207", "o2807", "o2407", "o2007"])
    }

    @Test func feedThresholdGrowsWithTheSquareRootOfTheImages() throws {
        #expect(PostgresAdapter.feedThreshold(images: 0) == 50)
        #expect(PostgresAdapter.feedThreshold(images: 1_000_000) == 212)
        #expect(PostgresAdapter.feedThreshold(images: 10_000_000) == 670)
        // A new database has no WallImage statistics yet: the floor.
        #expect(db.suggestedFeedThreshold() == 50)
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
