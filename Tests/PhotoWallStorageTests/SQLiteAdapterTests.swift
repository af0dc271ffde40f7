import Foundation
import Testing
import PhotoWallCore
import PhotoWallStorage
import PhotoWallSQL
import PhotoWallTesting

/// The SQLite adapter on a real database file in a temporary folder.
@Suite struct SQLiteAdapterTests {
    let dir: String
    let db: SQLiteAdapter

    init() throws {
        dir = NSTemporaryDirectory() + "pw-sqlite-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        db = try SQLiteAdapter(path: dir + "/db.sqlite")
    }

    func object(_ cls: String, _ fields: [String: JSON], acl: ACL? = nil, id: String = ParseIdentifier.alphanumeric()) -> StoredObject {
        let now = ParseDate.now()
        return StoredObject(className: cls, objectId: id, createdAt: now, updatedAt: now, fields: fields, acl: acl)
    }

    @Test func schemaMismatchIs111AndRollsBack() throws {
        try db.insert(object("T", ["a": "x"]))
        #expect(try db.schema(of: "T")?.fields["a"] == .string)
        #expect(throws: ParseError.self) { try db.insert(object("T", ["a": 1, "b": true])) }
        do { try db.insert(object("T", ["a": 1, "b": true])) } catch {
            #expect(error.code == .incorrectType)
            #expect(error.message == "schema mismatch for T.a; expected String but got Number")
        }
        // "b" was not added by the failed insert.
        #expect(try db.schema(of: "T")?.fields["b"] == nil)
        try db.insert(object("T", ["b": "now a string"]))
        #expect(try db.schema(of: "T")?.fields["b"] == .string)
    }

    @Test func uniqueIndexIs137() throws {
        try db.ensureClass("U", fields: [:], indexedFields: [], uniqueFields: ["name"])
        try db.insert(object("U", ["name": "a"]))
        do {
            try db.insert(object("U", ["name": "a"]))
            Issue.record("expected a duplicate error")
        } catch {
            #expect(error.code == .duplicateValue)
        }
        #expect(try db.count(StoredQuery(className: "U", readers: nil)) == 1)
    }

    @Test func permissionsFilterReadsAndWrites() throws {
        let priv = object("P", ["n": 1], acl: .privateTo("alice"), id: "privObject")
        let pub = object("P", ["n": 2], acl: nil, id: "pubObject1")
        try db.insert(priv)
        try db.insert(pub)
        let asBob = try db.find(StoredQuery(className: "P", order: [SortKey(path: "n", descending: false)], readers: ["*", "bob"]))
        #expect(asBob.map(\.objectId) == ["pubObject1"])
        let asAlice = try db.find(StoredQuery(className: "P", order: [SortKey(path: "n", descending: false)], readers: ["*", "alice"]))
        #expect(asAlice.map(\.objectId) == ["privObject", "pubObject1"])
        #expect(throws: ParseError.self) { try db.delete(className: "P", objectId: "privObject", writers: ["*", "bob"]) }
        try db.delete(className: "P", objectId: "privObject", writers: ["*", "alice"])
        #expect(try db.count(StoredQuery(className: "P", readers: nil)) == 1)
    }

    @Test func updateIsAtomicUnderConcurrency() async throws {
        try db.insert(object("C", ["n": 0], id: "counter001"))
        await withTaskGroup(of: Void.self) { g in
            for _ in 0..<8 {
                g.addTask {
                    for _ in 0..<50 {
                        _ = try? db.update(className: "C", objectId: "counter001", writers: nil) { (o: inout StoredObject) throws(ParseError) in
                            o.fields["n"] = .number((o.fields["n"]?.doubleValue ?? 0) + 1)
                        }
                    }
                }
            }
        }
        let o = try #require(try db.find(StoredQuery(className: "C", readers: nil)).first)
        #expect(o.fields["n"] == 400)
    }

    @Test func usesExpressionIndexForInQueries() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        // EXPLAIN QUERY PLAN through the sqlite3 shell on the same file.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [dir + "/db.sqlite", "EXPLAIN QUERY PLAN SELECT objectId FROM \"c_WallImage\" WHERE json_extract(doc,'$.userFBId') IN ('a','b') ORDER BY createdAt DESC LIMIT 20"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let plan = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(plan.contains("i_WallImage_userFBId"), "\(plan)")
    }

    @Test func filesMetadata() throws {
        let r = FileRecord(name: "abc_x.jpg", contentType: "image/jpeg", byteCount: 3, sha256: "00", createdAt: ParseDate(millisecondsSince1970: 5))
        try db.insertFile(r)
        #expect(try db.file(named: "abc_x.jpg") == r)
        #expect(try db.deleteFile(named: "abc_x.jpg"))
        #expect(try db.file(named: "abc_x.jpg") == nil)
        #expect(try !db.deleteFile(named: "abc_x.jpg"))
    }

    @Test func uploadRecordsAndTheirLease() throws {
        try UploadRecordContract.run(db)
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

@Suite struct FileSystemStoreTests {
    @Test func contract() throws {
        let dir = NSTemporaryDirectory() + "pw-fs-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileStoreContract.run(try FileSystemStore(root: dir), scratch: dir)
    }

    @Test func commitMakesVisibleAbortLeavesNothing() throws {
        let dir = NSTemporaryDirectory() + "pw-fs-\(UUID().uuidString)"
        let store = try FileSystemStore(root: dir)
        let w = try store.makeWriter(for: "0123abcd_photo.jpg")
        try [UInt8](repeating: 7, count: 1000).withUnsafeBytes { try w.write($0) }
        #expect(try store.location(of: "0123abcd_photo.jpg") == nil, "not visible before commit")
        try w.commit()
        #expect(try store.location(of: "0123abcd_photo.jpg")?.byteCount == 1000)
        #expect(try store.location(of: "0123abcd_photo.jpg")?.path.hasSuffix("/files/01/23/0123abcd_photo.jpg") == true)
        #expect(try store.read("0123abcd_photo.jpg") == [UInt8](repeating: 7, count: 1000))

        let a = try store.makeWriter(for: "ffff_gone.jpg")
        try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try a.write($0) }
        a.abort()
        #expect(try store.location(of: "ffff_gone.jpg") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/tmp").isEmpty)
        #expect(try store.delete("0123abcd_photo.jpg"))
        #expect(try !store.delete("0123abcd_photo.jpg"))
    }

    @Test func staleTemporariesAreRemovedAtOpen() throws {
        let dir = NSTemporaryDirectory() + "pw-fs-\(UUID().uuidString)"
        _ = try FileSystemStore(root: dir)
        FileManager.default.createFile(atPath: dir + "/tmp/crashed.part", contents: Data([1, 2, 3]))
        _ = try FileSystemStore(root: dir)
        #expect(!FileManager.default.fileExists(atPath: dir + "/tmp/crashed.part"))
    }
}

