import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// Private users (issue 11, finding 6; parse-server 7's `enforcePrivateUsers`): a `_User` is seen in
/// full (less protected fields) by itself and the master key; its friends, and anyone who may see a
/// photo or comment it posted (through `include` of that post's `user`), see `objectId`, `name` and
/// `fbId`; strangers and anonymous callers see nothing. The same on GET, find, count, `include`
/// (nested), batch, `_method`, the feed and `/users/me`.
@Suite(.serialized) struct PrivateUserTests {
    static let env = MockFacebookProcess.withServer()
    var s: ParseTestServer { Self.env.0 }
    var fb: MockFacebookProcess { Self.env.1 }

    struct Person { var fbId: String, objectId: String, session: String }

    func login(_ fbId: String) async throws -> Person {
        let (objectId, session, _) = try await fb.logIn(fbId, on: s)
        return Person(fbId: fbId, objectId: objectId, session: session)
    }

    /// An owner, a friend of the owner, a commenter who is the owner's friend but not the friend's,
    /// and a stranger to all three.
    func cast() async throws -> (owner: Person, friend: Person, commenter: Person, stranger: Person) {
        let fixture = MockFacebookProcess.fixture
        let app = Set(MockFacebookProcess.appUsers())
        func friends(_ id: String) -> Set<String> { Set((fixture[id]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue }).intersection(app) }
        for o in MockFacebookProcess.appUsers(minFriends: 2) {
            let fs = friends(o).sorted()
            for f in fs {
                guard let c = fs.first(where: { $0 != f && !friends(f).contains($0) && !friends($0).contains(f) }) else { continue }
                let taken = [o, f, c]
                guard let st = app.subtracting(friends(o)).subtracting(friends(f)).subtracting(friends(c)).subtracting(taken).sorted().first else { continue }
                return (try await login(o), try await login(f), try await login(c), try await login(st))
            }
        }
        throw TestServerError(description: "no owner/friend/commenter triple in the fixture")
    }

    func publicView(_ p: Person) -> JSON {
        ["objectId": .string(p.objectId), "name": MockFacebookProcess.fixture[p.fbId]?["name"] ?? .null, "fbId": .string(p.fbId)]
    }

    func included(_ p: Person) -> JSON {
        var o = publicView(p).objectValue ?? [:]
        o["__type"] = "Object"
        o["className"] = "_User"
        return .object(o)
    }

