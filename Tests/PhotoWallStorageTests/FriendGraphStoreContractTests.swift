import Testing
import PhotoWallCore
import PhotoWallStorage

/// The `FriendGraphStore` contract on every adapter, with its bulk form.
@Suite struct FriendGraphStoreContractTests {
    @Test(arguments: Backend.allCases)
    func friendGraph(_ backend: Backend) throws {
        let db = try backend.open().db
        #expect(try db.friendsSyncedAt("1") == nil)
        #expect(try db.friends(of: "1") == [])
        try db.replaceFriends(of: "1", with: ["2", "3", "3", "1"], syncedAt: ParseDate(millisecondsSince1970: 10))
        #expect(try db.friends(of: "1").sorted() == ["2", "3"])
        #expect(try db.friendCount(of: "1") == 2)
        #expect(try db.isFriend("2", of: "1"))
        #expect(try !db.isFriend("1", of: "2"))
        try db.replaceFriends(of: "1", with: ["4"], syncedAt: ParseDate(millisecondsSince1970: 20))
        #expect(try db.friends(of: "1") == ["4"])
        #expect(try db.friendsSyncedAt("1") == ParseDate(millisecondsSince1970: 20))
    }

    @Test(arguments: Backend.allCases)
    func bulkFriendshipsGoBothWays(_ backend: Backend) throws {
        let db = try backend.open().db
        try db.bulkInsertFriendships([("u1", "u2"), ("u2", "u3"), ("u1", "u2"), ("u4", "u4")])
        #expect(try db.friends(of: "u2").sorted() == ["u1", "u3"])
        #expect(try db.friends(of: "u1") == ["u2"])
        #expect(try db.friendsSyncedAt("u3") != nil)
        #expect(try db.friendsSyncedAt("u4") == nil, "a pair with itself is no friendship")
    }

    /// `Predicate.friendOf` is evaluated against the store's own friend graph when the query runs, with
    /// the same answer as in memory (`matches`), in both of its compiled forms: the viewer's friend rows
    /// as a set (a find or count), and a probe per row (a predicate that names its rows by objectId).
    /// The viewer has 70,000 friends, more than one PostgreSQL statement can bind (65,535), so a scope
    /// that listed them would fail there.
    @Test(arguments: Backend.allCases)
    func friendOfReadsTheGraphAsTheQueryRuns(_ backend: Backend) throws {
        let db = try backend.open().db
        try db.ensureClass("Post", fields: ["author": .string, "tags": .array, "owner": .pointer("_User")],
                           indexedFields: ["author"], uniqueFields: [])
        let rows: [(String, [String: JSON])] = [
            ("byViewer", ["author": "v", "tags": ["x"], "owner": ["__type": "Pointer", "className": "_User", "objectId": "f1"]]),
            ("byFriend1", ["author": "f1", "tags": ["s", "f2"]]),
            ("byFriend2", ["author": "f2", "tags": []]),
            ("byStranger", ["author": "s", "tags": ["s"], "owner": ["__type": "Pointer", "className": "_User", "objectId": "s"]]),
            ("noAuthor", [:]),
        ]
        var stored: [StoredObject] = []
        for (id, fields) in rows {
            let o = object("Post", fields, id: id)
            try db.insert(o)
            stored.append(o)
        }
        let others = (0..<70_000).map { "other\($0)" }
        try db.replaceFriends(of: "v", with: ["f1", "f2"] + others, syncedAt: .now())
        let scope = FriendScope(viewer: "v") { () throws(ParseError) -> [String] in try db.friends(of: "v") }
        let allIds: [QueryValue] = rows.map { .string($0.0) }
        let cases: [(String, PhotoWallStorage.Predicate, [String])] = [
            ("author", .friendOf("author", scope), ["byFriend1", "byFriend2", "byViewer"]),
            ("author, by objectId", .and([.inList("objectId", allIds, negated: false), .friendOf("author", scope)]),
             ["byFriend1", "byFriend2", "byViewer"]),
            ("author, one stranger's row", .and([.compare("objectId", .eq, .string("byStranger")), .friendOf("author", scope)]), []),
            ("author, one friend's row", .and([.compare("objectId", .eq, .string("byFriend2")), .friendOf("author", scope)]), ["byFriend2"]),
            ("array field", .friendOf("tags", scope), ["byFriend1"]),
            ("array field, by objectId", .and([.inList("objectId", allIds, negated: false), .friendOf("tags", scope)]), ["byFriend1"]),
            ("pointer field", .friendOf("owner", scope), ["byViewer"]),
            ("nor", .nor([.friendOf("author", scope)]), ["byStranger", "noAuthor"]),
            ("or", .or([.compare("objectId", .eq, .string("noAuthor")), .friendOf("author", scope)]),
             ["byFriend1", "byFriend2", "byViewer", "noAuthor"]),
        ]
        for (name, predicate, expected) in cases {
            let q = StoredQuery(className: "Post", predicate: predicate, order: [SortKey(path: "objectId", descending: false)], readers: nil)
            #expect(try db.find(q).map(\.objectId) == expected, "\(name)")
            #expect(try db.count(q) == expected.count, "\(name) count")
            #expect(stored.filter { predicate.matches($0) }.map(\.objectId).sorted() == expected, "\(name) in memory")
        }
        // The graph is read as each query runs: a changed friendship counts at once.
        try db.replaceFriends(of: "v", with: ["s"], syncedAt: .now())
        let now = StoredQuery(className: "Post", predicate: .friendOf("author", scope), order: [SortKey(path: "objectId", descending: false)],
                              readers: nil)
        #expect(try db.find(now).map(\.objectId) == ["byStranger", "byViewer"])
    }
}
