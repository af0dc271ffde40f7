import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// The session cache (`SessionCache`): a token used right after its session ended is refused at once,
/// on every kind of route, without waiting out the cache's lifetime. Each test first uses the token on
/// every route kind (so its session is cached), ends the session, then uses it again at once.
@Suite struct SessionCacheTests {
    let s = sharedServer
    static let invalid: JSON = ["code": 209, "error": "Invalid session token"]

    /// Uses `token` on a JSON route, a class query, `/batch`, a cloud function, a file upload and a tus
    /// creation. - Returns: each route's reply, by name.
    func useEverywhere(_ token: String) async throws -> [String: ParseTestServer.Reply] {
        var out: [String: ParseTestServer.Reply] = [:]
        out["users/me"] = try await s.request("GET", "/users/me", key: .session(token))
        out["classes"] = try await s.request("GET", "/classes/WallImage?limit=1", key: .session(token))
        out["batch"] = try await s.request("POST", "/batch", json: ["requests": [["method": "GET", "path": "/parse/users/me"]]],
                                           key: .session(token))
        out["functions"] = try await s.request("POST", "/functions/feed", json: [:], key: .session(token))
        out["files"] = try await s.request("POST", "/files/note.txt", body: Data("hello".utf8), key: .session(token),
                                           headers: ["Content-Type": "text/plain"])
        out["tus"] = try await s.request("POST", "/uploads", key: .session(token),
                                         headers: ["Tus-Resumable": "1.0.0", "Upload-Length": "5",
                                                   "Upload-Metadata": "filename " + Data("n.txt".utf8).base64EncodedString()])
        return out
    }

    /// The session is cached and valid: every route accepts it.
    func expectAccepted(_ token: String) async throws {
        let replies = try await useEverywhere(token)
        #expect(replies["users/me"]?.status == 200)
        #expect(replies["classes"]?.status == 200)
        #expect(replies["batch"]?.status == 200)
        #expect(replies["batch"]?.json.arrayValue?.first?["success"]?["sessionToken"]?.stringValue == token)
        #expect(replies["functions"]?.status == 200)
        #expect(replies["files"]?.status == 201)
        #expect(replies["tus"]?.status == 201)
    }

    /// Every route refuses `token` with 209 `Invalid session token`.
    func expectRefused(_ token: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for (route, reply) in try await useEverywhere(token) {
            #expect(reply.status == 400, "\(route)", sourceLocation: sourceLocation)
            #expect(reply.json == Self.invalid, "\(route): \(reply.text)", sourceLocation: sourceLocation)
        }
    }

    @Test func logoutEndsTheSessionAtOnce() async throws {
        let (_, token) = try await s.signUp()
        try await expectAccepted(token)
        #expect(try await s.request("POST", "/logout", key: .session(token)).json == [:])
        try await expectRefused(token)
    }

    @Test func deletingTheSessionEndsItAtOnce() async throws {
        let name = "sc_\(UUID().uuidString.prefix(8))"
        let (_, first) = try await s.signUp(name, password: "pw-1")
        let login = try await s.request("POST", "/login", json: ["username": .string(name), "password": "pw-1"])
        let second = try #require(login.json["sessionToken"]?.stringValue)
        try await expectAccepted(second)
        let sessionId = try #require(try await s.request("GET", "/sessions/me", key: .session(second)).json["objectId"]?.stringValue)
        // The user deletes their other session with the first one.
        let deleted = try await s.request("DELETE", "/sessions/\(sessionId)", key: .session(first))
        #expect(deleted.status == 200)
        try await expectRefused(second)
        #expect(try await s.request("GET", "/users/me", key: .session(first)).status == 200)
    }

    @Test func deletingTheSessionInABatchEndsItAtOnce() async throws {
        let (_, token) = try await s.signUp()
        try await expectAccepted(token)
        let sessionId = try #require(try await s.request("GET", "/sessions/me", key: .session(token)).json["objectId"]?.stringValue)
        let batch = try await s.request("POST", "/batch", json: ["requests": [["method": "DELETE", "path": .string("/parse/sessions/\(sessionId)")]]],
                                        key: .master(nil))
        #expect(batch.json == [["success": [:]]])
        try await expectRefused(token)
    }

    @Test func deletingTheUserEndsTheirSessionsAtOnce() async throws {
        let (id, token) = try await s.signUp()
        try await expectAccepted(token)
        #expect(try await s.request("DELETE", "/users/\(id)", key: .session(token)).status == 200)
        try await expectRefused(token)
    }

    @Test func aPasswordChangeEndsTheOtherSessionsAtOnce() async throws {
        let name = "pw_\(UUID().uuidString.prefix(8))"
        let (id, first) = try await s.signUp(name, password: "pw-1")
        let login = try await s.request("POST", "/login", json: ["username": .string(name), "password": "pw-1"])
        let second = try #require(login.json["sessionToken"]?.stringValue)
        try await expectAccepted(second)
        try await expectAccepted(first)
        #expect(try await s.request("PUT", "/users/\(id)", json: ["password": "pw-2"], key: .session(first)).status == 200)
        try await expectRefused(second)
        #expect(try await s.request("GET", "/users/me", key: .session(first)).status == 200)
    }

    /// The cached session carries its user: a change to the user shows in the next request.
    @Test func aUserChangeShowsAtOnce() async throws {
        let (id, token) = try await s.signUp()
        #expect(try await s.request("GET", "/users/me", key: .session(token)).status == 200)
        let renamed = "renamed_\(UUID().uuidString.prefix(8))"
        #expect(try await s.request("PUT", "/users/\(id)", json: ["username": .string(renamed)], key: .session(token)).status == 200)
        #expect(try await s.request("GET", "/users/me", key: .session(token)).json["username"]?.stringValue == renamed)
    }

    /// A session whose `expiresAt` passed is refused although it is cached (the master key may set it).
    @Test func anExpiredSessionIsRefusedAtOnce() async throws {
        let (_, token) = try await s.signUp()
        try await expectAccepted(token)
        let sessionId = try #require(try await s.request("GET", "/sessions/me", key: .session(token)).json["objectId"]?.stringValue)
        let past: JSON = ["__type": "Date", "iso": "2001-01-01T00:00:00.000Z"]
        #expect(try await s.request("PUT", "/sessions/\(sessionId)", json: ["expiresAt": past], key: .master(nil)).status == 200)
        let me = try await s.request("GET", "/users/me", key: .session(token))
        #expect(me.json == ["code": 209, "error": "Session token is expired."])
    }
}
