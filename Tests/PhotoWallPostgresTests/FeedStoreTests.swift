import Foundation
import Testing
import PhotoWallCore
@testable import PhotoWallPostgres
import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallTesting

/// The PostgreSQL feed queries return exactly what SQLite's do on the same rows (both strategies,
/// cursors, the scan cap, comments), and the plans are the intended ones. (What each feed store must
/// do on its own, the scan cap included, is `FeedStoreContractTests`.)
@Suite(.enabled(if: TestPostgres.adminURL != nil, Comment(rawValue: TestPostgres.skipNote)))
struct FeedStoreTests {
    let sqlite: SQLiteAdapter
    let postgres: PostgresAdapter
    let url: String

    static let projection = FeedProjection(imageClass: "WallImage", authorField: "userFBId",
                                           commentClass: "WallImageComment", commentImageField: "imageObjectId")

    init() throws {
        let dir = NSTemporaryDirectory() + "pw-feed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        sqlite = try SQLiteAdapter(path: dir + "/db.sqlite", feedProjection: Self.projection)
        url = try TestPostgres.freshDatabase()
        postgres = try PostgresAdapter(url: url, maxConnections: 4, feedProjection: Self.projection)
        var images: [StoredObject] = [], comments: [StoredObject] = []
        for i in 0..<400 {
            // 40 authors; some timestamps repeat so the objectId tie-break matters.
            let t = ParseDate(millisecondsSince1970: 1_700_000_000_000 + Int64(i / 2) * 1000)
            images.append(StoredObject(className: "WallImage", objectId: String(format: "img%07d", i), createdAt: t, updatedAt: t,
                                       fields: ["userFBId": .string("u\(i % 40)")], acl: nil))
            for j in 0..<(i % 4) {
                let ct = ParseDate(millisecondsSince1970: t.millisecondsSince1970 + Int64(j) * 10)
                comments.append(StoredObject(className: "WallImageComment", objectId: String(format: "c%05d%04d", i, j), createdAt: ct, updatedAt: ct,
                                             fields: ["imageObjectId": .string(String(format: "img%07d", i)), "comment": .string("c\(j)")], acl: nil))
            }
        }
        for db in [sqlite as any ObjectStore, postgres] {
            try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
            try db.ensureClass("WallImageComment", fields: ["imageObjectId": .string, "comment": .string], indexedFields: ["imageObjectId"], uniqueFields: [])
        }
        try sqlite.bulkInsert(images)
        try sqlite.bulkInsert(comments)
        try postgres.bulkInsert(images)
        try postgres.bulkInsert(comments)
        try postgres.bulkInsertFriendships([("u1", "u2"), ("u2", "u3"), ("u1", "u2")])
    }

    @Test(arguments: [FeedStrategy.perAuthor, .globalScan])
    func keysMatchSQLite(_ strategy: FeedStrategy) throws {
        let authors = ["u1", "u7", "u8", "u39", "nobody"]
        var cursor: FeedCursor?
        for _ in 0..<6 {
            let a = try sqlite.feedKeys(authors: authors, viewer: "u1", before: cursor, limit: 7, strategy: strategy, scanLimit: 100_000)
            let b = try postgres.feedKeys(authors: authors, viewer: "u1", before: cursor, limit: 7, strategy: strategy, scanLimit: 100_000)
            #expect(b.keys == a.keys)
            #expect(b.scannedToEnd == a.scannedToEnd)
            cursor = a.keys.last
        }
        #expect(cursor != nil)
    }

