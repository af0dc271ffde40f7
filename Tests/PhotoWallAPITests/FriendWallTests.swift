import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// The wall's ownership and friends-only visibility for Facebook users, with the friend list
/// synced from the mock provider at login and after the TTL (1 s here). In process against
/// SQLite: PhotoWallWallTests' WallRulesTests.
@Suite(.serialized) struct FriendWallTests {
    static let env = MockFacebookProcess.withServer(extraArgs: ["--friend-sync-ttl", "1"])
    var s: ParseTestServer { Self.env.0 }
    var fb: MockFacebookProcess { Self.env.1 }

    @Test func serverSetsTheWallOwner() async throws {
        let id = MockFacebookProcess.appUsers()[4]
        let (uid, session, _) = try await fb.logIn(id, on: s)
        let made = try await s.request("POST", "/classes/WallImage", json: ["caption": "mine"], key: .session(session))
        #expect(made.status == 201)
        #expect(made.json["userFBId"]?.stringValue == id)
        #expect(made.json["user"] == ["__type": "Pointer", "className": "_User", "objectId": .string(uid)])
        let forgedFB = try await s.request("POST", "/classes/WallImage", json: ["userFBId": "100000000000001"], key: .session(session))
        #expect(forgedFB.status == 400)
        #expect(forgedFB.json["code"] == 119)
        let forgedUser = try await s.request("POST", "/classes/WallImage", json: [
            "user": ["__type": "Pointer", "className": "_User", "objectId": "someoneElse"],
        ], key: .session(session))
        #expect(forgedUser.json["code"] == 119)
        let imageId = try #require(made.json["objectId"]?.stringValue)
        let comment = try await s.request("POST", "/classes/WallImageComment", json: ["comment": "hi", "imageObjectId": .string(imageId)],
                                          key: .session(session))
        #expect(comment.status == 201)
        #expect(comment.json["userFBId"]?.stringValue == id)
        let orphan = try await s.request("POST", "/classes/WallImageComment", json: ["comment": "hi", "imageObjectId": "nope"], key: .session(session))
        #expect(orphan.json["code"] == 101)
        let anonymous = try await s.request("POST", "/classes/WallImage", json: ["caption": "x"], key: .app)
        #expect(anonymous.json["code"] == 209)
    }

