@testable import PhotoWallServices
import PhotoWallCore
import PhotoWallStorage
import Testing

/// `ObjectService.mayRead`, the in-memory read check of `include` and LiveQuery, admits exactly whom the
/// adapters' SQL admits: ACL entries compare with the caller's by their bytes, not by Swift's `==`
/// (canonical equivalence, under which U+212A KELVIN SIGN equals `K`).
@Suite struct ReadPermissionTests {
    func object(readers: [String]) -> StoredObject {
        var entries: [String: ACL.Access] = [:]
        for r in readers { entries[r] = ACL.Access(read: true, write: false) }
        return StoredObject(className: "Note", objectId: "o1", createdAt: .now(), updatedAt: .now(), fields: [:], acl: ACL(entries: entries))
    }

    func caller(_ id: String) -> AuthContext {
        AuthContext(user: StoredObject(className: "_User", objectId: id, createdAt: .now(), updatedAt: .now(), fields: [:], acl: nil),
                    sessionToken: "r:test")
    }

    @Test func aclEntriesMatchByTheirBytes() {
        let lookAlike = "\u{212A}ab12cd34e", userId = "Kab12cd34e"
        #expect(lookAlike == userId, "Swift's == is canonical equivalence")
        #expect(!ObjectService.mayRead(object(readers: [lookAlike]), caller(userId)))
        #expect(ObjectService.mayRead(object(readers: [userId]), caller(userId)))
        #expect(ObjectService.mayRead(object(readers: [lookAlike]), caller(lookAlike)))
        #expect(ObjectService.mayRead(object(readers: [lookAlike]), .master))
        #expect(ObjectService.mayRead(object(readers: ["*"]), .anonymous))
        #expect(!ObjectService.mayRead(object(readers: []), .anonymous))
        #expect(!permissionsAdmit([], ["*"]))
        #expect(permissionsAdmit(nil, []))
    }
}
