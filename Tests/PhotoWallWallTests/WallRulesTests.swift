import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage
import PhotoWallWall
import Testing

/// The wall's rules as `ObjectService` applies them with the wall installed, in process against a
/// real SQLite file (no server started): friends-only visibility, server-owned fields, the comment
/// delete grant and the cascades. The live-server suites (AuthorizationMatrixTests,
/// ServerOwnedFieldTests, CascadeDeleteTests) check the same through HTTP.
@Suite struct WallRulesTests {
    /// The ids `auth` finds in `className` (and the count it is told).
    func found(_ className: String, _ auth: AuthContext, _ f: WallFixture) throws -> (ids: Set<String>, count: Int?) {
        var options = FindOptions()
        options.count = true
        let answer = try f.objects.find(className: className, options: options, auth: auth)
        let ids = Set((answer["results"]?.arrayValue ?? []).compactMap { $0["objectId"]?.stringValue })
        return (ids, answer["count"]?.intValue)
    }

    @Test func imagesAndCommentsAreSeenByTheOwnerTheOwnersFriendsAndTheMasterKeyOnly() throws {
        let f = try WallFixture()
        let image = try f.image("mine", by: f.owner)
        let comment = try f.comment("first", on: image, by: f.friend)
        let seen: [(String, AuthContext, Bool)] = [("owner", f.owner, true), ("friend", f.friend, true), ("stranger", f.stranger, false),
                                                   ("anonymous", .anonymous, false), ("master", .master, true)]
        for (who, auth, sees) in seen {
            for (className, id) in [(WallSchema.imageClass, image), (WallSchema.commentClass, comment)] {
                let got = parseError { try f.objects.get(className: className, objectId: id, auth: auth) }
                #expect(got?.code == (sees ? nil : .objectNotFound), "\(who) GET \(className)")
                #expect(got?.message == (sees ? nil : "Object not found."), "\(who) GET \(className)")
                let (ids, count) = try found(className, auth, f)
                #expect(ids == (sees ? [id] : []), "\(who) find \(className)")
                #expect(count == (sees ? 1 : 0), "\(who) count \(className)")
            }
        }
        // A stranger can't comment on an image they can't see: it is reported as missing.
        let refused = parseError { try f.comment("hi", on: image, by: f.stranger) }
        #expect(refused?.code == .objectNotFound)
        #expect(refused?.message == "The image to comment on does not exist.")
        // With a public wall everyone sees both.
        let open = try WallFixture(visibility: .public)
        let publicImage = try open.image("all", by: open.owner)
        #expect(try found(WallSchema.imageClass, .anonymous, open).ids == [publicImage])
        #expect(try found(WallSchema.imageClass, open.stranger, open).ids == [publicImage])
    }

    @Test func theServerSetsTheOwnerAndRefusesOtherValuesAndUndeclaredFields() throws {
        let f = try WallFixture()
        let image = try f.image("mine", by: f.owner)
        let stored = try #require(try f.objects.fetchStored(className: WallSchema.imageClass, objectId: image))
        #expect(stored.fields["userFBId"] == "1001")
        #expect(stored.fields["user"] == ["__type": "Pointer", "className": "_User", "objectId": .string(f.owner.userId!)])
        #expect(stored.acl?.entries["*"]?.read == true && stored.acl?.entries["*"]?.write == false)
        #expect(stored.acl?.entries[f.owner.userId!]?.write == true)

        let forged = parseError { try f.objects.create(className: WallSchema.imageClass, body: ["userFBId": "1002"], auth: f.owner) }
        #expect(forged?.code == .operationForbidden)
        #expect(forged?.message == "WallImage.userFBId is set by the server and can't be changed.")
        // The value the server would set is accepted (SDKs send whole objects back).
        #expect(parseError { try f.objects.create(className: WallSchema.imageClass, body: ["userFBId": "1001"], auth: f.owner) } == nil)
        let thumb = parseError {
            try f.objects.update(className: WallSchema.imageClass, objectId: image, body: ["width": 1], auth: f.owner)
        }
        #expect(thumb?.message == "WallImage.width is set by the server and can't be changed.")
        let undeclared = parseError { try f.objects.create(className: WallSchema.imageClass, body: ["rating": 5], auth: f.owner) }
        #expect(undeclared?.code == .operationForbidden)
        #expect(undeclared?.message == "Permission denied for action addField on class WallImage.")
        let comment = try f.comment("hello", on: image, by: f.friend)
        let moved = parseError {
            try f.objects.update(className: WallSchema.commentClass, objectId: comment, body: ["imageObjectId": "other"], auth: f.friend)
        }
        #expect(moved?.message == "WallImageComment.imageObjectId can't be changed.")
        let anonymous = parseError { try f.objects.create(className: WallSchema.imageClass, body: [:], auth: .anonymous) }
        #expect(anonymous?.code == .invalidSessionToken)
        // The master key writes what it likes.
        #expect(parseError { try f.objects.create(className: WallSchema.imageClass, body: ["userFBId": "42"], auth: .master) } == nil)
    }

