import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// Facebook login through the real mock Graph provider, as parse-server validates it
/// (`/app` app-id check, `/me` id check, `appsecret_proof`), and the friend sync at login.
@Suite(.serialized) struct FacebookLoginTests {
    static let env = MockFacebookProcess.withServer(extraArgs: ["--friend-sync-ttl", "1"])
    var s: ParseTestServer { Self.env.0 }
    var fb: MockFacebookProcess { Self.env.1 }

    func authData(_ id: String, _ token: String) -> JSON {
        ["authData": ["facebook": ["id": .string(id), "access_token": .string(token), "expiration_date": "2027-01-01T00:00:00.000Z"]]]
    }

    @Test func signUpThenLogInWithAuthData() async throws {
        let users = MockFacebookProcess.appUsers(minFriends: 3)
        let id = users[0]
        let token = try await fb.token(for: id)
        let first = try await s.request("POST", "/users", json: authData(id, token))
        #expect(first.status == 201, "\(first.text)")
        let objectId = try #require(first.json["objectId"]?.stringValue)
        #expect(first.json["username"]?.stringValue?.count == 25)
        #expect(first.json["sessionToken"]?.stringValue?.hasPrefix("r:") == true)
        #expect(first.header("Location") == "\(s.baseURL)/users/\(objectId)")
        // Every field the server set is in the 201 (issue 12.2), as in the 200 below: an SDK merges it.
        #expect(first.json["fbId"]?.stringValue == id)
        #expect(first.json["name"] == MockFacebookProcess.fixture[id]?["name"])
        #expect(first.json["createdAt"]?.stringValue == first.json["updatedAt"]?.stringValue)
        #expect(first.json["authData"] == nil)

        let again = try await s.request("POST", "/users", json: authData(id, try await fb.token(for: id)))
        #expect(again.status == 200)
        #expect(again.json["objectId"]?.stringValue == objectId)
        #expect(again.json["fbId"]?.stringValue == id, "fbId comes from the provider")
        #expect(again.json["name"] == MockFacebookProcess.fixture[id]?["name"])
        #expect(again.json.objectValue?.keys.sorted() == first.json.objectValue?.keys.sorted())
        #expect(again.json.objectValue?.keys.sorted() == ["ACL", "createdAt", "fbId", "name", "objectId", "sessionToken", "updatedAt", "username"])
        let session = try #require(again.json["sessionToken"]?.stringValue)
        let me = try await s.request("GET", "/users/me", key: .session(session))
        #expect(me.json["fbId"]?.stringValue == id)
        #expect(me.json["authData"] == nil, "authData is read by the master key alone")
        let stored = try await s.request("GET", "/users/\(objectId)", key: .master(nil))
        #expect(stored.json["authData"]?["facebook"]?["id"]?.stringValue == id)
        let sess = try await s.request("GET", "/sessions/me", key: .session(session))
        #expect(sess.json["createdWith"] == ["action": "login", "authProvider": "facebook"])

        // The friend list was synced at login: exactly the fixture friends who use the app.
        let expected = Set((MockFacebookProcess.fixture[id]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue }
            .filter { MockFacebookProcess.fixture[$0]?["app_user"] != false })
        #expect(Set(try friendsInDatabase(of: id)) == expected)
    }

    @Test func rejectedTokens() async throws {
        let users = MockFacebookProcess.appUsers()
        let (a, b) = (users[1], users[2])
        let tokenA = try await fb.token(for: a)
        // A's token presented as B: the provider's /me says A.
        let forged = try await s.request("POST", "/users", json: authData(b, tokenA))
        #expect(forged.status == 404)
        #expect(forged.json == ["code": 101, "error": "Facebook auth is invalid for this user."])
        // Expired and revoked tokens.
        let expiring = try await fb.token(for: a)
        try await fb.post("/__control/tokens/\(expiring)/expire")
        #expect(try await s.request("POST", "/users", json: authData(a, expiring)).json["code"] == 101)
        let revoked = try await fb.token(for: a)
        try await fb.post("/__control/tokens/\(revoked)/revoke")
        #expect(try await s.request("POST", "/users", json: authData(a, revoked)).json["code"] == 101)
        #expect(try await s.request("POST", "/users", json: authData(a, "not-a-token")).json["code"] == 101)
        // Unknown provider, missing id, null.
        #expect(try await s.request("POST", "/users", json: ["authData": ["myspace": ["id": "1", "access_token": "x"]]]).json["code"] == 252)
        #expect(try await s.request("POST", "/users", json: ["authData": ["facebook": ["access_token": "x"]]]).json["code"] == 252)
        #expect(try await s.request("POST", "/users", json: ["authData": ["facebook": nil]]).json["code"] == 252)
    }

