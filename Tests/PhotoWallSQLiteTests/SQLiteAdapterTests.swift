import Foundation
import Testing
import PhotoWallCore
import PhotoWallStorage
import PhotoWallSQL
@testable import PhotoWallSQLite
import PhotoWallTesting

/// What only the SQLite adapter does (its index plans and its migrations), on a real database file
/// in a temporary folder. What every adapter does is in the contract suites of PhotoWallStorageTests.
@Suite struct SQLiteAdapterTests {
    let dir: String
    let db: SQLiteAdapter

    init() throws {
        dir = NSTemporaryDirectory() + "pw-sqlite-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        db = try SQLiteAdapter(path: dir + "/db.sqlite", feedProjection: Self.projection)
    }

    static let projection = FeedProjection(imageClass: "WallImage", authorField: "userFBId",
                                           commentClass: "WallImageComment", commentImageField: "imageObjectId")

    func object(_ cls: String, _ fields: [String: JSON], acl: ACL? = nil, id: String = ParseIdentifier.alphanumeric()) -> StoredObject {
        let now = ParseDate.now()
        return StoredObject(className: cls, objectId: id, createdAt: now, updatedAt: now, fields: fields, acl: acl)
    }

    @Test func usesExpressionIndexForInQueries() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        // EXPLAIN QUERY PLAN through the sqlite3 shell on the same file.
        let plan = try runProcess("/usr/bin/sqlite3", [dir + "/db.sqlite", "EXPLAIN QUERY PLAN SELECT objectId FROM \"c_WallImage\" WHERE json_extract(doc,'$.userFBId') IN ('a','b') ORDER BY createdAt DESC LIMIT 20"]).output
        #expect(plan.contains("i_WallImage_userFBId"), "\(plan)")
    }

    /// The plans of a friends-only read scope (`Predicate.friendOf`) as the compiler writes it, on the
    /// wall's indexes: a page of a viewer's wall selects from the viewer's friend rows and drives the
    /// `userFBId` index (no scan of the whole class in `createdAt` order, which for a viewer whose
    /// friends post little reads every row); a read by objectId probes one friendship by primary key.
    @Test func friendScopesDriveTheIndexOrProbeOneFriendship() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        let schema = try #require(try db.schema(of: "WallImage"))
        let scope = FriendScope(viewer: "v") { () throws(ParseError) -> [String] in [] }
        func plan(_ predicate: PhotoWallStorage.Predicate, order: [SortKey] = [], limit: Int? = nil) throws -> String {
            let q = StoredQuery(className: "WallImage", predicate: predicate, order: order, limit: limit, readers: ["*", "u1"])
            let compiled = try SQLiteQueryCompiler(schema: schema).select(q, columns: SQLiteAdapter.columns)
            return try db.db.read { conn in
                try conn.query("EXPLAIN QUERY PLAN " + compiled.sql, compiled.args).compactMap { $0.last?.text }.joined(separator: "\n")
            }
        }
        let newest = [SortKey(path: "createdAt", descending: true)]
        for (name, p) in [("page", try plan(.friendOf("userFBId", scope), order: newest, limit: 100)),
                          ("unordered", try plan(.friendOf("userFBId", scope), limit: 100)),
                          ("count", try plan(.friendOf("userFBId", scope)))] {
            #expect(p.contains("SEARCH c_WallImage USING INDEX i_WallImage_userFBId"), "\(name): \(p)")
            #expect(p.contains("SEARCH _FRIENDS USING PRIMARY KEY (userId=?)"), "\(name): \(p)")
        }
        let one = try plan(.and([.compare("objectId", .eq, .string("x")), .friendOf("userFBId", scope)]))
        #expect(one.contains("SEARCH c_WallImage USING INDEX sqlite_autoindex_c_WallImage_1 (objectId=?)"), "\(one)")
        #expect(one.contains("SEARCH _FRIENDS USING PRIMARY KEY (userId=? AND friendId=?)"), "\(one)")
    }

    /// A field index is `(field, createdAt, objectId)`: the order a query ordered on `createdAt` is
    /// given (with its `objectId` tiebreak), so a page of one value newest first, and the feed's latest
    /// comments of an image, stream from the index and stop at the limit. Before, with `(field,
    /// createdAt)`, SQLite read every matching row, whole, into a temporary B-tree to sort the tiebreak
    /// ("USE TEMP B-TREE FOR RIGHT PART OF ORDER BY"). An index of that earlier shape is made again
    /// by the next `ensureClass`.
    @Test func fieldIndexesServeNewestFirstWithoutASort() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: [], uniqueFields: [])
        try db.ensureClass("WallImageComment", fields: ["imageObjectId": .string], indexedFields: [], uniqueFields: [])
        try db.db.write { conn in
            try conn.execute("""
                CREATE INDEX "i_WallImage_userFBId" ON "c_WallImage"(json_extract(doc,'$.userFBId'), createdAt);
                CREATE INDEX "i_WallImageComment_imageObjectId" ON "c_WallImageComment"(json_extract(doc,'$.imageObjectId'), createdAt);
                """)
        }
        let t = ParseDate(millisecondsSince1970: 1_700_000_000_000)
        try db.bulkInsert((0..<6).map { i in
            StoredObject(className: "WallImage", objectId: "img\(i)", createdAt: t, updatedAt: t, fields: ["userFBId": .string(i < 5 ? "q" : "other")], acl: nil)
        })
        func plan(_ className: String, _ field: String) throws -> String {
            let schema = try #require(try db.schema(of: className))
            let q = StoredQuery(className: className, predicate: .compare(field, .eq, .string("q")),
                                order: [SortKey(path: "createdAt", descending: true)], limit: 3, readers: ["*", "u1"])
            let compiled = try SQLiteQueryCompiler(schema: schema).select(q, columns: SQLiteAdapter.columns)
            // On a connection of its own: a connection's EXPLAIN runs no transaction, so it plans with
            // the schema the connection read last, from before `ensureClass` changed it.
            return try SQLiteDatabase(path: dir + "/db.sqlite").read { conn in
                try conn.query("EXPLAIN QUERY PLAN " + compiled.sql, compiled.args).compactMap { $0.last?.text }.joined(separator: "\n")
            }
        }
        let before = try plan("WallImage", "userFBId")
        #expect(before.contains("TEMP B-TREE"), "the earlier index sorts: \(before)")
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        try db.ensureClass("WallImageComment", fields: ["imageObjectId": .string], indexedFields: ["imageObjectId"], uniqueFields: [])
        for (className, field) in [("WallImage", "userFBId"), ("WallImageComment", "imageObjectId")] {
            let p = try plan(className, field)
            #expect(p.contains("SEARCH c_\(className) USING INDEX i_\(className)_\(field)") && !p.contains("TEMP B-TREE"), "\(p)")
        }
        // The same createdAt throughout: the page is the objectId tiebreak's order.
        let page = try db.find(StoredQuery(className: "WallImage", predicate: .compare("userFBId", .eq, .string("q")),
                                           order: [SortKey(path: "createdAt", descending: true)], limit: 3, readers: nil))
        #expect(page.map(\.objectId) == ["img4", "img3", "img2"])
    }

    /// Reader connections map the file (`SQLiteDatabase.readerMmapBytes`, capped by SQLite's build:
    /// 2 GiB on Debian) and read the committed rows through the mapping.
    @Test func readersMapTheDatabaseFile() throws {
        let raw = try SQLiteDatabase(path: dir + "/db.sqlite")
        try raw.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (42);") }
        let (mapped, x) = try raw.read { conn in
            (try conn.query("PRAGMA mmap_size").first?.first?.integer ?? 0, try conn.query("SELECT x FROM t").first?.first?.integer)
        }
        #expect(mapped == 0x7fff0000)
        #expect(x == 42)
    }

    /// `$in` lists, as long as a wall's read scope makes them (a value per friend: thousands): each value
    /// is bound as its path compares (`createdAt` as milliseconds from an ISO string, a Pointer field
    /// by its objectId, a dotted path as the JSON value inside the field), however long the list.
    @Test func inListsBindEveryValueAsTheirPathCompares() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string, "user": .pointer("_User"), "meta": .object],
                           indexedFields: ["userFBId"], uniqueFields: [])
        let objects = (1...3).map { i in
            StoredObject(className: "WallImage", objectId: "img\(i)", createdAt: ParseDate(millisecondsSince1970: 1_700_000_000_000 + Int64(i) * 1000),
                         updatedAt: ParseDate(millisecondsSince1970: 1_700_000_000_000), fields: [
                            "userFBId": .string("u\(i)"), "meta": ["k": .string("x\(i)")],
                            "user": ["__type": "Pointer", "className": "_User", "objectId": .string("user\(i)")]], acl: nil)
        }
        for o in objects { try db.insert(o) }
        func ids(_ p: PhotoWallStorage.Predicate) throws -> [String] {
            try db.find(StoredQuery(className: "WallImage", predicate: p, order: [SortKey(path: "objectId", descending: false)], readers: nil)).map(\.objectId)
        }
        let many = (0..<5000).map { QueryValue.string("f\($0)") }
        #expect(try ids(.inList("userFBId", many + [.string("u1"), .string("u3")], negated: false)) == ["img1", "img3"])
        #expect(try ids(.inList("userFBId", many + [.string("u2")], negated: true)) == ["img1", "img3"])
        #expect(try ids(.inList("createdAt", [.string("f"), .string(objects[1].createdAt.iso)], negated: false)) == ["img2"])
        #expect(try ids(.inList("createdAt", [.date(objects[2].createdAt)], negated: false)) == ["img3"])
        #expect(try ids(.inList("user", [.pointer(className: "_User", objectId: "user2")], negated: false)) == ["img2"])
        #expect(try ids(.inList("meta.k", [.string("x1"), .string("x3"), .null], negated: false)) == ["img1", "img3"])
    }

    @Test func feedThresholdGrowsWithTheSquareRootOfTheImages() throws {
        #expect(SQLiteAdapter.feedThreshold(images: 0) == 50)
        #expect(SQLiteAdapter.feedThreshold(images: 1_000_000) == 547)
        #expect(SQLiteAdapter.feedThreshold(images: 4_000_000) == 1095)
        #expect(db.suggestedFeedThreshold() == 50, "no image table yet")
        try db.bulkInsert((0..<60_000).map { object("WallImage", ["userFBId": .string("u\($0 % 100)")]) })
        #expect(db.suggestedFeedThreshold() == 50, "read at most once a minute")
        let reopened = try SQLiteAdapter(path: dir + "/db.sqlite", feedProjection: Self.projection)
        #expect(reopened.suggestedFeedThreshold() == 134, "from the image table's last rowid")
    }

    /// The reads of one feed page (`readingOneSnapshot`) see one committed state, whichever store
    /// method runs them on this thread: a write committed in between shows only after the page.
    @Test func aFeedPageReadsOneSnapshot() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        try db.insert(object("WallImage", ["userFBId": "a"]))
        let all = StoredQuery(className: "WallImage", predicate: .all, readers: nil)
        let (first, second) = try db.readingOneSnapshot { () throws(ParseError) -> (Int, Int) in
            let first = try db.find(all).count
            try db.insert(object("WallImage", ["userFBId": "a"]))  // committed by the writer meanwhile
            let keys = try db.feedKeys(authors: ["a"], viewer: "a", before: nil, limit: 10, strategy: .perAuthor, scanLimit: 100).keys
            #expect(keys.count == first, "the feed's own queries read the same snapshot")
            return (first, try db.find(all).count)
        }
        #expect(first == 1 && second == 1, "inside the page: the state it began with")
        #expect(try db.find(all).count == 2, "after the page: the new row")
    }

    /// The friend feed's per-author form on the friend table gives the brute-force answer page
    /// after page, with a prolific author among the friends and without.
    @Test func aProlificAuthorsFeedIsTheBruteForceAnswer() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        var all: [(FeedCursor, String)] = []
        var images: [StoredObject] = []
        for i in 0..<6_000 {
            // "p" posts 5,000 times, the others rarely.
            let author = i % 6 == 0 ? ["v", "f", "x"][(i / 6) % 3] : "p"
            let at = ParseDate(millisecondsSince1970: 1_700_000_000_000 + Int64(i / 3) * 1000)
            let id = "id" + String(100_000_000 + i).dropFirst()
            images.append(StoredObject(className: "WallImage", objectId: id, createdAt: at, updatedAt: at, fields: ["userFBId": .string(author)], acl: nil))
            all.append((FeedCursor(createdAt: at.millisecondsSince1970, objectId: id), author))
        }
        try db.bulkInsert(images)
        for friends in [["f"], ["f", "p"]] {
            try db.bulkInsertFriendships(friends.map { ("v", $0) })
            let audience = ["v"] + friends
            let expected = all.filter { audience.contains($0.1) }.map(\.0).sorted(by: >)
            var seen: [FeedCursor] = []
            var cursor: FeedCursor?
            while seen.count < 300 {
                let page = try db.feedKeys(authors: nil, viewer: "v", before: cursor, limit: 20, strategy: .perAuthor, scanLimit: 100_000)
                seen += page.keys
                guard page.keys.count == 20 else { break }
                cursor = page.keys.last
            }
            #expect(seen == Array(expected.prefix(seen.count)) && seen.count == min(300, expected.count), "friends \(friends)")
        }
    }

    /// A bulk load sets the secondary indexes aside; one that dies before `finishBulkLoad` is
    /// finished when the database is next opened (indexes and comment counts back).
    @Test func anInterruptedBulkLoadIsFinishedAtTheNextOpen() throws {
        try db.ensureClass("WallImageComment", fields: ["imageObjectId": .string], indexedFields: ["imageObjectId"], uniqueFields: [])
        func names() throws -> [String] {
            try SQLiteDatabase(path: dir + "/db.sqlite").read { conn in
                try conn.query("SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = 'c_WallImageComment' ORDER BY 1").compactMap { $0[0].text }
            }
        }
        let before = try names()
        #expect(before.contains("i_WallImageComment_imageObjectId") && before.contains("t_WallImageComment_feedCount_insert"))
        try db.beginBulkLoad()
        try db.bulkInsert((0..<5).map { object("WallImageComment", ["imageObjectId": "img1"], id: "c\($0)") })
        #expect(try names() == ["sqlite_autoindex_c_WallImageComment_1"], "only the primary key stays during the load")
        let reopened = try SQLiteAdapter(path: dir + "/db.sqlite", feedProjection: Self.projection)
        #expect(try names() == before)
        #expect(try reopened.comments(ofImages: ["img1"], perImage: 3, readers: nil)["img1"]?.count == 5)
    }

    /// A finished bulk load leaves its pages in the database file, not in the WAL (where readers
    /// would read them with `pread` instead of through their map of the file).
    @Test func aFinishedBulkLoadLeavesTheWALEmpty() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        try db.beginBulkLoad()
        try db.bulkInsert((0..<2_000).map { object("WallImage", ["userFBId": .string("u\($0 % 50)")]) })
        try db.finishBulkLoad()
        let wal = try FileManager.default.attributesOfItem(atPath: dir + "/db.sqlite-wal")[.size] as? Int
        #expect(wal == 0)
        #expect(try db.feedKeys(authors: ["u1"], viewer: "u1", before: nil, limit: 100, strategy: .perAuthor, scanLimit: 100).keys.count == 40)
    }

    @Test func uploadColumnsAreAddedToAnOlderDatabase() throws {
        // A database from before the lease columns (migration 5 and later undone) gains them and the
        // later columns (the file record's original name, declared type, owner and claim), keeping its rows.
        let path = dir + "/old.sqlite"
        let file = FileRecord(name: "abc_x.jpg", contentType: "image/jpeg", byteCount: 3, sha256: "00", createdAt: ParseDate(millisecondsSince1970: 5))
        do {
            let current = try SQLiteAdapter(path: path)
            try current.insertUpload(UploadRecord(id: "0123456789abcdef0123456789abcdef", owner: "u", length: 5, offset: 2, fileName: "a.jpg",
                                                  contentType: "", metadata: [:], createdAt: .now(), expiresAt: .now()))
            try current.insertFile(file)
        }
        do {
            let raw = try SQLiteDatabase(path: path)
            try raw.write { conn in
                try conn.execute("""
                    ALTER TABLE _UPLOADS DROP COLUMN partState; ALTER TABLE _UPLOADS DROP COLUMN digestState;
                    ALTER TABLE _UPLOADS DROP COLUMN writer; ALTER TABLE _UPLOADS DROP COLUMN writerSeenAt;
                    ALTER TABLE _FILES DROP COLUMN originalName; ALTER TABLE _FILES DROP COLUMN declaredType;
                    DROP INDEX i_FILES_owner_sha256; DROP INDEX i_FILES_owner; DROP INDEX i_FILES_unclaimed;
                    ALTER TABLE _FILES DROP COLUMN owner; ALTER TABLE _FILES DROP COLUMN unclaimed;
                    ALTER TABLE _FEED RENAME COLUMN author TO userFBId; ALTER TABLE _FEED RENAME TO _WALL_FEED;
                    DROP INDEX i_FEED_author; DROP INDEX i_FEED_time;
                    CREATE INDEX i_WALL_FEED_author ON _WALL_FEED(userFBId, createdAt, objectId);
                    CREATE INDEX i_WALL_FEED_time ON _WALL_FEED(createdAt, objectId, userFBId);
                    ALTER TABLE _FRIENDS RENAME COLUMN userId TO userFBId; ALTER TABLE _FRIENDS RENAME COLUMN friendId TO friendFBId;
                    ALTER TABLE _FRIEND_SYNC RENAME COLUMN userId TO userFBId;
                    PRAGMA user_version = 4;
                    """)
            }
        }
        let db = try SQLiteAdapter(path: path)
        let u = try #require(try db.upload(id: "0123456789abcdef0123456789abcdef"))
        #expect(u.offset == 2 && u.partState == "" && u.digestState == nil && u.writer == nil)
        #expect(try db.file(named: "abc_x.jpg") == file)
        let named = FileRecord(name: "def_y.jpg", contentType: "image/gif", byteCount: 1, sha256: "01", createdAt: ParseDate(millisecondsSince1970: 6),
                               originalName: "y (1) 灯泡.jpg", declaredType: "image/jpeg", owner: "u1", unclaimed: true)
        try db.insertFile(named)
        #expect(try db.file(named: "def_y.jpg") == named)
        // The (owner, sha256) index the duplicate check probes came with the migrations.
        #expect(try db.files(ownedBy: "u1", sha256: ["01", "02"]) == [named])
        #expect(try db.files(ownedBy: "u2", sha256: ["01"]) == [])
    }
}