    @Test func theImagesOwnerDeletesAnyCommentOnItOthersOnlyTheirOwn() throws {
        let f = try WallFixture()
        let image = try f.image("mine", by: f.owner)
        let first = try f.comment("one", on: image, by: f.friend), second = try f.comment("two", on: image, by: f.friend)
        let friendsImage = try f.image("theirs", by: f.friend)
        let onFriends = try f.comment("three", on: friendsImage, by: f.friend)
        // Neither a stranger nor the owner of another image may delete the friend's comments.
        #expect(parseError { try f.objects.delete(className: WallSchema.commentClass, objectId: first, auth: f.stranger) }?.code == .objectNotFound)
        #expect(parseError { try f.objects.delete(className: WallSchema.commentClass, objectId: onFriends, auth: f.owner) }?.code == .objectNotFound)
        try f.objects.delete(className: WallSchema.commentClass, objectId: first, auth: f.owner)
        try f.objects.delete(className: WallSchema.commentClass, objectId: second, auth: f.friend)
        #expect(try f.objects.fetchStored(className: WallSchema.commentClass, objectId: first) == nil)
        #expect(try f.objects.fetchStored(className: WallSchema.commentClass, objectId: second) == nil)
        #expect(try f.objects.fetchStored(className: WallSchema.commentClass, objectId: onFriends) != nil)
    }