    @Test func linkAndUnlink() async throws {
        let users = MockFacebookProcess.appUsers()
        let id = users[3]
        let (uid, session) = try await s.signUp()
        let link = try await s.request("PUT", "/users/\(uid)", json: authData(id, try await fb.token(for: id)), key: .session(session))
        #expect(link.status == 200, "\(link.text)")
        let me = try await s.request("GET", "/users/me", key: .session(session))
        #expect(me.json["fbId"]?.stringValue == id)
        // Logging in with Facebook now finds the linked user.
        let login = try await s.request("POST", "/users", json: authData(id, try await fb.token(for: id)))
        #expect(login.status == 200)
        #expect(login.json["objectId"]?.stringValue == uid)
        // Another user can't link the same Facebook account.
        let (otherId, otherSession) = try await s.signUp()
        let steal = try await s.request("PUT", "/users/\(otherId)", json: authData(id, try await fb.token(for: id)), key: .session(otherSession))
        #expect(steal.json == ["code": 208, "error": "this auth is already used"])
        // Unlink.
        let unlink = try await s.request("PUT", "/users/\(uid)", json: ["authData": ["facebook": nil]], key: .session(session))
        #expect(unlink.status == 200)
        let after = try await s.request("GET", "/users/me", key: .session(session))
        #expect(after.json["fbId"] == nil)
        #expect(after.json["authData"]?["facebook"] == nil)
    }

    @Test func serverSetsTheWallOwner() async throws {
        let id = MockFacebookProcess.appUsers()[4]
        let login = try await s.request("POST", "/users", json: authData(id, try await fb.token(for: id)))
        let session = try #require(login.json["sessionToken"]?.stringValue)
        let uid = try #require(login.json["objectId"]?.stringValue)
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

    /// Logs a fixture user in with Facebook. - Returns: (objectId, session token).
    func login(_ fbId: String) async throws -> (String, String) {
        let r = try await s.request("POST", "/users", json: authData(fbId, try await fb.token(for: fbId)))
        guard let id = r.json["objectId"]?.stringValue, let t = r.json["sessionToken"]?.stringValue else {
            throw TestServerError(description: "login failed: \(r.text)")
        }
        return (id, t)
    }

    @Test func friendsSeeTheWallStrangersDoNot() async throws {
        let fixture = MockFacebookProcess.fixture
        let appUsers = Set(MockFacebookProcess.appUsers())
        // An owner with an app-using friend, and a stranger who is neither.
        let owner = try #require(MockFacebookProcess.appUsers(minFriends: 2).dropFirst(5).first)
        let ownerFriends = Set((fixture[owner]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue })
        let friend = try #require(ownerFriends.filter { appUsers.contains($0) }.sorted().first)
        let stranger = try #require(appUsers.subtracting(ownerFriends).subtracting([owner]).sorted().first)
        let (ownerId, ownerSession) = try await login(owner)
        let (_, friendSession) = try await login(friend)
        let (_, strangerSession) = try await login(stranger)

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

        // Deleting comments: not the stranger; the image's owner may delete the friend's comment.
        #expect(try await s.request("DELETE", "/classes/WallImageComment/\(friendCommentId)", key: .session(strangerSession)).json["code"] == 101)
        #expect(try await s.request("PUT", "/classes/WallImageComment/\(friendCommentId)", json: ["comment": "edited"],
                                    key: .session(ownerSession)).json["code"] == 101, "the owner may delete, not edit, others' comments")
        #expect(try await s.request("DELETE", "/classes/WallImageComment/\(friendCommentId)", key: .session(ownerSession)).status == 200)
        _ = ownerId

