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
        let nobodyConfig = s.dataDir.appendingPathComponent("cli-\(UUID().uuidString.prefix(6))").path
        let errors = Pipe()
        let nobody = try Child(TestPaths.binary, ["login", "--facebook", "--as", "nobody"] + target,
                               environment: ["XDG_CONFIG_HOME": nobodyConfig, "XDG_CACHE_HOME": nobodyConfig, "HOME": nobodyConfig],
                               stdin: .null, stdout: .null, stderr: .pipe(errors))
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