/// The feed queries: both strategies give exactly the brute-force answer, page after page.
@Suite struct FeedStoreTests {
    @Test func strategiesAgreeWithBruteForce() throws {
        let dir = NSTemporaryDirectory() + "pw-feed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let db = try SQLiteAdapter(path: dir + "/db.sqlite")
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        var rng = SplitMix64(seed: 42)
        var all: [(FeedCursor, String)] = []
        for i in 0..<400 {
            let author = "a\(rng.next() % 25)"
            // Many equal timestamps, so ties on createdAt are broken by objectId.
            let at = ParseDate(millisecondsSince1970: 1_700_000_000_000 + Int64(rng.next() % 60) * 1000)
            let id = String(format: "id%08d", i)
            try db.insert(StoredObject(className: "WallImage", objectId: id, createdAt: at, updatedAt: at, fields: ["userFBId": .string(author)], acl: nil))
            all.append((FeedCursor(createdAt: at.millisecondsSince1970, objectId: id), author))
        }
        let audience = ["a1", "a2", "a3", "a7", "a11", "a24"]
        let expected = all.filter { audience.contains($0.1) }.map(\.0).sorted(by: >)
        for strategy in [FeedStrategy.perAuthor, .globalScan] {
            var seen: [FeedCursor] = []
            var cursor: FeedCursor?
            while true {
                let page = try db.feedKeys(authors: audience, viewerFBId: "a1", before: cursor, limit: 7, strategy: strategy, scanLimit: 100_000)
                #expect(page.scannedToEnd)
                seen += page.keys
                guard page.keys.count == 7 else { break }
                cursor = page.keys.last
            }
            #expect(seen == expected, "\(strategy) pages give every row once, in order")
        }
        // The same with the audience taken from the friend table in SQL (viewer a1 plus friends).
        try db.bulkInsertFriendships(audience.dropFirst().map { ("a1", $0) })
        for strategy in [FeedStrategy.perAuthor, .globalScan] {
            var seen: [FeedCursor] = []
            var cursor: FeedCursor?
            while true {
                let page = try db.feedKeys(authors: nil, viewerFBId: "a1", before: cursor, limit: 9, strategy: strategy, scanLimit: 100_000)
                seen += page.keys
                guard page.keys.count == 9 else { #expect(page.scannedToEnd); break }
                cursor = page.keys.last
            }
            #expect(seen == expected, "\(strategy) with the friend table gives every row once, in order")
        }
        let short = try db.feedKeys(authors: nil, viewerFBId: "a1", before: nil, limit: 50, strategy: .globalScan, scanLimit: 30)
        #expect(!short.scannedToEnd, "a capped walk that didn't fill the page says so")
        // A scan capped below the page's needs says so, and the keys it found are the newest ones.
        let capped = try db.feedKeys(authors: ["a24"], viewerFBId: "a24", before: nil, limit: 30, strategy: .globalScan, scanLimit: 20)
        #expect(!capped.scannedToEnd)
        #expect(capped.keys == Array(all.filter { $0.1 == "a24" }.map(\.0).sorted(by: >).prefix(capped.keys.count)))
    }

    @Test func commentsNewestFirstWithCounts() throws {
        let dir = NSTemporaryDirectory() + "pw-feedc-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let db = try SQLiteAdapter(path: dir + "/db.sqlite")
        for i in 0..<5 {
            let at = ParseDate(millisecondsSince1970: 1_000 + Int64(i))
            try db.insert(StoredObject(className: "WallImageComment", objectId: "c\(i)", createdAt: at, updatedAt: at,
                                       fields: ["imageObjectId": "img1", "comment": .string("n\(i)")], acl: nil))
        }
        let c = try db.comments(ofImages: ["img1", "img2"], perImage: 3)
        #expect(c["img1"]?.count == 5)
        #expect(c["img1"]?.latest.map(\.objectId) == ["c4", "c3", "c2"])
        #expect(c["img2"]?.count == 0)
    }
}
