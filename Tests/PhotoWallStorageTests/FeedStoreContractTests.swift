import Testing
import PhotoWallCore
import PhotoWallStorage

/// The `FeedStore` contract on every adapter: both strategies give exactly the brute-force answer,
/// page after page, with the audience given or joined from the friend graph; a capped scan says
/// so; comments come newest first with counts; the projection follows writes and deletes and
/// covers only its own class.
@Suite struct FeedStoreContractTests {
    @Test(arguments: Backend.allCases)
    func strategiesAgreeWithBruteForce(_ backend: Backend) throws {
        let db = try backend.open().db
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        var rng = SplitMix64(seed: 42)
        var all: [(FeedCursor, String)] = []
        for i in 0..<400 {
            let author = "a\(rng.next() % 25)"
            // Many equal timestamps, so ties on createdAt are broken by objectId.
            let at = ParseDate(millisecondsSince1970: 1_700_000_000_000 + Int64(rng.next() % 60) * 1000)
            let id = "id" + String(100_000_000 + i).dropFirst()
            try db.insert(StoredObject(className: "WallImage", objectId: id, createdAt: at, updatedAt: at, fields: ["userFBId": .string(author)], acl: nil))
            all.append((FeedCursor(createdAt: at.millisecondsSince1970, objectId: id), author))
        }
        let audience = ["a1", "a2", "a3", "a7", "a11", "a24"]
        let expected = all.filter { audience.contains($0.1) }.map(\.0).sorted(by: >)
        for strategy in [FeedStrategy.perAuthor, .globalScan] {
            var seen: [FeedCursor] = []
            var cursor: FeedCursor?
            while true {
                let page = try db.feedKeys(authors: audience, viewer: "a1", before: cursor, limit: 7, strategy: strategy, scanLimit: 100_000)
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
                let page = try db.feedKeys(authors: nil, viewer: "a1", before: cursor, limit: 9, strategy: strategy, scanLimit: 100_000)
                seen += page.keys
                guard page.keys.count == 9 else { #expect(page.scannedToEnd); break }
                cursor = page.keys.last
            }
            #expect(seen == expected, "\(strategy) with the friend table gives every row once, in order")
        }
        let short = try db.feedKeys(authors: nil, viewer: "a1", before: nil, limit: 50, strategy: .globalScan, scanLimit: 30)
        #expect(!short.scannedToEnd, "a capped walk that didn't fill the page says so")
        // A scan capped below the page's needs says so, and the keys it found are the newest ones.
        let capped = try db.feedKeys(authors: ["a24"], viewer: "a24", before: nil, limit: 30, strategy: .globalScan, scanLimit: 20)
        #expect(!capped.scannedToEnd)
        #expect(capped.keys == Array(all.filter { $0.1 == "a24" }.map(\.0).sorted(by: >).prefix(capped.keys.count)))
    }

    @Test(arguments: Backend.allCases)
    func scanCapReportsAnIncompletePage(_ backend: Backend) throws {
        let db = try backend.open().db
        try db.ensureClass("WallImage", fields: ["userFBId": .string], indexedFields: ["userFBId"], uniqueFields: [])
        // 40 authors; u5 posts every 40th image, so 30 index entries hold fewer than 3 of its posts.
        try db.bulkInsert((0..<400).map { i in
            let t = ParseDate(millisecondsSince1970: 1_700_000_000_000 + Int64(i / 2) * 1000)
            return StoredObject(className: "WallImage", objectId: "img" + String(10_000_000 + i).dropFirst(), createdAt: t, updatedAt: t,
                                fields: ["userFBId": .string("u\(i % 40)")], acl: nil)
        })
        let b = try db.feedKeys(authors: ["u5"], viewer: "u5", before: nil, limit: 3, strategy: .globalScan, scanLimit: 30)
        #expect(b.keys.count == 0)
        #expect(!b.scannedToEnd)
        // Near the end of the table the scan runs out before the cap: complete.
        let old = FeedCursor(createdAt: 1_700_000_000_000 + 5_000, objectId: "img0000010")
        let c = try db.feedKeys(authors: ["u5"], viewer: "u5", before: old, limit: 3, strategy: .globalScan, scanLimit: 30)
        #expect(c.keys.map(\.objectId) == ["img0000005"])
        #expect(c.scannedToEnd)
    }

    @Test(arguments: Backend.allCases)
    func commentsNewestFirstWithCounts(_ backend: Backend) throws {
        let db = try backend.open().db
        for i in 0..<5 {
            let at = ParseDate(millisecondsSince1970: 1_000 + Int64(i))
            try db.insert(StoredObject(className: "WallImageComment", objectId: "c\(i)", createdAt: at, updatedAt: at,
                                       fields: ["imageObjectId": "img1", "comment": .string("n\(i)")], acl: nil))
        }
        let c = try db.comments(ofImages: ["img1", "img2"], perImage: 3, readers: nil)
        #expect(c["img1"]?.count == 5)
        #expect(c["img1"]?.latest.map(\.objectId) == ["c4", "c3", "c2"])
        #expect(c["img1"]?.latest.first?.fields["comment"] == "n4")
        #expect(c["img2"]?.count == 0)
        // With members: the same comments, holding those fields (at least: PostgreSQL reads them whole).
        let cut = try db.comments(ofImages: ["img1", "img2"], perImage: 3, readers: nil, members: StoredMembers(["comment"]))
        #expect(cut["img1"]?.count == 5)
        #expect(cut["img1"]?.latest.map(\.objectId) == ["c4", "c3", "c2"])
        #expect(cut["img1"]?.latest.map { $0.fields["comment"] } == ["n4", "n3", "n2"])
        if backend == .sqlite { #expect(cut["img1"]?.latest.first?.fields["imageObjectId"] == nil) }
    }

    /// With `readers`, the latest comments and the count are of the comments those readers may read by
    /// their ACL: public ones, and restricted ones that name one of the readers; nil (the master key) all.
    @Test(arguments: Backend.allCases)
    func commentsAndCountsFollowTheReadersACL(_ backend: Backend) throws {
        let db = try backend.open().db
        let onlyU1 = ACL(entries: ["u1": ACL.Access(read: true, write: true)])
        let everyone = ACL(entries: ["*": ACL.Access(read: true, write: false), "u1": ACL.Access(read: true, write: true)])
        let acls: [ACL?] = [nil, onlyU1, everyone, onlyU1, nil]
        for (i, acl) in acls.enumerated() {
            let at = ParseDate(millisecondsSince1970: 1_000 + Int64(i))
            try db.insert(StoredObject(className: "WallImageComment", objectId: "c\(i)", createdAt: at, updatedAt: at,
                                       fields: ["imageObjectId": "img1", "comment": .string("n\(i)")], acl: acl))
        }
        let asU2 = try db.comments(ofImages: ["img1", "img2"], perImage: 3, readers: ["*", "u2"])
        #expect(asU2["img1"]?.count == 3)
        #expect(asU2["img1"]?.latest.map(\.objectId) == ["c4", "c2", "c0"])
        #expect(asU2["img2"]?.count ?? 0 == 0)
        let asU1 = try db.comments(ofImages: ["img1"], perImage: 3, readers: ["*", "u1"])
        #expect(asU1["img1"]?.count == 5)
        #expect(asU1["img1"]?.latest.map(\.objectId) == ["c4", "c3", "c2"])
        #expect(try db.comments(ofImages: ["img1"], perImage: 3, readers: nil)["img1"]?.count == 5)
        // A comment made readable by everyone counts for everyone at once.
        _ = try db.update(className: "WallImageComment", objectId: "c3", writers: nil) { (o: inout StoredObject) throws(ParseError) in o.acl = everyone }
        #expect(try db.comments(ofImages: ["img1"], perImage: 3, readers: ["*", "u2"])["img1"]?.count == 4)
    }

    /// `forEachLatestComment` hands out the rows `comments` decodes, in the same order, with the same
    /// counts, for each reader; a store that hands out no stored text (PostgreSQL) says so with nil.
    @Test(arguments: Backend.allCases)
    func latestCommentRowsAreTheCommentsDecoded(_ backend: Backend) throws {
        let db = try backend.open().db
        let onlyU1 = ACL(entries: ["u1": ACL.Access(read: true, write: true)])
        for i in 0..<7 {
            let at = ParseDate(millisecondsSince1970: 1_000 + Int64(i))
            try db.insert(StoredObject(className: "WallImageComment", objectId: "c\(i)", createdAt: at, updatedAt: at,
                                       fields: ["imageObjectId": .string(i % 2 == 0 ? "img1" : "img2"), "comment": .string("n\(i) \"quoted\"")],
                                       acl: i == 4 ? onlyU1 : nil))
        }
        for readers: PermissionSet in [["*", "u2"], ["*", "u1"], nil] {
            let ids = ["img2", "img1", "img3"]
            let decoded = try db.comments(ofImages: ids, perImage: 3, readers: readers)
            var rows: [String: [StoredObject]] = [:]
            let counts = try db.forEachLatestComment(ofImages: ids, perImage: 3, readers: readers) { id, row in
                rows[id, default: []].append(row.object(members: StoredMembers(["comment", "imageObjectId"]))!)
            }
            guard let counts else {
                #expect(backend == .postgres)
                continue
            }
            #expect(backend == .sqlite)
            for id in ids {
                #expect(counts[id] ?? 0 == decoded[id]?.count ?? 0, "\(id) \(String(describing: readers))")
                #expect(rows[id, default: []].map(\.objectId) == decoded[id]?.latest.map(\.objectId) ?? [])
                #expect(rows[id, default: []].map(\.fields) == decoded[id]?.latest.map(\.fields) ?? [])
            }
        }
    }

    /// An ACL entry a client chose to look like the public one in the stored readers (`x"*` is stored
    /// as `"x\"*"`, which holds `"*"`) doesn't make its row public: neither a query with readers nor the
    /// feed's comments and counts show it to anyone it doesn't name. (SQLite tells a public row by text:
    /// `SQLiteQueryCompiler.readByEveryone`.)
    @Test(arguments: Backend.allCases)
    func entriesThatLookPublicDoNotMakeARowPublic(_ backend: Backend) throws {
        let db = try backend.open().db
        let lookalikes = [#"x"*"#, #""*""#, #"*""#, #""*"#, #"["*"#, #","*","#, "* ", " *"]
        for (i, key) in lookalikes.enumerated() {
            let at = ParseDate(millisecondsSince1970: 1_000 + Int64(i))
            let acl = ACL(entries: [key: ACL.Access(read: true, write: false), "u1": ACL.Access(read: true, write: true)])
            try db.insert(StoredObject(className: "WallImageComment", objectId: "c\(i)", createdAt: at, updatedAt: at,
                                       fields: ["imageObjectId": "img1", "comment": .string("n\(i)")], acl: acl))
        }
        let at = ParseDate(millisecondsSince1970: 2_000)
        try db.insert(StoredObject(className: "WallImageComment", objectId: "public", createdAt: at, updatedAt: at,
                                   fields: ["imageObjectId": "img1"], acl: ACL(entries: ["*": ACL.Access(read: true, write: false)])))
        let asU2 = try db.comments(ofImages: ["img1"], perImage: 3, readers: ["*", "u2"])
        #expect(asU2["img1"]?.count == 1)
        #expect(asU2["img1"]?.latest.map(\.objectId) == ["public"])
        let query = StoredQuery(className: "WallImageComment", predicate: .inList("imageObjectId", [.string("img1")], negated: false),
                                order: [SortKey(path: "createdAt", descending: false)], readers: ["*", "u2"])
        #expect(try db.find(query).map(\.objectId) == ["public"])
        // Each entry is still an entry: the reader it names, and u1, read the row.
        var named = query
        named.readers = ["*", lookalikes[0]]
        #expect(try db.find(named).map(\.objectId) == ["c0", "public"])
        named.readers = ["*", "u1"]
        #expect(try db.find(named).count == lookalikes.count + 1)
        #expect(try db.comments(ofImages: ["img1"], perImage: 3, readers: ["*", "u1"])["img1"]?.count == lookalikes.count + 1)
    }

    /// Comments created in the same millisecond are ordered by `objectId` (descending), whatever order
    /// they were stored in, and the latest `perImage` are taken across such ties.
    @Test(arguments: Backend.allCases)
    func latestCommentsBreakTiesByObjectId(_ backend: Backend) throws {
        let db = try backend.open().db
        // The comment table with its image index, as the wall declares it (the index orders ties by row, not objectId).
        try db.ensureClass("WallImageComment", fields: ["imageObjectId": .string], indexedFields: ["imageObjectId"], uniqueFields: [])
        func comment(_ id: String, at ms: Int64) throws {
            let at = ParseDate(millisecondsSince1970: 1_000 + ms)
            try db.insert(StoredObject(className: "WallImageComment", objectId: id, createdAt: at, updatedAt: at,
                                       fields: ["imageObjectId": "img1", "comment": .string(id)], acl: nil))
        }
        for id in ["t2", "t4", "t0", "t3", "t1"] { try comment(id, at: 5) }
        try comment("old", at: 1)
        #expect(try db.comments(ofImages: ["img1"], perImage: 3, readers: nil)["img1"]?.latest.map(\.objectId) == ["t4", "t3", "t2"])
        try comment("new", at: 9)
        #expect(try db.comments(ofImages: ["img1"], perImage: 3, readers: nil)["img1"]?.latest.map(\.objectId) == ["new", "t4", "t3"])
        #expect(try db.comments(ofImages: ["img1"], perImage: 1, readers: nil)["img1"]?.latest.map(\.objectId) == ["new"])
        #expect(try db.comments(ofImages: ["img1"], perImage: 10, readers: nil)["img1"]?.latest.map(\.objectId) == ["new", "t4", "t3", "t2", "t1", "t0", "old"])
        #expect(try db.comments(ofImages: ["img1"], perImage: 0, readers: nil)["img1"]?.count == 7)
    }

    /// The comment count the feed shows is the number of stored comments on the image after every
    /// kind of write: single creates, a bulk load, a comment moved to another image, a delete, a
    /// cascade's `deleteAll`, and with the bulk load's deferred indexes and counters rebuilt.
    @Test(arguments: Backend.allCases)
    func commentCountsFollowEveryWrite(_ backend: Backend) throws {
        let db = try backend.open().db
        func counts() throws -> [String: Int] {
            try db.comments(ofImages: ["img1", "img2", "img3"], perImage: 3, readers: nil).mapValues(\.count)
        }
        func comment(_ id: String, on image: String, at ms: Int64) -> StoredObject {
            let at = ParseDate(millisecondsSince1970: 1_700_000_000_000 + ms)
            return StoredObject(className: "WallImageComment", objectId: id, createdAt: at, updatedAt: at,
                                fields: ["imageObjectId": .string(image), "comment": .string(id)], acl: nil)
        }
        for i in 0..<4 { try db.insert(comment("a\(i)", on: "img1", at: Int64(i))) }
        try db.bulkInsert((0..<6).map { comment("b\($0)", on: $0 < 5 ? "img2" : "img1", at: 100 + Int64($0)) })
        #expect(try counts() == ["img1": 5, "img2": 5, "img3": 0])
        // A comment whose image field changes (master-key update) moves between the counts.
        _ = try db.update(className: "WallImageComment", objectId: "b0", writers: nil) { (o: inout StoredObject) throws(ParseError) in
            o.fields["imageObjectId"] = "img3"
        }
        // An update that leaves the image alone changes nothing.
        _ = try db.update(className: "WallImageComment", objectId: "a0", writers: nil) { (o: inout StoredObject) throws(ParseError) in
            o.fields["comment"] = "edited"
        }
        #expect(try counts() == ["img1": 5, "img2": 4, "img3": 1])
        try db.delete(className: "WallImageComment", objectId: "a1", writers: nil)
        #expect(try counts() == ["img1": 4, "img2": 4, "img3": 1])
        // The cascade of an image's delete: every comment on it at once.
        #expect(try db.deleteAll(className: "WallImageComment", predicate: .compare("imageObjectId", .eq, .string("img2"))) == 4)
        #expect(try counts() == ["img1": 4, "img2": 0, "img3": 1])
        #expect(try db.comments(ofImages: ["img1"], perImage: 3, readers: nil)["img1"]?.latest.map(\.objectId) == ["b5", "a3", "a2"])
        // A bulk load that sets the indexes and counters aside and builds them again.
        try db.beginBulkLoad()
        try db.bulkInsert((0..<3).map { comment("d\($0)", on: "img2", at: 200 + Int64($0)) })
        try db.finishBulkLoad()
        try db.insert(comment("e0", on: "img2", at: 300))
        try db.delete(className: "WallImageComment", objectId: "a2", writers: nil)
        #expect(try counts() == ["img1": 3, "img2": 4, "img3": 1])
        #expect(try db.comments(ofImages: ["img2"], perImage: 3, readers: nil)["img2"]?.latest.map(\.objectId) == ["e0", "d2", "d1"])
    }

    /// Comments stored without a feed projection (a database from before the counter) are counted
    /// once the database is opened with one, and writes from then on keep the count.
    @Test(arguments: Backend.allCases)
    func commentCountsFilledForExistingComments(_ backend: Backend) throws {
        let (plain, reopen) = try backend.open(feed: nil, reopenFeed: .some(Backend.projection))
        for i in 0..<3 { try plain.insert(object("WallImageComment", ["imageObjectId": "img1", "comment": .string("c\(i)")], id: "c\(i)")) }
        try plain.insert(object("WallImageComment", ["imageObjectId": "img2"], id: "c9"))
        let db = try reopen()
        #expect(try db.comments(ofImages: ["img1", "img2"], perImage: 3, readers: nil).mapValues(\.count) == ["img1": 3, "img2": 1])
        try db.delete(className: "WallImageComment", objectId: "c9", writers: nil)
        try db.insert(object("WallImageComment", ["imageObjectId": "img1"], id: "c10"))
        #expect(try db.comments(ofImages: ["img1", "img2"], perImage: 3, readers: nil).mapValues(\.count) == ["img1": 4, "img2": 0])
    }

    @Test(arguments: Backend.allCases)
    func projectionFollowsWritesAndDeletes(_ backend: Backend) throws {
        let db = try backend.open().db
        func keys() throws -> [String] {
            try db.feedKeys(authors: ["a", "b"], viewer: "a", before: nil, limit: 10, strategy: .perAuthor, scanLimit: 100).keys.map(\.objectId)
        }
        try db.insert(object("WallImage", ["userFBId": "a"], id: "image00001"))
        try db.insert(object("WallImage", ["userFBId": "b"], id: "image00002"))
        try db.insert(object("WallImage", ["userFBId": "c"], id: "image00003"))
        // Another class with the same author field is not in the feed.
        try db.insert(object("Other", ["userFBId": "a"], id: "other00001"))
        #expect(try Set(keys()) == ["image00001", "image00002"])
        // A changed author moves the image between audiences.
        _ = try db.update(className: "WallImage", objectId: "image00003", writers: nil) { (o: inout StoredObject) throws(ParseError) in
            o.fields["userFBId"] = "b"
        }
        #expect(try Set(keys()) == ["image00001", "image00002", "image00003"])
        try db.delete(className: "WallImage", objectId: "image00001", writers: nil)
        #expect(try Set(keys()) == ["image00002", "image00003"])
        #expect(try db.deleteAll(className: "WallImage", predicate: .compare("userFBId", .eq, .string("b"))) == 2)
        #expect(try keys() == [])
        #expect(try db.feedKeys(authors: ["a", "b"], viewer: "a", before: nil, limit: 10, strategy: .globalScan, scanLimit: 100).keys == [])
    }

    @Test(arguments: Backend.allCases)
    func withoutAProjectionTheFeedIsEmpty(_ backend: Backend) throws {
        let db = try backend.open(feed: nil).db
        try db.insert(object("WallImage", ["userFBId": "a"]))
        try db.insert(object("WallImageComment", ["imageObjectId": "x"]))
        for strategy in [FeedStrategy.perAuthor, .globalScan] {
            let page = try db.feedKeys(authors: ["a"], viewer: "a", before: nil, limit: 10, strategy: strategy, scanLimit: 100)
            #expect(page.keys == [] && page.scannedToEnd)
        }
        #expect(try db.comments(ofImages: ["x"], perImage: 3, readers: nil).isEmpty)
        #expect(db.suggestedFeedThreshold() == nil)
        #expect(try db.count(StoredQuery(className: "WallImage", readers: nil)) == 1, "the objects themselves are stored as any other")
    }
}
