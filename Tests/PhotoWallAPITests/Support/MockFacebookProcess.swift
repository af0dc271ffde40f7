import Foundation
import PhotoWallTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PhotoWallCore

/// A real `photowall mock-facebook` process on a random loopback port with the committed fixture.
final class MockFacebookProcess: @unchecked Sendable {
    // @unchecked Sendable: `baseURL` and `process` are set once in init and only read afterwards.
    let appId = "1234567890123456"
    let appSecret = "test-app-secret"
    private(set) var baseURL = ""
    private var process: Child?
    /// Its write end stays open here: the provider stops when it closes (`--stop-on-stdin-eof`).
    private let stdin = Pipe()

    /// Users and friendships of `Samples/facebook/users.json`.
    static let fixture: [String: JSON] = {
        let url = TestPaths.packageRoot.appendingPathComponent("Samples/facebook/users.json")
        let json = (try? JSON.parse([UInt8](Data(contentsOf: url)))) ?? .null
        var out: [String: JSON] = [:]
        for u in json["users"]?.arrayValue ?? [] { if let id = u["id"]?.stringValue { out[id] = u } }
        return out
    }()

    init() throws {
        let out = Pipe()
        process = try Child(TestPaths.binary, ["mock-facebook", "--port", "0", "--app-id", appId, "--app-secret", appSecret,
                                               "--stop-on-stdin-eof", "--log-level", "warning",
                                               // Native clients (the CLI) call /me without the secret; a proof that is sent is still checked.
                                               "--no-appsecret-proof"],
                            stdin: .pipe(stdin), stdout: .pipe(out), stderr: .null)
        var text = ""
        let handle = out.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let r = text.range(of: #"listening on (http://127\.0\.0\.1:\d+)"#, options: .regularExpression) {
                baseURL = String(text[r].dropFirst("listening on ".count))
                DispatchQueue.global().async { while !handle.availableData.isEmpty {} }
                return
            }
        }
        throw TestServerError(description: "mock-facebook did not start: \(text)")
    }

    deinit {
        process?.terminate()
        process?.waitUntilExit()
    }

    /// The Graph base URL the server is pointed at.
    var graphURL: String { baseURL + "/v19.0" }

    /// Mints a token for a fixture user through the test-only control endpoint.
    func token(for userId: String) async throws -> String {
        let r = try await post("/__control/login", ["user_id": .string(userId)])
        guard let t = r["access_token"]?.stringValue else { throw TestServerError(description: "no token: \(r.text)") }
        return t
    }

    @discardableResult
    func post(_ path: String, _ body: JSON = [:], method: String = "POST") async throws -> JSON {
        var req = URLRequest(url: URL(string: baseURL + path)!)
        req.httpMethod = method
        req.httpBody = Data(body.serialized)
        req.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, _) = try await ParseTestServer.session.data(for: req)
        return (try? JSON.parse([UInt8](data))) ?? .null
    }

    /// Fixture users who use the app and have at least `minFriends` friends who do too.
    static func appUsers(minFriends: Int = 0) -> [String] {
        fixture.values.filter { u in
            u["app_user"] != false &&
                (u["friends"]?.arrayValue ?? []).filter { fixture[$0.stringValue ?? ""]?["app_user"] != false }.count >= minFriends
        }.compactMap { $0["id"]?.stringValue }.sorted()
    }
}

extension MockFacebookProcess {
    /// A mock Facebook and a `photowall serve` that checks tokens with it (app id, app secret),
    /// for a suite's `static let`; stops the run when either can't start.
    static func withServer(extraArgs: [String] = []) -> (ParseTestServer, MockFacebookProcess) {
        do {
            let fb = try MockFacebookProcess()
            let s = try ParseTestServer(extraArgs: ["--facebook-url", fb.graphURL, "--facebook-app-id", fb.appId,
                                                    "--facebook-app-secret", fb.appSecret] + extraArgs)
            return (s, fb)
        } catch { fatalError("\(error)") }
    }

    /// Logs the fixture user `fbId` in on `server` with a fresh token (`POST /users` with `authData`).
    /// - Returns: the user's objectId, session token and access token.
    func logIn(_ fbId: String, on server: ParseTestServer) async throws -> (objectId: String, session: String, accessToken: String) {
        let token = try await token(for: fbId)
        let r = try await server.request("POST", "/users", json: ["authData": ["facebook": [
            "id": .string(fbId), "access_token": .string(token), "expiration_date": "2027-01-01T00:00:00.000Z"]]])
        guard let id = r.json["objectId"]?.stringValue, let session = r.json["sessionToken"]?.stringValue else {
            throw TestServerError(description: "Facebook login of \(fbId) failed: \(r.status) \(r.text)")
        }
        return (id, session, token)
    }
}
