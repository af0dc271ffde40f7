import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// Sign-up, login, logout, `users/me`, `sessions/me`, password hashing and user protection.
@Suite struct UserTests {
    let s = sharedServer

    @Test func signUpLoginLogout() async throws {
        let name = "u_\(UUID().uuidString.prefix(8))"
        let su = try await s.request("POST", "/users", json: ["username": .string(name), "password": "p4ss word", "email": .string("\(name)@example.com")])
        #expect(su.status == 201)
        let id = try #require(su.json["objectId"]?.stringValue)
        let token = try #require(su.json["sessionToken"]?.stringValue)
        #expect(token.range(of: #"^r:[0-9a-f]{32}$"#, options: .regularExpression) != nil)
        #expect(su.header("Location") == "\(s.baseURL)/users/\(id)")
        #expect(su.json["password"] == nil)

        let me = try await s.request("GET", "/users/me", key: .session(token))
        #expect(me.status == 200)
        #expect(me.json["username"]?.stringValue == name)
        #expect(me.json["sessionToken"]?.stringValue == token)
        #expect(me.json["password"] == nil)
        #expect(me.json["_hashed_password"] == nil)
        #expect(me.json["email"]?.stringValue == "\(name)@example.com")

        let sess = try await s.request("GET", "/sessions/me", key: .session(token))
        #expect(sess.json["sessionToken"]?.stringValue == token)
        #expect(sess.json["user"] == ["__type": "Pointer", "className": "_User", "objectId": .string(id)])
        #expect(sess.json["createdWith"] == ["action": "signup", "authProvider": "password"])
        #expect(sess.json["expiresAt"]?["__type"] == "Date")

        // qs-parse-rest logs in with GET /login?username=&password=
        let login = try await s.request("GET", "/login?username=\(name)&password=p4ss%20word")
        #expect(login.status == 200)
        let token2 = try #require(login.json["sessionToken"]?.stringValue)
        #expect(token2 != token)
        #expect(login.json["objectId"]?.stringValue == id)
        let post = try await s.request("POST", "/login", json: ["username": .string(name), "password": "p4ss word"])
        #expect(post.status == 200)

        let bad = try await s.request("POST", "/login", json: ["username": .string(name), "password": "wrong"])
        #expect(bad.status == 404)
        #expect(bad.json == ["code": 101, "error": "Invalid username/password."])
        let nobody = try await s.request("POST", "/login", json: ["username": "no-such-user-xyz", "password": "x"])
        #expect(nobody.json == ["code": 101, "error": "Invalid username/password."])
        #expect(try await s.request("POST", "/login", json: ["password": "x"]).json["code"] == 200)
        #expect(try await s.request("POST", "/login", json: ["username": "x"]).json["code"] == 201)

        let out = try await s.request("POST", "/logout", key: .session(token2))
        #expect(out.json == [:])
        let after = try await s.request("GET", "/users/me", key: .session(token2))
        #expect(after.status == 400)
        #expect(after.json == ["code": 209, "error": "Invalid session token"])
        #expect(try await s.request("GET", "/users/me", key: .session(token)).status == 200)
    }

    @Test func signUpErrors() async throws {
        let name = "dup_\(UUID().uuidString.prefix(8))"
        _ = try await s.signUp(name)
        let dup = try await s.request("POST", "/users", json: ["username": .string(name), "password": "x"])
        #expect(dup.json == ["code": 202, "error": "Account already exists for this username."])
        #expect(try await s.request("POST", "/users", json: ["password": "x"]).json["code"] == 200)
        #expect(try await s.request("POST", "/users", json: ["username": "someone_new_1"]).json["code"] == 201)
        let fb = try await s.request("POST", "/users", json: ["authData": ["twitter": ["id": "1"]]])
        #expect(fb.json["code"] == 252)
        let e1 = "e_\(UUID().uuidString.prefix(6))@example.com"
        _ = try await s.request("POST", "/users", json: ["username": .string("e1_" + name), "password": "x", "email": .string(e1)])
        let e2 = try await s.request("POST", "/users", json: ["username": .string("e2_" + name), "password": "x", "email": .string(e1)])
        #expect(e2.json["code"] == 203)
    }

    @Test func usersAreProtected() async throws {
        let (aliceId, alice) = try await s.signUp()
        let (_, bob) = try await s.signUp()
        let bobPut = try await s.request("PUT", "/users/\(aliceId)", json: ["username": "hijack"], key: .session(bob))
        #expect(bobPut.json == ["code": 206, "error": .string("Cannot modify user \(aliceId).")])
        // Users are private: bob is not alice's friend (PrivateUserTests has the whole rule).
        let seen = try await s.request("GET", "/users/\(aliceId)", key: .session(bob))
        #expect(seen.json == ["code": 101, "error": "Object not found."])
        let own = try await s.request("GET", "/users/\(aliceId)", key: .session(alice))
        #expect(own.status == 200)
        #expect(own.json["_hashed_password"] == nil)
        #expect(own.json["authData"] == nil)
        #expect(own.json["sessionToken"] == nil)
        // Changing the password revokes other sessions but keeps the current one.
        let name = try #require(try await s.request("GET", "/users/me", key: .session(alice)).json["username"]?.stringValue)
        let other = try #require(try await s.request("POST", "/login", json: ["username": .string(name), "password": "secret-pw"]).json["sessionToken"]?.stringValue)
        let pw = try await s.request("PUT", "/users/\(aliceId)", json: ["password": "new-secret"], key: .session(alice))
        #expect(pw.status == 200)
        #expect(try await s.request("GET", "/users/me", key: .session(other)).json["code"] == 209)
        #expect(try await s.request("GET", "/users/me", key: .session(alice)).status == 200)
        #expect(try await s.request("POST", "/login", json: ["username": .string(name), "password": "new-secret"]).status == 200)
        // Sessions of others are invisible.
        let list = try await s.request("GET", "/sessions", key: .session(bob))
        #expect(list.json["results"]?.arrayValue?.allSatisfy { $0["user"]?["objectId"]?.stringValue != aliceId } == true)
        let del = try await s.request("DELETE", "/users/\(aliceId)", key: .session(bob))
        #expect(del.json["code"] == 206)
    }

    @Test func passwordIsStoredAsBcrypt() async throws {
        let (id, _) = try await s.signUp()
        // Read the stored row straight from the database: the clear password must not be there.
        let doc = try s.databaseQuery("SELECT doc FROM \"c__User\" WHERE \"objectId\" = '\(id)'")
        #expect(!doc.contains("secret-pw"))
        #expect(doc.range(of: #"\$2b\$10\$[./A-Za-z0-9]{53}"#, options: .regularExpression) != nil)
    }
}
