import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// Protected fields (issue 11, finding 1): `authData`, session tokens and `_` columns are read and
/// queried by the master key alone, `email` is read by its own user and queried by the master key
/// alone. A query naming one is refused with 119, never answered as "no match", on every path:
/// `where` (dotted paths, `$or`/`$and`/`$nor`), `order`, `keys`, `excludeKeys`, `include`, `count`,
/// batch and `_method`; no result ever carries one.
@Suite(.serialized) struct ProtectedFieldTests {
    static let env = MockFacebookProcess.withServer()
    var s: ParseTestServer { Self.env.0 }
    var fb: MockFacebookProcess { Self.env.1 }

    /// A Facebook user with a friend, both logged in, the victim with an email address.
    struct Victim {
        var fbId: String, objectId: String, session: String, accessToken: String, email: String
        var friendSession: String
    }

    func victim(_ index: Int) async throws -> Victim {
        let fixture = MockFacebookProcess.fixture
        let appUsers = Set(MockFacebookProcess.appUsers())
        let fbId = MockFacebookProcess.appUsers(minFriends: 1)[index]
        let friends: [JSON] = fixture[fbId]?["friends"]?.arrayValue ?? []
        let candidates = Set(friends.compactMap { $0.stringValue }).intersection(appUsers).sorted()
        let friend = try #require(candidates.first)
        let (objectId, session, token) = try await fb.logIn(fbId, on: s)
        let email = "jonah.private.\(index)@example.com"
        #expect(try await s.request("PUT", "/users/\(objectId)", json: ["email": .string(email)], key: .session(session)).status == 200)
        let friendSession = try await fb.logIn(friend, on: s).session
        return Victim(fbId: fbId, objectId: objectId, session: session, accessToken: token, email: email, friendSession: friendSession)
    }

    static func forbidden(_ verb: String, _ field: String, _ cls: String = "_User") -> JSON {
        ["code": 119, "error": .string("This user is not allowed to \(verb) \(field) on class \(cls)")]
    }

    /// `^` and the first three characters of `text`, regex-escaped.
    func prefixPattern(_ text: String) -> String { "^" + NSRegularExpression.escapedPattern(for: String(text.prefix(3))) }

