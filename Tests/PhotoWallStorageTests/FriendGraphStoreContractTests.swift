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
}