    @Test func friendsSeeTheWallStrangersDoNot() async throws {
        let fixture = MockFacebookProcess.fixture
        let appUsers = Set(MockFacebookProcess.appUsers())
        // An owner with an app-using friend, and a stranger who is neither.
        let owner = try #require(MockFacebookProcess.appUsers(minFriends: 2).dropFirst(5).first)
        let ownerFriends = Set((fixture[owner]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue })
        let friend = try #require(ownerFriends.filter { appUsers.contains($0) }.sorted().first)
        let stranger = try #require(appUsers.subtracting(ownerFriends).subtracting([owner]).sorted().first)
        let (ownerId, ownerSession, _) = try await fb.logIn(owner, on: s)
        let friendSession = try await fb.logIn(friend, on: s).session
        let strangerSession = try await fb.logIn(stranger, on: s).session

        let image = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "visible?"], key: .session(ownerSession))
            .json["objectId"]?.stringValue)
        let ownerComment = try #require(try await s.request("POST", "/classes/WallImageComment", json: [
            "comment": "my own", "imageObjectId": .string(image),
        ], key: .session(ownerSession)).json["objectId"]?.stringValue)
        let byOwner = enc(["userFBId": .string(owner)])

        // The friend sees the image and its comments, by GET, query and include.
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(friendSession)).status == 200)
        #expect(try await s.request("GET", "/classes/WallImage?where=\(byOwner)", key: .session(friendSession)).json["results"]?.arrayValue?.count == 1)
        let friendComment = try await s.request("POST", "/classes/WallImageComment", json: ["comment": "nice", "imageObjectId": .string(image),
            "image": ["__type": "Pointer", "className": "WallImage", "objectId": .string(image)]], key: .session(friendSession))
        #expect(friendComment.status == 201)
        let friendCommentId = try #require(friendComment.json["objectId"]?.stringValue)
        let withInclude = try await s.request("GET", "/classes/WallImageComment/\(friendCommentId)?include=image", key: .session(friendSession))
        #expect(withInclude.json["image"]?["caption"] == "visible?")

        // The stranger sees nothing: GET, query, count, include, and can't comment.
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(strangerSession)).json["code"] == 101)
        #expect(try await s.request("GET", "/classes/WallImage?where=\(byOwner)", key: .session(strangerSession)).json["results"] == [])
        #expect(try await s.request("GET", "/classes/WallImage?count=1&limit=0&where=\(byOwner)", key: .session(strangerSession)).json["count"] == 0)
        #expect(try await s.request("GET", "/classes/WallImageComment/\(ownerComment)", key: .session(strangerSession)).json["code"] == 101)
        let byImage = enc(["imageObjectId": .string(image)])
        #expect(try await s.request("GET", "/classes/WallImageComment?where=\(byImage)", key: .session(strangerSession)).json["results"] == [])
        #expect(try await s.request("POST", "/classes/WallImageComment", json: ["comment": "hi", "imageObjectId": .string(image)],
                                    key: .session(strangerSession)).json["code"] == 101)
        #expect(try await s.request("GET", "/classes/WallImage?where=\(byOwner)", key: .app).json["results"] == [])

        // Wall files follow the image: signed URLs for those who may see it, nothing for a stranger.
        let photo = try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Samples/photos/landscape_o1.jpg"))
        let upload = try await s.request("POST", "/files/wall.jpg", body: photo, key: .session(ownerSession), headers: ["Content-Type": "image/jpeg"])
        let fileName = try #require(upload.json["name"]?.stringValue)
        let plainURL = "\(s.baseURL)/files/\(s.appId)/\(fileName)"
        let photoPost = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(fileName)]],
                                            key: .session(ownerSession))
        let photoId = try #require(photoPost.json["objectId"]?.stringValue)
        let signed = try #require(try await s.request("GET", "/classes/WallImage/\(photoId)", key: .session(friendSession)).json["image"]?["url"]?.stringValue)
        #expect(signed.hasPrefix(plainURL + "?exp="))
        #expect(try await s.request("GET", signed, key: .none).body == photo, "a friend's signed URL works without headers")
        let thumbSigned = try #require(photoPost.json["thumbnail"]?["url"]?.stringValue)
        #expect(try await s.request("GET", thumbSigned, key: .none).status == 200, "the owner's create response carries signed URLs")
        #expect(try await s.request("GET", plainURL, key: .none).status == 404, "no signature, no session: not served")
        #expect(try await s.request("GET", plainURL, key: .session(strangerSession)).status == 404)
        #expect(try await s.request("GET", plainURL, key: .session(friendSession)).status == 200)
        let tampered = signed.replacingOccurrences(of: "sig=", with: "sig=0")
        #expect(try await s.request("GET", tampered, key: .none).status == 404)
        let expired = signed.replacingOccurrences(of: #"exp=\d+"#, with: "exp=1000", options: .regularExpression)
        #expect(try await s.request("GET", expired, key: .none).status == 404)

        // The owner narrows the photo's ACL to themselves: to the friend it is gone everywhere GET says
        // so — the feed, its file by session, commenting on it — and back when the ACL opens again.
        func feedIds(_ session: String) async throws -> [String] {
            try await s.request("POST", "/functions/feed", json: ["limit": 100], key: .session(session))
                .json["result"]?["images"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? []
        }
        #expect(try await feedIds(friendSession).contains(photoId))
        let ownerOnly: JSON = [.init(ownerId): ["read": true, "write": true]]
        #expect(try await s.request("PUT", "/classes/WallImage/\(photoId)", json: ["ACL": ownerOnly], key: .session(ownerSession)).status == 200)
        #expect(try await s.request("GET", "/classes/WallImage/\(photoId)", key: .session(friendSession)).json["code"] == 101)
        #expect(try await !feedIds(friendSession).contains(photoId), "the feed hides what GET hides")
        #expect(try await feedIds(ownerSession).contains(photoId))
        #expect(try await s.request("GET", plainURL, key: .session(friendSession)).status == 404, "the file by session follows the ACL")
        #expect(try await s.request("GET", plainURL, key: .session(ownerSession)).status == 200)
        #expect(try await s.request("POST", "/classes/WallImageComment", json: ["comment": "hidden?", "imageObjectId": .string(photoId)],
                                    key: .session(friendSession)).json["code"] == 101, "no comment on an image you can't see")
        // A comment only its author may read is not among the latest comments others see.
        let secret = try #require(try await s.request("POST", "/classes/WallImageComment", json: [
            "comment": "owner only", "imageObjectId": .string(image), "ACL": ownerOnly,
        ], key: .session(ownerSession)).json["objectId"]?.stringValue)
        func latest(_ session: String) async throws -> (ids: [String], count: Int?) {
            let images = try await s.request("POST", "/functions/feed", json: ["limit": 100], key: .session(session)).json["result"]?["images"]?.arrayValue ?? []
            let shown = images.first { $0["objectId"]?.stringValue == image }
            return (shown?["comments"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? [], shown?["commentCount"]?.intValue)
        }
        let (friendSees, ownerSees) = (try await latest(friendSession), try await latest(ownerSession))
        #expect(!friendSees.ids.contains(secret))
        #expect(ownerSees.ids.contains(secret))
        #expect(friendSees.count.map { $0 + 1 } == ownerSees.count, "the count leaves out what the ACL hides")
        #expect(try await s.request("DELETE", "/classes/WallImageComment/\(secret)", key: .session(ownerSession)).status == 200)
        #expect(try await s.request("PUT", "/classes/WallImage/\(photoId)", json: ["ACL": ["*": ["read": true], .init(ownerId): ["read": true, "write": true]]],
                                    key: .session(ownerSession)).status == 200)
        #expect(try await feedIds(friendSession).contains(photoId))

        // Deleting comments: not the stranger; the image's owner may delete the friend's comment.
        #expect(try await s.request("DELETE", "/classes/WallImageComment/\(friendCommentId)", key: .session(strangerSession)).json["code"] == 101)
        #expect(try await s.request("PUT", "/classes/WallImageComment/\(friendCommentId)", json: ["comment": "edited"],
                                    key: .session(ownerSession)).json["code"] == 101, "the owner may delete, not edit, others' comments")
        #expect(try await s.request("DELETE", "/classes/WallImageComment/\(friendCommentId)", key: .session(ownerSession)).status == 200)

        // The friendship ends at the provider: after the next sync (TTL 1 s) the friend loses access.
        try await fb.post("/__control/friendships/\(owner)/\(friend)", method: "DELETE")
        try await Task.sleep(for: .milliseconds(1200))
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(friendSession)).json["code"] == 101)
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(ownerSession)).status == 200)
        try await fb.post("/__control/friendships/\(owner)/\(friend)", method: "PUT")
    }
}

