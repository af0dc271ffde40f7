import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// Bad input gets a clear Parse error with the right status, and the server keeps serving with
/// nothing partly written. Uses its own server (1 MiB upload limit) so it can inspect the data folder.
@Suite(.serialized) struct BadInputTests {
    static let server: ParseTestServer = {
        do { return try ParseTestServer(extraArgs: ["--max-upload-size", "1mb"]) } catch { fatalError("\(error)") }
    }()
    var s: ParseTestServer { Self.server }

    func expectError(_ r: ParseTestServer.Reply, _ status: Int, _ code: Int, _ comment: Comment? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == status, comment, sourceLocation: sourceLocation)
        #expect(r.json["code"]?.intValue == code, "\(r.text)", sourceLocation: sourceLocation)
        #expect(r.json["error"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test func parseErrors() async throws {
        let (_, token) = try await s.signUp()
        let k = ParseTestServer.Key.session(token)
        expectError(try await s.request("POST", "/classes/WallImage", body: Data("{not json".utf8), key: k), 400, 107)
        expectError(try await s.request("POST", "/classes/WallImage", body: Data("[1,2]".utf8), key: k), 400, 107)
        expectError(try await s.request("GET", "/classes/WallImage?where=%7Bbroken", key: k), 400, 107)
        expectError(try await s.request("GET", "/classes/WallImage?where=" + enc(["userFBId": ["$frobnicate": 1]]), key: k), 400, 102)
        expectError(try await s.request("GET", "/classes/WallImage?where=" + enc(["$or": "x"]), key: k), 400, 102)
        expectError(try await s.request("GET", "/classes/WallImage?where=" + enc(["ACL": "x"]), key: k), 400, 102)
        expectError(try await s.request("GET", "/classes/WallImage?bogus=1", key: k), 400, 102)
        expectError(try await s.request("GET", "/classes/WallImage?where=" + enc(["bad-key": 1]), key: k), 400, 105)
        expectError(try await s.request("POST", "/classes/9lives", json: ["a": 1], key: .master(nil)), 400, 103)
        expectError(try await s.request("POST", "/classes/Bad-Name", json: ["a": 1], key: .master(nil)), 400, 103)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["bad-field": 1], key: k), 400, 105)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["_secret": 1], key: k), 400, 105)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["objectId": "abc"], key: k), 400, 105)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["caption": 12345], key: k), 400, 111)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["width": "wide"], key: .master(nil)), 400, 111)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["when": ["__type": "Date", "iso": "yesterday"]], key: k), 400, 111)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["x": ["__op": "Frob"]], key: k), 400, 108)
        expectError(try await s.request("POST", "/classes/WallImage", json: ["ACL": ["*": ["read": "yes"]]], key: k), 400, 123)
        expectError(try await s.request("GET", "/classes/WallImage", key: .session("r:ffffffffffffffffffffffffffffffff")), 400, 209)
        expectError(try await s.request("POST", "/batch", json: ["requests": "nope"], key: k), 400, 107)
        expectError(try await s.request("POST", "/functions/nope", json: [:], key: k), 400, 141)
        // Wrong type rejected atomically: the object was not created.
        let count = try await s.request("GET", "/classes/WallImage?count=1&limit=0", key: .master(nil))
        #expect(count.json["count"] == 0)
    }

    @Test func credentials() async throws {
        for key in [ParseTestServer.Key.none] {
            let r = try await s.request("GET", "/classes/WallImage", key: key)
            #expect(r.status == 403)
            #expect(r.json == ["error": "unauthorized"])
        }
        let wrong = try await s.request("GET", "/classes/WallImage", key: .none, headers: ["X-Parse-Application-Id": "wrong"])
        #expect(wrong.status == 403)
        #expect(wrong.json == ["error": "unauthorized"])
        // A wrong master key is ignored: the request is a normal one.
        let wrongMaster = try await s.request("POST", "/classes/NotCreatedByWrongMaster", json: ["a": 1], key: .master("nope"))
        #expect(wrongMaster.json["code"] == 119)
        let upload = try await s.request("POST", "/files/x.jpg", body: Data([1]), key: .none)
        #expect(upload.status == 403)
    }

    @Test func oversizeBodies() async throws {
        let (_, token) = try await s.signUp()
        // Over the limit with a declared Content-Length: 413 before `100 Continue`, so no body byte is sent.
        let bigJSON = s.dataDir.appendingPathComponent("big.json")
        try Data(("{\"a\":\"" + String(repeating: "x", count: (1 << 20) + 10) + "\"}").utf8).write(to: bigJSON)
        let bigFile = s.dataDir.appendingPathComponent("big.bin")
        try Data(count: (1 << 20) + 1).write(to: bigFile)
        for (path, body) in [("/classes/WallImage", bigJSON), ("/files/big.jpg", bigFile)] {
            let r = try runCurl(["-sS", "-w", "\n%{http_code} %{size_upload}", "-X", "POST", "-H", "Expect: 100-continue",
                                 "-H", "X-Parse-Application-Id: \(s.appId)", "-H", "X-Parse-Session-Token: \(token)",
                                 "--data-binary", "@\(body.path)", "\(s.baseURL)\(path)"])
            let lines = r.output.split(separator: "\n")
            #expect(lines.first == #"{"error":"request entity too large"}"#, "\(path): \(r.output)")
            #expect(lines.last == "413 0", "\(path): status and bytes sent: \(r.output)")
        }
        // Chunked (no Content-Length) over the limit: the rest is read and dropped, then 413.
        let blob = s.dataDir.appendingPathComponent("blob.bin")
        try Data(count: 3 << 20).write(to: blob)
        let curl = try runCurl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "X-Parse-Application-Id: \(s.appId)",
                                "-H", "X-Parse-Session-Token: \(token)", "-H", "Transfer-Encoding: chunked",
                                "--data-binary", "@\(blob.path)", "\(s.baseURL)/files/chunked.jpg"])
        #expect(curl.output == "413", "\(curl.output)")
        // Exactly at the limit is fine.
        let ok = try await s.request("POST", "/files/fits.jpg", body: Data(count: 1 << 20), key: .session(token))
        #expect(ok.status == 201)
        // Nothing partial is left, and the server still serves.
        try await Task.sleep(for: .milliseconds(200))
        let tmp = try s.localTemporaryFiles()
        #expect(tmp.isEmpty, "\(tmp)")
        let stored = try s.storedFileNames()
        #expect(stored.count == 1)
        #expect(stored.first?.hasSuffix("_fits.jpg") == true)
        #expect(try await s.request("GET", "/health", key: .none).status == 200)
    }
}

/// Runs `/usr/bin/curl` with `args`. - Returns: its exit status and standard output.
func runCurl(_ args: [String]) throws -> CommandResult { try runProcess("/usr/bin/curl", args) }