        // The friendship ends at the provider: after the next sync (TTL 1 s) the friend loses access.
        try await fb.post("/__control/friendships/\(owner)/\(friend)", method: "DELETE")
        try await Task.sleep(for: .milliseconds(1200))
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(friendSession)).json["code"] == 101)
        #expect(try await s.request("GET", "/classes/WallImage/\(image)", key: .session(ownerSession)).status == 200)
        try await fb.post("/__control/friendships/\(owner)/\(friend)", method: "PUT")
    }

    @Test func feedPagesThroughFriendsImagesWithoutGapsOrDuplicates() async throws {
        let fixture = MockFacebookProcess.fixture
        let appUsers = Set(MockFacebookProcess.appUsers())
        let viewer = try #require(MockFacebookProcess.appUsers(minFriends: 2).dropFirst(8).first)
        let friends = Set((fixture[viewer]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue }).intersection(appUsers)
        let (f1, f2) = (friends.sorted()[0], friends.sorted()[1])
        let stranger = try #require(appUsers.subtracting(friends).subtracting([viewer]).sorted().dropFirst(3).first)
        var sessions: [String: String] = [:]
        for u in [viewer, f1, f2, stranger] { sessions[u] = try await login(u).1 }

        var mine: [String: String] = [:]  // objectId → author
        for (author, count) in [(viewer, 3), (f1, 4), (f2, 2), (stranger, 3)] {
            for i in 0..<count {
                let r = try await s.request("POST", "/classes/WallImage", json: ["caption": .string("\(author)-\(i)")], key: .session(sessions[author]!))
                let id = try #require(r.json["objectId"]?.stringValue)
                if author != stranger { mine[id] = author }
            }
        }
        // Comments on one of the viewer's images: 4, so the feed shows the newest 3, oldest first.
        let commented = try #require(mine.first { $0.value == viewer }?.key)
        for (i, who) in [viewer, f1, f2, f1].enumerated() {
            let r = try await s.request("POST", "/classes/WallImageComment", json: ["comment": .string("c\(i)"), "imageObjectId": .string(commented)],
                                        key: .session(sessions[who]!))
            #expect(r.status == 201)
        }

        // Page through with limit 4, while a friend posts a new image after the first page.
        var seen: [String] = []
        var cursor: JSON = .null
        var pages = 0
        var lastCreatedAt = "9999"
        repeat {
            let r = try await s.request("POST", "/functions/feed", json: ["limit": 4, "cursor": cursor], key: .session(sessions[viewer]!))
            #expect(r.status == 200, "\(r.text)")
            let images = try #require(r.json["result"]?["images"]?.arrayValue)
            for img in images {
                let id = try #require(img["objectId"]?.stringValue)
                seen.append(id)
                let created = img["createdAt"]?.stringValue ?? ""
                #expect(created <= lastCreatedAt, "newest first")
                lastCreatedAt = created
                if id == commented {
                    #expect(img["commentCount"] == 4)
                    #expect(img["comments"]?.arrayValue?.map { $0["comment"] } == ["c1", "c2", "c3"])
                    #expect(img["comments"]?.arrayValue?.last?["user"]?["fbId"]?.stringValue == f1)
                }
                if let author = mine[id] {
                    #expect(img["user"]?["fbId"]?.stringValue == author)
                    #expect(img["user"]?["name"] == fixture[author]?["name"])
                }
            }
            cursor = r.json["result"]?["nextCursor"] ?? .null
            pages += 1
            if pages == 1 {
                _ = try await s.request("POST", "/classes/WallImage", json: ["caption": "late"], key: .session(sessions[f1]!))
            }
        } while !cursor.isNull && pages < 20
        #expect(seen.count == Set(seen).count, "no duplicates")
        #expect(Set(seen) == Set(mine.keys), "every image of the viewer and friends, none of the stranger's")
        #expect(pages == 3)

        // A fresh first page starts with the late image; a stranger's feed doesn't show the viewer's.
        let fresh = try await s.request("POST", "/functions/feed", json: ["limit": 1], key: .session(sessions[viewer]!))
        #expect(fresh.json["result"]?["images"]?.arrayValue?.first?["caption"] == "late")
        let theirs = try await s.request("POST", "/functions/feed", json: ["limit": 100], key: .session(sessions[stranger]!))
        let theirIds = Set(theirs.json["result"]?["images"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? [])
        #expect(theirIds.isDisjoint(with: Set(mine.filter { $0.value == viewer }.map(\.key))), "not the viewer's own images")
        #expect(try await s.request("POST", "/functions/feed", json: ["cursor": "???"], key: .session(sessions[viewer]!)).json["code"] == 107)
        #expect(try await s.request("POST", "/functions/feed", json: [:], key: .app).json["code"] == 209)
    }

    /// Runs the built `photowall` with a private config folder. - Returns: exit status and stdout.
    func cli(_ args: [String], config: URL) throws -> (Int32, String) {
        let r = try runProcess(TestPaths.binary, args, environment: ["XDG_CONFIG_HOME": config.path, "XDG_CACHE_HOME": config.path])
        return (r.status, r.output)
    }

    @Test func commandLineFacebookLoginFeedAndComment() async throws {
        let config = s.dataDir.appendingPathComponent("cli-\(UUID().uuidString.prefix(6))")
        let target = ["--server", s.baseURL, "--app-id", s.appId]
        #expect(try cli(["feed"] + target, config: config).0 == 2, "not logged in")
        let user = try #require(MockFacebookProcess.appUsers().dropFirst(12).first)
        let login = try cli(["login", "--facebook", "--as", user, "--facebook-url", fb.baseURL, "--facebook-app-id", fb.appId] + target, config: config)
        #expect(login.0 == 0, "\(login.1)")
        #expect(login.1.contains("Facebook \(user)"))
        let sessionFile = config.appendingPathComponent("photowall/session.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: sessionFile.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let token = try #require(try JSON.parse([UInt8](Data(contentsOf: sessionFile)))["sessionToken"]?.stringValue)

        let image = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "from the CLI test"], key: .session(token))
            .json["objectId"]?.stringValue)
        let comment = try cli(["comment", image, "Looks great"] + target, config: config)
        #expect(comment.0 == 0)
        #expect(comment.1.trimmingCharacters(in: .whitespacesAndNewlines).count == 10)
        let feed = try cli(["feed", "--json", "--limit", "5"] + target, config: config)
        #expect(feed.0 == 0)
        let first = try JSON.parse(feed.1)["images"]?.arrayValue?.first
        #expect(first?["objectId"]?.stringValue == image)
        #expect(first?["comments"]?.arrayValue?.map { $0["comment"] } == ["Looks great"])
        let text = try cli(["feed"] + target, config: config)
        #expect(text.1.contains("from the CLI test") && text.1.contains("Looks great"))
        #expect(try cli(["comment", "noSuchImage", "hi"] + target, config: config).0 == 1)
    }

    /// Issue 12 point 5: without `--facebook-url`/`--facebook-app-id`, the CLI takes the provider from
    /// the server's `/config.json` (the web page's runtime config); the flags still override it.
    @Test func commandLineFacebookLoginLearnsTheProviderFromTheServer() async throws {
        let config = s.dataDir.appendingPathComponent("cli-\(UUID().uuidString.prefix(6))")
        let target = ["--server", s.baseURL, "--app-id", s.appId]
        let published = try await s.request("GET", s.baseURL.replacingOccurrences(of: "/parse", with: "") + "/config.json", key: .none)
        #expect(published.json["facebook"]?["graphURL"]?.stringValue == fb.graphURL)
        #expect(published.json["facebook"]?["appId"]?.stringValue == fb.appId)

        let user = try #require(MockFacebookProcess.appUsers().dropFirst(14).first)
        let login = try cli(["login", "--facebook", "--as", user] + target, config: config)
        #expect(login.0 == 0, "\(login.1)")
        #expect(login.1.contains("Facebook \(user)"))
        let token = try #require(try JSON.parse([UInt8](Data(contentsOf: config.appendingPathComponent("photowall/session.json"))))["sessionToken"]?
            .stringValue)
        #expect(try await s.request("GET", "/users/me", key: .session(token)).json["fbId"]?.stringValue == user)

        // The flags still win: an app id the provider doesn't know is refused by it.
        let overridden = try cli(["login", "--facebook", "--as", user, "--facebook-app-id", "999"] + target,
                                 config: s.dataDir.appendingPathComponent("cli-\(UUID().uuidString.prefix(6))"))
        #expect(overridden.0 != 0)
        // A user the provider doesn't know: its page's words on one line, not its HTML.
        let nobody = Process()
        nobody.executableURL = URL(fileURLWithPath: TestPaths.binary)
        nobody.arguments = ["login", "--facebook", "--as", "nobody"] + target
        let nobodyConfig = s.dataDir.appendingPathComponent("cli-\(UUID().uuidString.prefix(6))").path
        nobody.environment = ["XDG_CONFIG_HOME": nobodyConfig, "XDG_CACHE_HOME": nobodyConfig, "HOME": nobodyConfig]
        let errors = Pipe()
        nobody.standardError = errors
        nobody.standardOutput = FileHandle.nullDevice
        try nobody.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        nobody.waitUntilExit()
        #expect(nobody.terminationStatus == 1)
        #expect(stderr == "photowall login: the Facebook dialog refused to log in as \"nobody\" (No fixture user \"nobody\".): "
                + "give --as a user id or name the provider knows (the mock's are in Samples/facebook/users.json)\n")
        // A server without Facebook login says so.
        let plain = try cli(["login", "--facebook", "--as", user, "--server", sharedServer.baseURL, "--app-id", sharedServer.appId],
                            config: s.dataDir.appendingPathComponent("cli-\(UUID().uuidString.prefix(6))"))
        #expect(plain.0 == 1)
        #expect(plain.1.isEmpty)
    }

    @Test func providerDownIsAClearErrorNotAHang() async throws {
        // A server whose Graph URL points at a closed port.
        let dead = try ParseTestServer(extraArgs: ["--facebook-url", "http://127.0.0.1:1/v19.0"])
        let started = Date()
        let r = try await dead.request("POST", "/users", json: authData("100001367487298", "whatever"))
        #expect(r.status == 400)
        #expect(r.json["code"] == 141)
        #expect(r.json["error"]?.stringValue?.hasPrefix("Facebook Graph is unreachable") == true, "\(r.text)")
        #expect(Date().timeIntervalSince(started) < 15)
    }

    /// Reads `_FRIENDS` straight from the server's database (SQLite file or PostgreSQL).
    func friendsInDatabase(of fbId: String) throws -> [String] {
        try s.databaseQuery("SELECT \"friendId\" FROM \"_FRIENDS\" WHERE \"userId\" = '\(fbId)'")
            .split(separator: "\n").map(String.init)
    }
}