/// Friend lists are served from memory between syncs (`FriendService`, 5 s on SQLite), and every sync in
/// the process forgets the synced user's list at once: a friendship ended at the provider stops counting
/// from the friend's next login, not up to 5 s later. The sync TTL is the default hour here, so only the
/// login syncs.
@Suite(.serialized) struct FriendListCacheTests {
    static let env = MockFacebookProcess.withServer()
    var s: ParseTestServer { Self.env.0 }
    var fb: MockFacebookProcess { Self.env.1 }

    @Test func aLoginSyncIsSeenByTheNextRead() async throws {
        let appUsers = Set(MockFacebookProcess.appUsers())
        let owner = try #require(MockFacebookProcess.appUsers(minFriends: 2).dropFirst(7).first)
        let ownerFriends = Set((MockFacebookProcess.fixture[owner]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue })
        let friend = try #require(ownerFriends.filter { appUsers.contains($0) }.sorted().last)
        let ownerSession = try await fb.logIn(owner, on: s).session
        let friendSession = try await fb.logIn(friend, on: s).session
        let image = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "cached?"], key: .session(ownerSession))
            .json["objectId"]?.stringValue)
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(friendSession)).status == 200)

        try await fb.post("/__control/friendships/\(owner)/\(friend)", method: "DELETE")
        // No sync yet (the list is an hour fresh): the friendship still counts, as without a cache.
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(friendSession)).status == 200)
        // The friend logs in again: the sync replaces the list and the very next read follows it.
        let afterUnfriend = try await fb.logIn(friend, on: s).session
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(friendSession)).json["code"] == 101)
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(afterUnfriend)).json["code"] == 101)

        try await fb.post("/__control/friendships/\(owner)/\(friend)", method: "PUT")
        _ = try await fb.logIn(friend, on: s)
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(friendSession)).status == 200)
    }
}