    /// The time scan over the friend table (`authors` nil) runs the form the viewer's friend count
    /// calls for, and the other form never starts: the hashed friend list below
    /// `friendProbeThreshold` friends, one friend-table probe per scanned row from it. Either way it
    /// gives SQLite's keys, page after page.
    @Test func timeScanFormFollowsTheFriendCount() throws {
        // 40 authors: 33 friends and more probe a 7-row page (√(4 × 7 × 40) = 33.4).
        let admin = try PostgresConnection(conninfo: url)
        try admin.execute("ANALYZE \"c_WallImage\"")
        #expect(postgres.feedStatistics()?.authors == 40)
        #expect(PostgresAdapter.friendProbeThreshold(limit: 7, authors: 40) == 33)
        #expect(PostgresAdapter.friendProbeThreshold(limit: 20, authors: 92_968) == 2_727)
        #expect(PostgresAdapter.distinctValues(nDistinct: -0.25, rows: 1_000_000) == 250_000, "a fraction of the rows")
        #expect(PostgresAdapter.distinctValues(nDistinct: 0, rows: 10) == nil && PostgresAdapter.distinctValues(nDistinct: nil, rows: 10) == nil)
        let many = (0..<39).map { ("many", "u\($0)") }  // 39 friends
        let few = [("u1", "u2"), ("u2", "u3")]  // u1: 1 friend
        try sqlite.bulkInsertFriendships(many + few)
        try postgres.bulkInsertFriendships(many)
        try admin.execute("SET plan_cache_mode = force_generic_plan")  // as a feed page runs it (`readingOneSnapshot`)
        for (viewer, probes) in [("many", true), ("u1", false)] {
            var cursor: FeedCursor?
            var pages = 0
            for page in 0..<8 {
                let a = try sqlite.feedKeys(authors: nil, viewer: viewer, before: cursor, limit: 7, strategy: .globalScan, scanLimit: 100_000)
                let b = try postgres.feedKeys(authors: nil, viewer: viewer, before: cursor, limit: 7, strategy: .globalScan, scanLimit: 100_000)
                #expect(b.keys == a.keys, "\(viewer), page \(page)")
                let (sql, values) = postgres.feedKeysStatement(authors: nil, viewer: viewer, before: cursor, limit: 7,
                                                               strategy: .globalScan, scanLimit: 100_000)
                let plan = try admin.query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + sql, values).rows
                    .compactMap { $0[0] }.joined(separator: "\n")
                // Each form's filter and the line under it: executed or not.
                let lines = plan.components(separatedBy: "\n")
                func ran(_ filter: String) -> Bool? {
                    guard let i = lines.firstIndex(where: { $0.contains(filter) }), i > 0 else { return nil }
                    return !lines[i - 1].contains("never executed")
                }
                #expect(ran("OR (hashed SubPlan") == !probes, "\(viewer):\n\(plan)")
                #expect(ran("OR (SubPlan") == probes, "\(viewer):\n\(plan)")
                guard let last = a.keys.last else { break }
                cursor = last
                pages += 1
            }
            #expect(pages == (probes ? 8 : 3), "\(viewer): 400 images by 40 authors, or 20 by u1 and u2")
        }
    }

    @Test func commentsMatchSQLite() throws {
        let ids = ["img0000003", "img0000002", "img0000001", "img0000000", "img0000399", "missing"]
        let a = try sqlite.comments(ofImages: ids, perImage: 2, readers: nil)
        let b = try postgres.comments(ofImages: ids, perImage: 2, readers: nil)
        #expect(Set(a.keys) == Set(b.keys))
        for id in ids {
            #expect(b[id]?.count == a[id]?.count, "\(id)")
            #expect(b[id]?.latest.map(\.objectId) == a[id]?.latest.map(\.objectId), "\(id)")
        }
        #expect(b["img0000003"]?.count == 3)
        #expect(b["img0000003"]?.latest.map(\.objectId) == ["c000030002", "c000030001"])
    }

    @Test func commentsTakeOneRoundTrip() throws {
        let ids = ["img0000003", "img0000002", "img0000001", "img0000000", "missing"]
        _ = try postgres.comments(ofImages: ids, perImage: 3, readers: nil)  // prepares the statement on the connection
        let before = postgres.pool.roundTrips
        let b = try postgres.comments(ofImages: ids, perImage: 3, readers: nil)
        #expect(postgres.pool.roundTrips - before == 1, "counts and latest comments in one statement")
        #expect(b["img0000003"]?.latest.map(\.objectId) == ["c000030002", "c000030001", "c000030000"])
        #expect(b["img0000000"]?.count == 0 && b["missing"]?.count == 0)
    }

    @Test func objectIdListsShareOneStatement() throws {
        func find(_ ids: [String]) throws -> [String] {
            try postgres.find(StoredQuery(className: "WallImage", predicate: .inList("objectId", ids.map { .string($0) }, negated: false),
                                          readers: nil)).map(\.objectId).sorted()
        }
        #expect(try find(["img0000001", "img0000002"]) == ["img0000001", "img0000002"])
        let before = postgres.pool.roundTrips
        #expect(try find(["img0000003", "img0000004", "img0000005", "nope"]) == ["img0000003", "img0000004", "img0000005"])
        #expect(postgres.pool.roundTrips - before == 1, "a longer list runs the statement prepared for the shorter one")
    }

    /// A feed page's reads see one snapshot, on one connection, and its prepared statements keep
    /// generic plans (not planned again per page); a write made meanwhile commits on its own.
    @Test func pageReadsOneSnapshotWithReusedPlans() throws {
        let t = ParseDate(millisecondsSince1970: 1_800_000_000_000)
        let comment = StoredObject(className: "WallImageComment", objectId: "cnew", createdAt: t, updatedAt: t,
                                   fields: ["imageObjectId": .string("img0000001"), "comment": .string("new")], acl: nil)
        let genericPlans = try postgres.readingOneSnapshot { () throws(ParseError) -> Int in
            let first = try postgres.comments(ofImages: ["img0000001"], perImage: 3, readers: nil)["img0000001"]?.count
            #expect(first == 1)
            try postgres.insert(comment)  // on a connection of its own, committed at once
            for _ in 0..<8 {
                #expect(try postgres.comments(ofImages: ["img0000001"], perImage: 3, readers: nil)["img0000001"]?.count == first, "the page's snapshot")
            }
            return try postgres.guarded {
                try postgres.pool.withConnection { conn in
                    Int(try conn.query("SELECT coalesce(sum(generic_plans), 0) FROM pg_prepared_statements WHERE statement LIKE '%\\_FEED\\_COMMENTS%' AND statement NOT LIKE '%pg\\_prepared\\_statements%'").first?[0] ?? "0") ?? 0
                }
            }
        }
        #expect(genericPlans > 0, "the comments statement ran on a generic plan")
        #expect(try postgres.comments(ofImages: ["img0000001"], perImage: 3, readers: nil)["img0000001"]?.count == 2, "seen after the page")
        // The page's COMMIT was not waited for: the connection's next command read its answer.
        #expect(try postgres.pool.withConnection { $0.deferredAnswers } == 1)
    }

    @Test func bulkLoadedRowsAndFriendships() throws {
        #expect(try postgres.count(StoredQuery(className: "WallImage", readers: nil)) == 400)
        #expect(try postgres.count(StoredQuery(className: "WallImageComment", readers: nil)) == 600)
        #expect(try postgres.friends(of: "u2").sorted() == ["u1", "u3"])
        #expect(try postgres.friendsSyncedAt("u3") != nil)
    }

    /// A bulk load ends with every page of the image table all-visible (the feed's index-only scans
    /// then skip the heap), even when a snapshot older than its last rows, as an autovacuum
    /// `ANALYZE`'s can be, was still open as it finished: `finishBulkLoad` vacuums again once it ends.
    @Test func bulkLoadEndsWithEveryPageAllVisible() throws {
        let holder = try PostgresConnection(conninfo: url)
        try holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        _ = try holder.query("SELECT 1")  // the snapshot, taken before the rows below
        let t = ParseDate(millisecondsSince1970: 1_800_000_000_000)
        try postgres.bulkInsert((0..<3000).map {
            StoredObject(className: "WallImage", objectId: String(format: "late%06d", $0), createdAt: t, updatedAt: t,
                         fields: ["userFBId": .string("u\($0 % 40)")], acl: nil)
        })
        try holder.sendWithoutWaiting("SELECT pg_sleep(1.5); COMMIT")  // open 1.5 s more, without waiting here
        try postgres.finishBulkLoad()
        let admin = try PostgresConnection(conninfo: url)
        let row = try admin.query("SELECT relallvisible, relpages FROM pg_class WHERE oid = '\"c_WallImage\"'::regclass").first
        #expect(row?[1].flatMap { Int($0) }.map { $0 > 30 } == true, "the table spans pages: \(String(describing: row))")
        #expect(row?[0] == row?[1], "all-visible pages, pages")
    }

    @Test func planners() throws {
        let conn = try PostgresConnection(conninfo: url)
        try conn.execute("ANALYZE \"c_WallImage\"; SET plan_cache_mode = force_custom_plan")
        // The global scan walks the createdAt index and stops early: a dense author set fills the page after a few rows.
        let authors = (0..<40).map { "u\($0)" }
        let plan = try conn.query("""
            EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT "createdAt", "objectId" FROM (
                SELECT "createdAt", "objectId", (doc->>'userFBId') AS author FROM "c_WallImage" WHERE TRUE
                ORDER BY "createdAt" DESC, "objectId" DESC LIMIT $1::bigint) s
            WHERE author = ANY($2::text[]) ORDER BY "createdAt" DESC, "objectId" DESC LIMIT $3::bigint
            """, ["50000", "{" + authors.joined(separator: ",") + "}", "10"]).rows.compactMap { $0[0] }.joined(separator: "\n")
        #expect(plan.contains("i_WallImage_createdAt"), "\(plan)")
        #expect(!plan.contains("Sort"), "no sort above the index walk:\n\(plan)")
        #expect(plan.contains("(actual rows=10 loops=1)"), "\(plan)")
    }
}