    @Test func anonymousAndStrangersSeeNoUsers() async throws {
        let (owner, friend, _, stranger) = try await cast()
        // The finding, exactly: an anonymous listing.
        let listing = try await s.request("GET", "/users?keys=name,fbId")
        #expect(listing.status == 200)
        #expect(listing.json == ["results": []])
        #expect(try await s.request("GET", "/users?count=1&limit=0").json == ["results": [], "count": 0])
        #expect(try await s.request("GET", "/classes/_User?where=" + enc(["fbId": .string(owner.fbId)])).json == ["results": []])
        let get = try await s.request("GET", "/users/\(owner.objectId)")
        #expect(get.status == 404)
        #expect(get.json == ["code": 101, "error": "Object not found."])
        #expect(try await s.request("POST", "/users", json: ["_method": "GET", "keys": "name,fbId"]).json == ["results": []])
        let batch = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "GET", "path": "/parse/users", "body": ["keys": "name,fbId"]],
            ["method": "GET", "path": .string("/parse/users/\(owner.objectId)")],
        ]])
        #expect(batch.json == [["success": ["results": []]], ["error": ["code": 101, "error": "Object not found."]]])

        // A stranger with a session: the same, except for itself.
        let byOwner = enc(["fbId": .string(owner.fbId)])
        #expect(try await s.request("GET", "/users/\(owner.objectId)", key: .session(stranger.session)).json["code"] == 101)
        #expect(try await s.request("GET", "/users/\(friend.objectId)", key: .session(stranger.session)).json["code"] == 101)
        #expect(try await s.request("GET", "/users?where=\(byOwner)", key: .session(stranger.session)).json == ["results": []])
        #expect(try await s.request("GET", "/users?count=1&limit=0&where=\(byOwner)", key: .session(stranger.session)).json["count"] == 0)
        let all = try await s.request("GET", "/users?limit=1000", key: .session(stranger.session))
        #expect(all.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } == [stranger.objectId])
        // A password user has no friends: only itself.
        let (pid, password) = try await s.signUp()
        let mine = try await s.request("GET", "/users?limit=1000", key: .session(password))
        #expect(mine.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } == [pid])
        #expect(try await s.request("GET", "/users/\(owner.objectId)", key: .session(password)).json["code"] == 101)
        // The master key sees everyone in full.
        let master = try await s.request("GET", "/users/\(owner.objectId)", key: .master(nil))
        #expect(master.json["authData"]?["facebook"]?["id"]?.stringValue == owner.fbId)
        #expect(master.json["username"]?.stringValue?.count == 25)
    }

    @Test func friendsSeeNameAndFacebookIdOnly() async throws {
        let (owner, friend, _, _) = try await cast()
        let got = try await s.request("GET", "/users/\(owner.objectId)", key: .session(friend.session))
        #expect(got.status == 200)
        #expect(got.json == publicView(owner))
        let found = try await s.request("GET", "/users?where=" + enc(["fbId": .string(owner.fbId)]), key: .session(friend.session))
        #expect(found.json == ["results": [publicView(owner)]])
        let counted = try await s.request("GET", "/users?count=1&limit=0&where=" + enc(["fbId": .string(owner.fbId)]), key: .session(friend.session))
        #expect(counted.json == ["results": [], "count": 1])
        // Fields a friend doesn't see can't be queried either (that would be the same oracle).
        let username = try await s.request("GET", "/users?count=1&limit=0&where=" + enc(["username": ["$regex": "^a"]]), key: .session(friend.session))
        #expect(username.json == ["code": 119, "error": "This user is not allowed to query username on class _User"])
        #expect(try await s.request("GET", "/users?order=createdAt", key: .session(friend.session)).json
                == ["code": 119, "error": "This user is not allowed to sort by createdAt on class _User"])

        // Itself: in full, less authData; /users/me adds the session token.
        let own = try await s.request("GET", "/users/\(owner.objectId)", key: .session(owner.session))
        #expect(own.json.objectValue?.keys.sorted() == ["ACL", "createdAt", "fbId", "name", "objectId", "updatedAt", "username"])
        let me = try await s.request("GET", "/users/me", key: .session(owner.session))
        #expect(me.json.objectValue?.keys.sorted() == ["ACL", "createdAt", "fbId", "name", "objectId", "sessionToken", "updatedAt", "username"])
    }

    @Test func postsRevealTheirAuthorsNameThroughInclude() async throws {
        let (owner, friend, commenter, stranger) = try await cast()
        let image = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "party"], key: .session(owner.session))
            .json["objectId"]?.stringValue)
        let imagePointer: JSON = ["__type": "Pointer", "className": "WallImage", "objectId": .string(image)]
        let comment = try #require(try await s.request("POST", "/classes/WallImageComment", json: [
            "comment": "great", "imageObjectId": .string(image), "image": imagePointer,
        ], key: .session(commenter.session)).json["objectId"]?.stringValue)

        // The friend sees the commenter's name under the owner's photo, though they aren't friends.
        let comments = try await s.request("GET", "/classes/WallImageComment?include=user&where=" + enc(["imageObjectId": .string(image)]),
                                           key: .session(friend.session))
        #expect(comments.json["results"]?.arrayValue?.map { $0["user"] } == [included(commenter)])
        // Nested, through _method and batch: the image's author too.
        let nested = try await s.request("POST", "/classes/WallImageComment", json: [
            "_method": "GET", "where": ["objectId": .string(comment)], "include": "user,image.user",
        ], key: .session(friend.session))
        #expect(nested.json["results"]?.arrayValue?.first?["image"]?["user"] == included(owner))
        #expect(nested.json["results"]?.arrayValue?.first?["user"] == included(commenter))
        let batch = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "GET", "path": .string("/parse/classes/WallImageComment/\(comment)"), "body": ["include": "user"]],
        ]], key: .session(friend.session))
        #expect(batch.json.arrayValue?.first?["success"]?["user"] == included(commenter))
        // But only through the post: the commenter stays a stranger to a direct GET or find.
        #expect(try await s.request("GET", "/users/\(commenter.objectId)", key: .session(friend.session)).json["code"] == 101)
        #expect(try await s.request("GET", "/users?where=" + enc(["objectId": .string(commenter.objectId)]), key: .session(friend.session))
            .json == ["results": []])
        // The commenter's own view of itself through include is its full self.
        let ownInclude = try await s.request("GET", "/classes/WallImageComment/\(comment)?include=user", key: .session(commenter.session))
        #expect(ownInclude.json["user"]?["username"]?.stringValue?.count == 25)

        // A pointer the server didn't set as a post's author reveals nothing: it stays a bare pointer.
        let ownerPointer: JSON = ["__type": "Pointer", "className": "_User", "objectId": .string(owner.objectId)]
        let planted = try #require(try await s.request("POST", "/classes/WallImage", json: [
            "caption": "planted", "userFBId": .string(stranger.fbId), "other": ownerPointer,
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(stranger.objectId)],
        ], key: .master(nil)).json["objectId"]?.stringValue)
        let probe = try await s.request("GET", "/classes/WallImage/\(planted)?include=other,user", key: .session(stranger.session))
        #expect(probe.status == 200)
        #expect(probe.json["other"] == ownerPointer)
        #expect(probe.json["user"]?["username"] != nil, "its own user, in full")
        // And the stranger can't read the owner's posts at all.
        #expect(try await s.request("GET", "/classes/WallImageComment/\(comment)?include=user", key: .session(stranger.session)).json["code"] == 101)

        // The feed shows the same three fields of each author.
        let feed = try await s.request("POST", "/functions/feed", json: ["limit": 50], key: .session(friend.session))
        let post = try #require(feed.json["result"]?["images"]?.arrayValue?.first { $0["objectId"]?.stringValue == image })
        #expect(post["user"] == publicView(owner))
        #expect(post["comments"]?.arrayValue?.map { $0["user"] } == [publicView(commenter)])
        // A password user's feed entry shows no username.
        let (_, pw) = try await s.signUp("pwfeed_\(UUID().uuidString.prefix(6))")
        _ = try await s.request("POST", "/classes/WallImage", json: ["caption": "pw"], key: .session(pw))
        let pwFeed = try await s.request("POST", "/functions/feed", json: ["limit": 1], key: .session(pw))
        #expect(pwFeed.json["result"]?["images"]?.arrayValue?.first?["user"]?["name"] == .null)
    }

    /// The users `include` and the feed show are served from memory (`ObjectService.includeTargets`, on
    /// with SQLite as here), and every write of a user in the server reaches them at once: a rename by
    /// `PUT`, one by `/batch`, and an ACL that hides the user, each seen by the very next feed page and
    /// `include=user` of a friend, and by the master key's `include`.
    @Test func aUsersChangeReachesTheFeedAndIncludeAtOnce() async throws {
        let (owner, friend, _, _) = try await cast()
        let image = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "renamed"], key: .session(owner.session))
            .json["objectId"]?.stringValue)
        func shown() async throws -> (feed: JSON?, include: JSON?, master: JSON?) {
            let feed = try await s.request("POST", "/functions/feed", json: ["limit": 50], key: .session(friend.session))
            let post = feed.json["result"]?["images"]?.arrayValue?.first { $0["objectId"]?.stringValue == image }
            let got = try await s.request("GET", "/classes/WallImage/\(image)?include=user", key: .session(friend.session))
            let master = try await s.request("GET", "/classes/WallImage/\(image)?include=user", key: .master(nil))
            return (post?["user"], got.json["user"], master.json["user"]?["name"])
        }
        // Read twice, so the second read is served from memory.
        _ = try await shown()
        var now = try await shown()
        #expect(now.feed == publicView(owner))
        #expect(now.include == included(owner))

        // `name` is the provider's (a user's own write is refused); the master key renames.
        let refused = try await s.request("PUT", "/users/\(owner.objectId)", json: ["name": "Renamed Once"], key: .session(owner.session))
        #expect(refused.status == 400)
        let put = try await s.request("PUT", "/users/\(owner.objectId)", json: ["name": "Renamed Once"], key: .master(nil))
        #expect(put.status == 200)
        now = try await shown()
        #expect(now.feed?["name"] == "Renamed Once")
        #expect(now.include?["name"] == "Renamed Once")
        #expect(now.master == "Renamed Once")

        let batch = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "PUT", "path": .string("/parse/users/\(owner.objectId)"), "body": ["name": "Renamed Twice"]],
        ]], key: .master(nil))
        #expect(batch.json.arrayValue?.first?["success"] != nil)
        now = try await shown()
        #expect(now.feed?["name"] == "Renamed Twice")
        #expect(now.include?["name"] == "Renamed Twice")

        // Readable by the owner alone: the friend's feed names the author by objectId only, and `include`
        // leaves the pointer as it is.
        let hide = try await s.request("PUT", "/users/\(owner.objectId)", json: ["ACL": .object([owner.objectId: ["read": true, "write": true]])],
                                       key: .session(owner.session))
        #expect(hide.status == 200)
        now = try await shown()
        #expect(now.feed == ["fbId": .null, "name": .null, "objectId": .string(owner.objectId)])
        #expect(now.include == ["__type": "Pointer", "className": "_User", "objectId": .string(owner.objectId)])
        #expect(now.master == "Renamed Twice")
    }
}