    @Test func accessTokenOracleIsRefusedOnEveryPath() async throws {
        let v = try await victim(0)
        let whereJSON: JSON = ["fbId": .string(v.fbId), "authData.facebook.access_token": ["$regex": .string(prefixPattern(v.accessToken))]]
        let refused = Self.forbidden("query", "authData")

        // The finding, exactly: anonymous, count=1&limit=0.
        let anonymous = try await s.request("GET", "/users?count=1&limit=0&where=" + enc(whereJSON))
        #expect(anonymous.status == 400)
        #expect(anonymous.json == refused)
        // A session of a stranger, of the victim's friend and of the victim: refused the same way.
        let (_, stranger) = try await s.signUp()
        for key in [ParseTestServer.Key.session(stranger), .session(v.friendSession), .session(v.session)] {
            #expect(try await s.request("GET", "/users?count=1&limit=0&where=" + enc(whereJSON), key: key).json == refused)
        }
        // Through /classes/_User, nested in $or / $and / $nor, and with other operators.
        #expect(try await s.request("GET", "/classes/_User?count=1&limit=0&where=" + enc(whereJSON)).json == refused)
        for op in ["$or", "$and", "$nor"] {
            let nested: JSON = [op: [["fbId": "nobody"], ["authData.facebook.access_token": ["$regex": "^E"]]]]
            #expect(try await s.request("GET", "/users?count=1&limit=0&where=" + enc(nested)).json == refused, "\(op)")
        }
        let deep: JSON = ["$or": [["$and": [["fbId": .string(v.fbId)], ["$nor": [["authData": ["$exists": false]]]]]]]]
        #expect(try await s.request("GET", "/users?count=1&limit=0&where=" + enc(deep)).json == refused)
        for constraint: JSON in [["$gt": "E"], ["$exists": true], ["$in": [.string(v.accessToken)]], .string(v.accessToken)] {
            let w: JSON = ["authData.facebook.access_token": constraint]
            #expect(try await s.request("GET", "/users?count=1&limit=0&where=" + enc(w)).json == refused)
        }
        #expect(try await s.request("GET", "/users?where=" + enc(["authData.facebook.id": .string(v.fbId)])).json == refused)
        #expect(try await s.request("GET", "/users?where=" + enc(["authData": ["$exists": true]])).json == refused)

        // Sorting by the token is the same oracle.
        let sorted = try await s.request("GET", "/users?order=authData.facebook.access_token&limit=2")
        #expect(sorted.json == Self.forbidden("sort by", "authData"))
        #expect(try await s.request("GET", "/users?order=-authData&limit=2", key: .session(v.session)).json == Self.forbidden("sort by", "authData"))

        // _method: GET in a POST body, and a GET inside a batch.
        let method = try await s.request("POST", "/users", json: ["_method": "GET", "where": whereJSON, "count": 1, "limit": 0])
        #expect(method.json == refused)
        let batch = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "GET", "path": "/parse/users", "body": ["where": whereJSON, "count": 1, "limit": 0]],
            ["method": "GET", "path": "/parse/classes/_User", "body": ["order": "authData.facebook.access_token"]],
        ]])
        #expect(batch.status == 200)
        #expect(batch.json == [["error": refused], ["error": Self.forbidden("sort by", "authData")]])

        // The master key may.
        let master = try await s.request("GET", "/users?count=1&limit=0&where=" + enc(whereJSON), key: .master(nil))
        #expect(master.status == 200)
        #expect(master.json == ["results": [], "count": 1])
    }

    @Test func emailIsQueriedByTheMasterKeyAlone() async throws {
        let v = try await victim(1)
        let whereJSON: JSON = ["email": ["$regex": "^jonah\\.private\\."]]
        let refused = Self.forbidden("query", "email")
        #expect(try await s.request("GET", "/users?count=1&limit=0&where=" + enc(whereJSON)).json == refused)
        // Even its own user: a where on email can't be known to match only them.
        #expect(try await s.request("GET", "/users?count=1&limit=0&where=" + enc(whereJSON), key: .session(v.session)).json == refused)
        #expect(try await s.request("GET", "/users?where=" + enc(["$or": [["email": .string(v.email)]]]), key: .session(v.friendSession)).json == refused)
        #expect(try await s.request("GET", "/users?order=email").json == Self.forbidden("sort by", "email"))
        #expect(try await s.request("POST", "/users", json: ["_method": "GET", "where": whereJSON, "count": true]).json == refused)
        let master = try await s.request("GET", "/users?where=" + enc(["email": .string(v.email)]), key: .master(nil))
        #expect(master.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(v.objectId)])
        #expect(master.json["results"]?.arrayValue?.first?["authData"]?["facebook"]?["id"]?.stringValue == v.fbId)
    }

    @Test func resultsKeysExcludeKeysAndIncludeNeverCarryThem() async throws {
        let v = try await victim(2)
        // Its own user sees its email, never authData (not in /users/me, GET, keys, or a login response).
        let me = try await s.request("GET", "/users/me", key: .session(v.session))
        #expect(me.json["email"]?.stringValue == v.email)
        #expect(me.json["authData"] == nil)
        #expect(me.json["sessionToken"]?.stringValue == v.session)
        let own = try await s.request("GET", "/users/\(v.objectId)", key: .session(v.session))
        #expect(own.json["email"]?.stringValue == v.email && own.json["authData"] == nil)
        // Naming one in `keys` is refused like a `where` on it, even by the user itself.
        let ownKeys = try await s.request("GET", "/users/\(v.objectId)?keys=authData,email", key: .session(v.session))
        #expect(ownKeys.json == Self.forbidden("query", "authData", "_User"))
        let relogin = try await s.request("POST", "/users", json: ["authData": ["facebook": [
            "id": .string(v.fbId), "access_token": .string(try await fb.token(for: v.fbId)), "expiration_date": "2027-01-01T00:00:00.000Z"]]])
        #expect(relogin.status == 200)
        #expect(relogin.json["authData"] == nil)
        #expect(relogin.json["email"]?.stringValue == v.email)

        // A friend asking for them by keys is refused; asking for the view's fields gets only those.
        let byFriend = try await s.request("GET", "/users/\(v.objectId)?keys=authData,email,name", key: .session(v.friendSession))
        #expect(byFriend.status == 400)
        #expect(byFriend.json == Self.forbidden("query", "authData", "_User"))
        let found = try await s.request("GET", "/users?keys=%5B%22email%22%5D&where=" + enc(["objectId": .string(v.objectId)]),
                                        key: .session(v.friendSession))
        #expect(found.json == Self.forbidden("query", "email", "_User"))
        let named = try await s.request("GET", "/users?keys=name,username&where=" + enc(["objectId": .string(v.objectId)]),
                                        key: .session(v.friendSession))
        #expect(named.json == ["results": [["objectId": .string(v.objectId), "name": MockFacebookProcess.fixture[v.fbId]?["name"] ?? .null]]])
        let excluded = try await s.request("GET", "/users?excludeKeys=name&where=" + enc(["objectId": .string(v.objectId)]), key: .session(v.friendSession))
        #expect(excluded.json == ["results": [["objectId": .string(v.objectId), "fbId": .string(v.fbId)]]])

        // include of the author of a photo: no authData, no email, at any depth, through _method and batch too.
        let image = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "mine"], key: .session(v.session))
            .json["objectId"]?.stringValue)
        let comment = try #require(try await s.request("POST", "/classes/WallImageComment", json: [
            "comment": "hello", "imageObjectId": .string(image),
            "image": ["__type": "Pointer", "className": "WallImage", "objectId": .string(image)],
        ], key: .session(v.session)).json["objectId"]?.stringValue)
        let expectedUser: JSON = ["__type": "Object", "className": "_User", "objectId": .string(v.objectId),
                                  "name": MockFacebookProcess.fixture[v.fbId]?["name"] ?? .null, "fbId": .string(v.fbId)]
        let included = try await s.request("GET", "/classes/WallImage/\(image)?include=user&keys=user,user.email,user.authData",
                                           key: .session(v.friendSession))
        #expect(included.json["user"] == expectedUser)
        let nested = try await s.request("POST", "/classes/WallImageComment", json: [
            "_method": "GET", "where": ["objectId": .string(comment)], "include": ["image.user", "user"],
        ], key: .session(v.friendSession))
        #expect(nested.json["results"]?.arrayValue?.first?["image"]?["user"] == expectedUser)
        #expect(nested.json["results"]?.arrayValue?.first?["user"] == expectedUser)
        let batch = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "GET", "path": .string("/parse/classes/WallImage/\(image)"), "body": ["include": "user"]],
        ]], key: .session(v.friendSession))
        #expect(batch.json.arrayValue?.first?["success"]?["user"] == expectedUser)
    }

    @Test func sessionTokensAndInternalColumns() async throws {
        let (uid, first) = try await s.signUp()
        let name = try #require(try await s.request("GET", "/users/me", key: .session(first)).json["username"]?.stringValue)
        let second = try #require(try await s.request("POST", "/login", json: ["username": .string(name), "password": "secret-pw"])
            .json["sessionToken"]?.stringValue)
        // Only the caller's own session shows its token.
        let list = try await s.request("GET", "/sessions", key: .session(first))
        let tokens = list.json["results"]?.arrayValue?.map { $0["sessionToken"] } ?? []
        #expect(tokens.count == 2)
        #expect(Set(tokens.map { $0?.stringValue ?? "hidden" }) == [first, "hidden"])
        // Querying or sorting by sessionToken would reveal the other one: refused.
        let oracle = try await s.request("GET", "/sessions?count=1&limit=0&where=" + enc(["sessionToken": ["$regex": .string("^" + second.prefix(5))]]),
                                         key: .session(first))
        #expect(oracle.json == Self.forbidden("query", "sessionToken", "_Session"))
        #expect(try await s.request("GET", "/sessions?order=sessionToken", key: .session(first)).json == Self.forbidden("sort by", "sessionToken", "_Session"))
        // `_` columns: not a valid key for anyone but in no result either.
        let hashed = try await s.request("GET", "/users?count=1&limit=0&where=" + enc(["_hashed_password": ["$exists": true]]), key: .session(first))
        #expect(hashed.json == ["code": 105, "error": "Invalid key name: _hashed_password"])
        #expect(try await s.request("GET", "/users?order=_hashed_password", key: .session(first)).json["code"] == 105)
        let own = try await s.request("GET", "/users/\(uid)?keys=_hashed_password,sessionToken", key: .session(first))
        #expect(own.json == ["code": 105, "error": "Invalid key name: _hashed_password"])
        let ownToken = try await s.request("GET", "/users/\(uid)?keys=sessionToken", key: .session(first))
        #expect(ownToken.json == Self.forbidden("query", "sessionToken", "_User"))
        // The master key sees every session's token.
        let all = try await s.request("GET", "/sessions?where=" + enc(["user": ["__type": "Pointer", "className": "_User", "objectId": .string(uid)]]),
                                      key: .master(nil))
        #expect(Set(all.json["results"]?.arrayValue?.compactMap { $0["sessionToken"]?.stringValue } ?? []) == [first, second])
    }
}