    @Test func deletingAnImageDeletesItsCommentsAndDeletingAUserTheirPhotosAndComments() throws {
        let f = try WallFixture()
        let image = try f.image("mine", by: f.owner), kept = try f.image("kept", by: f.owner)
        let comments = [try f.comment("a", on: image, by: f.friend), try f.comment("b", on: image, by: f.owner)]
        let other = try f.comment("c", on: kept, by: f.friend)
        try f.objects.delete(className: WallSchema.imageClass, objectId: image, auth: f.owner)
        for c in comments { #expect(try f.objects.fetchStored(className: WallSchema.commentClass, objectId: c) == nil) }
        #expect(try f.objects.fetchStored(className: WallSchema.commentClass, objectId: other) != nil)

        // The friend's photo and comments go with the friend; the owner's photo stays.
        let friendsImage = try f.image("theirs", by: f.friend)
        try f.users.delete(userId: f.friend.userId!, auth: f.friend)
        #expect(try f.objects.fetchStored(className: WallSchema.imageClass, objectId: friendsImage) == nil)
        #expect(try f.objects.fetchStored(className: WallSchema.commentClass, objectId: other) == nil)
        #expect(try f.objects.fetchStored(className: WallSchema.imageClass, objectId: kept) != nil)
    }

    @Test func privateUsersShowFriendsThreeFieldsAndStrangersNothing() throws {
        let f = try WallFixture()
        let ownerId = f.owner.userId!
        let asFriend = try f.objects.get(className: "_User", objectId: ownerId, auth: f.friend)
        #expect(asFriend == ["objectId": .string(ownerId), "name": "Olga Owner", "fbId": "1001"])
        #expect(parseError { try f.objects.get(className: "_User", objectId: ownerId, auth: f.stranger) }?.code == .objectNotFound)
        let where_ = parseError { () throws -> JSON in
            var o = FindOptions()
            o.whereJSON = ["username": "fb_1001"]
            return try f.objects.find(className: "_User", options: o, auth: f.friend)
        }
        #expect(where_?.message == "This user is not allowed to query username on class _User")
    }

    /// `includedMembers` (the feed's authors) applies the rule `wireObject` applies, per member: a user
    /// reached through a post's `user` shows the post's readers its three public fields and no more,
    /// whatever members are asked; itself, all but the master-only ones (`authData`); the master key,
    /// everything. A pointer field that doesn't reveal its targets follows the read scope: a stranger
    /// is shown nothing through it.
    @Test func includedMembersShowWhatWireObjectShows() throws {
        let f = try WallFixture()
        let ownerId = f.owner.userId!
        _ = try f.objects.update(className: "_User", objectId: ownerId,
                                 body: ["email": "olga@example.com", "authData": ["facebook": ["id": "1001"]]], auth: .master)
        let members = ["name", "email", "authData", "username", "objectId", "createdAt", "ACL", "fbId"]
        let via = [WallSchema.imageClass + ".user": Set([ownerId])]
        func shown(_ auth: AuthContext, _ idsVia: [String: Set<String>] = via) throws -> [String: JSON] {
            let values = try f.objects.includedMembers(className: "_User", idsVia: idsVia, auth: auth, members: members)[ownerId]
            return Dictionary(uniqueKeysWithValues: zip(members, values ?? []).compactMap { k, v in v.map { (k, $0) } })
        }
        let asFriend = try shown(f.friend)
        #expect(asFriend == ["objectId": .string(ownerId), "name": "Olga Owner", "fbId": "1001"])
        // The same as GET shows the friend, member by member.
        let get = try f.objects.get(className: "_User", objectId: ownerId, auth: f.friend)
        #expect(asFriend == get)
        // Itself and the master key: GET's object, less the fields not asked.
        for auth in [f.owner, AuthContext.master] {
            let whole = try f.objects.get(className: "_User", objectId: ownerId, auth: auth)
            #expect(try shown(auth) == whole.filter { members.contains($0.key) })
        }
        let asSelf = try shown(f.owner)
        #expect(Set(asSelf.keys) == ["name", "email", "username", "objectId", "createdAt", "fbId"])
        #expect(asSelf["email"] == "olga@example.com")
        #expect(try shown(.master)["authData"] == ["facebook": ["id": "1001"]])
        // Revealed through the post's `user`, even to a stranger (who may read the post); through a
        // field that reveals nothing, the read scope hides the owner from the stranger.
        #expect(try shown(f.stranger).keys.sorted() == ["fbId", "name", "objectId"])
        #expect(try shown(f.stranger, ["Other.user": [ownerId]]).isEmpty)
        #expect(try shown(f.friend, ["Other.user": [ownerId]]) == asFriend)
    }

    /// The friends-only scope is the friend graph itself (`Predicate.friendOf`), not a list bound into
    /// each statement: a viewer with 40,000 friends (more values than SQLite binds in one statement,
    /// 32,766) reads, finds, counts and is sent live events as one with a single friend, and a
    /// stranger with as many friends still sees nothing.
    @Test func aFriendListLongerThanAStatementCanBindScopesEveryRead() throws {
        let f = try WallFixture()
        let image = try f.image("mine", by: f.owner)
        let comment = try f.comment("first", on: image, by: f.owner)
        let many = (0..<40_000).map { String(5_000_000 + $0) }
        try f.database.replaceFriends(of: "1002", with: many + ["1001"], syncedAt: .now())
        try f.database.replaceFriends(of: "1003", with: many, syncedAt: .now())
        for (who, auth, sees) in [("friend", f.friend, true), ("stranger", f.stranger, false)] {
            for (className, id) in [(WallSchema.imageClass, image), (WallSchema.commentClass, comment)] {
                let got = parseError { try f.objects.get(className: className, objectId: id, auth: auth) }
                #expect(got?.code == (sees ? nil : .objectNotFound), "\(who) GET \(className)")
                let (ids, count) = try found(className, auth, f)
                #expect(ids == (sees ? [id] : []), "\(who) find \(className)")
                #expect(count == (sees ? 1 : 0), "\(who) count \(className)")
                let stored = try #require(try f.objects.fetchStored(className: className, objectId: id))
                #expect(try f.objects.isVisible(stored, auth: auth) == sees, "\(who) live event \(className)")
            }
            let user = parseError { try f.objects.get(className: "_User", objectId: f.owner.userId!, auth: auth) }
            #expect(user?.code == (sees ? nil : .objectNotFound), "\(who) GET the owner")
            var byName = FindOptions()
            byName.whereJSON = ["name": "Olga Owner"]
            let users = try f.objects.find(className: "_User", options: byName, auth: auth)["results"]?.arrayValue ?? []
            #expect(users.compactMap { $0["objectId"]?.stringValue } == (sees ? [f.owner.userId!] : []), "\(who) find the owner")
        }
        // A comment shows its author through `include=user` to whoever may read the comment.
        var include = FindOptions()
        include.include = ["user"]
        let shown = try f.objects.get(className: WallSchema.commentClass, objectId: comment, options: include, auth: f.friend)
        #expect(shown["user"]?["name"] == "Olga Owner")
    }
}
