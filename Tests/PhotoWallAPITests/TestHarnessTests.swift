import PhotoWallTesting
import Testing

/// The test harness's own promise: a receive that times out against a `ParseTestServer` says what the
/// server was doing, so that a timeout on a loaded CI machine can be read from the log alone.
@Suite struct TestHarnessTests {
    @Test func aReceiveTimeoutShowsTheEndOfTheServersLog() async throws {
        let s = sharedServer
        let marker = "harness-\(Int.random(in: 0..<1_000_000_000))"
        let client = try TestHTTPClient(port: s.port, timeoutSeconds: 1)
        // A request the server answers (its log line names `marker`), then one whose body never comes.
        _ = try client.request("GET", "/parse/\(marker)", headers: [("Host", "127.0.0.1")])
        try client.sendHead("POST", "/parse/classes/Harness", headers: [("Host", "127.0.0.1"), ("Content-Length", "10"),
                                                                        ("X-Parse-Application-Id", s.appId)])
        do {
            let r = try client.readResponse(method: "POST")
            Issue.record("the server answered a request whose body never came: \(r.status)")
        } catch let error as TestHTTPClientError {
            #expect(error.message.contains("receive timed out waiting for the answer to POST /parse/classes/Harness"), "\(error)")
            #expect(error.message.contains("the end of the server's log"), "\(error)")
            #expect(error.message.contains(marker), "the log's last lines include the request before: \(error)")
        }
    }
}
