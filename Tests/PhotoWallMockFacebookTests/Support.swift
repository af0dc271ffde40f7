import PhotoWallCore
import PhotoWallMockFacebook
import PhotoWallTesting

/// App settings every test server uses.
let testAppID = "1234567890123456"
let testSecret = "test-app-secret"
let testRedirect = "http://127.0.0.1:9/callback"

/// Ids of the small hand-made world (`smallFixture`).
enum Small {
    static let alice = "100000000000001"
    /// Alice's friends 2…11; 4, 7 and 10 do not use the app.
    static let friends = (2...11).map { String(100_000_000_000_000 + $0) }
    static let nonAppFriends: Set<String> = ["100000000000004", "100000000000007", "100000000000010"]
    static var visibleFriends: [String] { friends.filter { !nonAppFriends.contains($0) } }
    static let stranger = "100000000000012"
}

/// Twelve users: Alice, her ten friends (three not using the app), and a stranger; Bob (2) and Cara (3) are friends too.
let smallFixture: FacebookFixture = {
    let names = ["Alice Archer", "Bob Brown", "Cara Chen", "Dev Dutta", "Eve Eriksen", "Finn Fox", "Gus Gray", "Hana Hill",
                 "Ivo Ito", "Jade Jones", "Kim Kato", "Zed Zimmer"]
    let users = names.enumerated().map { i, name -> FixtureUser in
        let id = String(100_000_000_000_001 + i)
        let parts = name.split(separator: " ").map(String.init)
        return FixtureUser(id: id, name: name, firstName: parts[0], lastName: parts[1],
                           email: parts[0].lowercased() + "@example.com", color: "#3366cc",
                           appUser: !Small.nonAppFriends.contains(id))
    }
    let pairs = Small.friends.map { (Small.alice, $0) } + [("100000000000002", "100000000000003")]
    return try! FacebookFixture(users: users, friendships: pairs)
}()

/// The committed sample fixture, found from this file's path (tests may run from any directory).
func sampleFixturePath() -> String {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3) // Tests/PhotoWallMockFacebookTests/Support.swift
    return parts.joined(separator: "/") + "/Samples/facebook/users.json"
}

/// Starts a real mock on 127.0.0.1:0, runs `body` with a connected client, and shuts it down.
func withMock<T>(fixture: FacebookFixture = smallFixture, secret: String? = testSecret,
                 configure: (inout MockFacebookServer.Configuration) -> Void = { _ in },
                 _ body: (MockFacebookServer, TestHTTPClient) throws -> T) throws -> T {
    var configuration = MockFacebookServer.Configuration(appID: testAppID, appSecret: secret)
    configuration.logger = Logger(label: "mock-facebook-test", level: .warning)
    configuration.workerThreads = 4
    configure(&configuration)
    let server = MockFacebookServer(fixture: fixture, configuration: configuration)
    let port = try server.start()
    defer { server.shutdown(gracePeriodSeconds: 1) }
    let client = try TestHTTPClient(port: port)
    return try body(server, client)
}

extension TestHTTPClient {
    /// GET (or another method) and parse the body as JSON.
    func json(_ target: String, method: String = "GET", form: [(String, String)]? = nil) throws -> (status: Int, json: JSON) {
        var headers: [(String, String)] = []
        var body: [UInt8]?
        if let form {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            body = Array(formEncode(form).utf8)
        }
        let r = try request(method, target, headers: headers, body: body)
        return (r.status, try JSON.parse(r.body))
    }
}

/// `appsecret_proof` for `token` with the test secret.
func proof(_ token: String) -> String { MockFacebookServer.appSecretProof(accessToken: token, appSecret: testSecret) }

/// `access_token=…&appsecret_proof=…`.
func auth(_ token: String) -> String { "access_token=\(escape(token))&appsecret_proof=\(proof(token))" }

func formEncode(_ pairs: [(String, String)]) -> String { pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&") }

/// Percent-encodes all but unreserved characters.
func escape(_ s: String) -> String {
    var out = ""
    for b in s.utf8 {
        if (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || [45, 46, 95, 126].contains(b) {
            out.append(Character(Unicode.Scalar(b)))
        } else {
            let hex = Array("0123456789ABCDEF")
            out += "%" + String(hex[Int(b >> 4)]) + String(hex[Int(b & 15)])
        }
    }
    return out
}

/// Query parameters of a URL (after `?`, before `#`), percent-decoded.
func queryItems(_ url: String) -> [String: String] {
    guard let q = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return [:] }
    var out: [String: String] = [:]
    for pair in q.split(separator: "#")[0].split(separator: "&") {
        let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        out[unescape(kv[0])] = kv.count > 1 ? unescape(kv[1]) : ""
    }
    return out
}

func unescape(_ s: Substring) -> String {
    var bytes: [UInt8] = []
    let b = Array(s.utf8)
    var i = 0
    while i < b.count {
        if b[i] == 37, i + 2 < b.count, let v = UInt8(String(decoding: b[i + 1...i + 2], as: UTF8.self), radix: 16) {
            bytes.append(v); i += 3
        } else {
            bytes.append(b[i] == 43 ? 32 : b[i]); i += 1
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The path and query of an absolute `http://host:port/…` URL, for `TestHTTPClient`.
func pathOf(_ url: String) -> String {
    let afterScheme = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
    return afterScheme.count == 4 ? "/" + afterScheme[3] : "/"
}

/// Graph error fields of a response body.
func graphError(_ json: JSON) -> (code: Int?, subcode: Int?, type: String?, message: String?) {
    let e = json["error"]
    return (e?["code"]?.intValue, e?["error_subcode"]?.intValue, e?["type"]?.stringValue, e?["message"]?.stringValue)
}
