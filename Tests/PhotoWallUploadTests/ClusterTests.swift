import Foundation
import PhotoWallClient
import PhotoWallCore
import PhotoWallTesting
import Testing

/// Two `photowall serve` instances behind nginx (round robin), sharing one PostgreSQL database and
/// one file store (S3 when `PHOTOWALL_TEST_S3` is set — uploads then go to S3 multipart uploads —
/// else a data folder both use): sessions work on
/// either instance, a tus upload's chunks alternate between them, a thumbnail is made once, and
/// killing an instance mid-upload loses nothing. Needs PostgreSQL (`make test` runs it in its
/// PostgreSQL pass) and nginx.
@Suite(.serialized) struct ClusterTests {
    static let skipReason: String? = {
        if TestDatabase.postgresAdminURL == nil {
            return "SKIPPED: the several-instances tests need PostgreSQL (PHOTOWALL_TEST_DATABASE); `make test` runs them in its PostgreSQL pass"
        }
        if Cluster.nginxBinary == nil { return "SKIPPED: the several-instances tests need nginx (apt-get install nginx-light)" }
        return nil
    }()

    @Test func aSessionMadeOnOneInstanceWorksOnTheOther() async throws {
        guard let cluster = try Cluster.start() else { return }
        let (userId, token) = try await cluster.a.signUp()
        let me = try await cluster.b.request("GET", "/users/me", key: .session(token))
        #expect(me.status == 200)
        #expect(me.json["objectId"]?.stringValue == userId)
        // Logging out on B ends the session on A too.
        let out = try await cluster.b.request("POST", "/logout", key: .session(token))
        #expect(out.status == 200)
        let after = try await cluster.a.request("GET", "/users/me", key: .session(token))
        #expect(after.status == 400 || after.status == 403, "\(after.text)")
        #expect(after.json["code"] == 209)
    }

    @Test func aTusUploadsChunksAlternateBetweenInstances() async throws {
        guard let cluster = try Cluster.start() else { return }
        let (_, token) = try await cluster.a.signUp()
        try await withTemporaryDirectory { dir in
            let total = 3 << 20
            let path = try TestFiles.write(TestFiles.randomBytes(total), named: "alternate.bin", in: dir)
            let client = cluster.client(token: token, chunk: 256 << 10)
            let result = try await client.upload(file: path, progress: { _, _ in })
            let id = String(result.uploadURL.split(separator: "/").last!)
            // An instance writes a request's access-log line once the answer has gone out, so the last
            // chunk's line can land just after the client has its answer: wait for it (up to 5 s).
            var (onA, onB) = (0, 0)
            let deadline = ContinuousClock.now + .seconds(5)
            repeat {
                (onA, onB) = (cluster.a.patches(of: id), cluster.b.patches(of: id))
                if onA + onB >= 12 { break }
                try await Task.sleep(for: .milliseconds(20))
            } while ContinuousClock.now < deadline
            #expect(onA + onB == 12, "12 chunks of 256 KiB: A took \(onA), B took \(onB)")
            #expect(onA >= 3 && onB >= 3, "round robin sends chunks to both: A took \(onA), B took \(onB)")
            // The finished file is the same through either instance.
            for s in [cluster.a, cluster.b] {
                let r = try await s.request("GET", result.fileURL.replacingOccurrences(of: cluster.publicURL, with: s.baseURL), key: .none)
                #expect(r.status == 200)
                #expect(TestFiles.sha256(r.body) == (try TestFiles.sha256(ofFile: path)))
            }
        }
    }

    @Test func aPatchOnOneInstanceLocksTheUploadOnTheOtherUntilItStalls() async throws {
        guard let cluster = try Cluster.start() else { return }
        let token = try await cluster.a.signUp().1
        let onA = try RawTus(cluster.a, token: token), onB = try RawTus(cluster.b, token: token)
        let (_, path) = try onA.create(length: 4000)
        // A PATCH on A that keeps sending (slowly) holds the upload…
        let first = try TestHTTPClient(port: cluster.a.port)
        try first.sendHead("PATCH", path, headers: onA.headers([("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream"),
                                                                  ("Content-Length", "2000")]))
        let trickle = Trickle(first, bytes: 2000)
        try await Task.sleep(for: .milliseconds(400))
        let refused = try onB.patch(path, offset: 0, body: Array(repeating: 2, count: 1000))
        #expect(refused.status == 423, "\(refused.status)")
        #expect(refused.header("Retry-After") == "2", "when A's lease would lapse (stall limit 1 s, rounded up)")
        // …until it goes quiet: then B takes the upload over from A's last committed offset (0).
        let trickled = trickle.finish()
        #expect(trickled > 0)
        try await Task.sleep(for: .milliseconds(2500))
        let taken = try onB.patch(path, offset: 0, body: Array(repeating: 2, count: 1000))
        #expect(taken.status == 204, "\(taken.status)")
        #expect(taken.header("Upload-Offset") == "1000")
        // A's request ends now: it lost the lease, so what it received is not committed.
        first.close()
        try await Task.sleep(for: .milliseconds(300))
        #expect(try onA.head(path).header("Upload-Offset") == "1000")
        let last = try onA.patch(path, offset: 1000, body: Array(repeating: 3, count: 3000))
        #expect(last.status == 204)
        let url = try #require(last.header("X-Parse-File-URL")).replacingOccurrences(of: cluster.publicURL, with: cluster.a.baseURL)
        let file = try await cluster.a.request("GET", url, key: .none)
        #expect([UInt8](file.body) == Array(repeating: 2, count: 1000) + Array(repeating: 3, count: 3000))
    }

    @Test func aThumbnailIsMadeOnce() async throws {
        guard let cluster = try Cluster.start() else { return }
        let (_, token) = try await cluster.a.signUp()
        let photo = try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Samples/photos/landscape_o6.jpg"))
        let up = try await cluster.viaNginx("POST", "/files/cluster.jpg", body: photo, token: token, headers: ["Content-Type": "image/jpeg"])
        let name = try #require(up.json["name"]?.stringValue, "\(up.text)")
        let made = try await cluster.viaNginx("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]], token: token)
        #expect(made.status == 201, "\(made.text)")
        let id = try #require(made.json["objectId"]?.stringValue)
        let thumb = try #require(made.json["thumbnail"]?["name"]?.stringValue)
        // Reads and a later save through both instances keep the one thumbnail.
        for s in [cluster.a, cluster.b] {
            let got = try await s.request("GET", "/classes/WallImage/\(id)", key: .session(token))
            #expect(got.json["thumbnail"]?["name"]?.stringValue == thumb)
        }
        let edit = try await cluster.viaNginx("PUT", "/classes/WallImage/\(id)", json: ["caption": "again"], token: token)
        #expect(edit.status == 200, "\(edit.text)")
        let rows = try cluster.sql("SELECT count(*) FROM \"_FILES\" WHERE name LIKE '%cluster_thumbnail%'")
        #expect(rows.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "thumbnail files: \(rows)")
        // The (signed) thumbnail URL that A made works on B.
        let url = try #require(made.json["thumbnail"]?["url"]?.stringValue).replacingOccurrences(of: cluster.publicURL, with: cluster.b.baseURL)
        let t = try await cluster.b.request("GET", url, key: .none)
        #expect(t.status == 200 && t.body.starts(with: [0xFF, 0xD8]), "the thumbnail is readable on the other instance: \(t.status)")
    }

    @Test func killingAnInstanceMidUploadLosesNothing() async throws {
        guard let cluster = try Cluster.start() else { return }
        let (_, token) = try await cluster.a.signUp()
        try await withTemporaryDirectory { dir in
            let total: Int64 = 12 << 20
            let path = try TestFiles.write(TestFiles.randomBytes(Int(total)), named: "kill.bin", in: dir)
            // Past 30 %, in the middle of a chunk, the upload pauses while the instance receiving
            // that chunk is killed (round robin: the one that did not answer the last PATCH); then
            // it carries on into the dead connection, and every later request must reach the
            // survivor through nginx, which takes the upload over once the dead one's lease lapses.
            let reached = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
            let paused = Flag()
            let log = ProgressLog(), events = EventLog()
            let chunk: Int64 = 1 << 20
            // One PATCH at a time, so nginx's round robin sends the paused one to the instance that did
            // not answer the last: with pipelined PATCHes (refused across instances, 409, until the
            // client stops pipelining) which instance got the one in flight depends on how many were
            // refused, and with four in flight the kill sometimes hit the idle one (2 of 3 runs).
            let client = cluster.client(token: token, chunk: chunk, progressInterval: 0, pipelining: false)
            async let upload = client.upload(file: path, onEvent: events.record) { sent, t in
                log.record(sent, t)
                if sent >= total * 3 / 10, sent % chunk != 0, sent < total - 1, paused.setOnce() {
                    reached.signal()
                    go.wait()
                }
            }
            let pausedMidChunk = await onThread { reached.wait(timeout: .now() + 60) == .success }
            #expect(pausedMidChunk, "the upload never reported a byte count inside a chunk")
            let id = String(try #require(events.createdURL).split(separator: "/").last!)
            let (victim, survivor) = cluster.a.lastPatch(of: id) > cluster.b.lastPatch(of: id) ? (cluster.b, cluster.a) : (cluster.a, cluster.b)
            let survivorPatchesBefore = survivor.patches(of: id)
            victim.kill(SIGKILL)
            go.signal()
            let result: UploadResult
            do { result = try await upload } catch {
                Issue.record("the upload failed across the kill: \(error)\n\(cluster.diagnostics(upload: id))")
                return
            }
            #expect(result.retries >= 1, "the chunk in flight on the killed instance failed and was retried")
            // nginx's 502 page is summed up by its title, not pasted into the message.
            let messages = events.retryMessages
            #expect(messages.filter { $0.contains("502") }.allSatisfy { $0.contains("HTTP 502 Bad Gateway") }, "\(messages)")
            #expect(!messages.contains { $0.contains("<") }, "\(messages)")
            #expect(log.violations(total: total, minimumInterval: 0).isEmpty, "\(log.violations(total: total, minimumInterval: 0))")
            #expect(result.uploadURL.hasSuffix(id))
            #expect(survivor.patches(of: id) > survivorPatchesBefore, "the survivor took the rest")
            // The survivor's 423s (while the dead instance's lease lapses) reach nginx intact: had it
            // closed mid-body, nginx would see a reset and take the survivor out too (502 for everyone).
            let disabled = cluster.nginxErrors().filter { $0.contains("temporarily disabled") }
            #expect(disabled.allSatisfy { $0.contains(":\(victim.port)") }, "nginx disabled the survivor: \(disabled)")
            let r = try await survivor.request("GET", result.fileURL.replacingOccurrences(of: cluster.publicURL, with: survivor.baseURL), key: .none)
            #expect(r.status == 200)
            #expect(Int64(r.body.count) == total)
            #expect(TestFiles.sha256(r.body) == (try TestFiles.sha256(ofFile: path)), "SHA-256 of the file uploaded across the kill")
        }
    }
}

/// Two instances, their shared database and file store, and nginx in front, all on 127.0.0.1
/// with random ports; stopped when released.
final class Cluster: @unchecked Sendable {
    // @unchecked Sendable: every property is set once in `init`; the servers' own state is
    // managed by the one test that uses the cluster.
    static let nginxBinary: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }

    let shared: URL
    let a: ParseTestServer
    let b: ParseTestServer
    let databaseArguments: [String]
    let nginx: Child
    let port: Int
    var publicURL: String { "http://127.0.0.1:\(port)/parse" }

    /// nil (with the reason printed) when PostgreSQL or nginx is missing.
    static func start() throws -> Cluster? {
        if let reason = ClusterTests.skipReason {
            print(reason)
            return nil
        }
        return try Cluster()
    }

    private init() throws {
        shared = FileManager.default.temporaryDirectory.appendingPathComponent("photowall-cluster-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        databaseArguments = try TestDatabase.serverArguments()
        port = freePort()
        // S3 when the run has one; else both instances use one data folder for files and upload parts.
        // Info level: the access lines tell which instance answered what.
        let common = ["--public-url", "http://127.0.0.1:\(port)/parse", "--upload-stall-timeout", "1", "--log-level", "info"]
        let files = TestFileStore.serverArguments()
        a = try ParseTestServer(extraArgs: common, dataDir: shared, databaseArguments: databaseArguments, fileStoreArguments: files)
        b = try ParseTestServer(extraArgs: common, dataDir: shared, databaseArguments: databaseArguments, fileStoreArguments: files)
        nginx = try Self.startNginx(port: port, upstreams: [a.port, b.port], dir: shared.appendingPathComponent("nginx"))
    }

    deinit {
        nginx.terminate()
        nginx.waitUntilExit()
        a.stop()
        b.stop()
        try? FileManager.default.removeItem(at: shared)
    }

    static func startNginx(port: Int, upstreams: [Int], dir: URL) throws -> Child {
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        let servers = upstreams.map { "    server 127.0.0.1:\($0) max_fails=1 fail_timeout=10s;" }.joined(separator: "\n")
        // The README's deployment config: streams bodies both ways (tus chunks reach the instance as
        // they arrive, progress stays true), keeps connections to the instances, and retries a
        // request that could not be sent on the other instance.
        let conf = """
            worker_processes 1;
            \(getuid() == 0 ? "user root root;" : "")
            daemon off;
            pid \(dir.path)/nginx.pid;
            error_log \(dir.path)/error.log warn;
            events { worker_connections 256; }
            http {
              access_log off;
              client_body_temp_path \(dir.path)/tmp/body;
              proxy_temp_path \(dir.path)/tmp/proxy;
              upstream photowall {
            \(servers)
                keepalive 32;
              }
              server {
                listen 127.0.0.1:\(port);
                client_max_body_size 0;
                location / {
                  proxy_pass http://photowall;
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                  proxy_set_header Host $http_host;
                  proxy_set_header X-Forwarded-For $remote_addr;
                  proxy_request_buffering off;
                  proxy_buffering off;
                  proxy_next_upstream error timeout;
                  proxy_connect_timeout 2s;
                }
              }
            }
            """
        let path = dir.appendingPathComponent("nginx.conf")
        try conf.write(to: path, atomically: true, encoding: .utf8)
        let p = try Child(nginxBinary!, ["-c", path.path, "-p", dir.path], stderr: .null)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? TestHTTPClient(port: port, timeoutSeconds: 1)) != nil { return p }
            Thread.sleep(forTimeInterval: 0.05)
        }
        p.terminate()
        throw TestServerError(description: "nginx did not start: \((try? String(contentsOf: dir.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")")
    }

    /// A tus client talking to nginx.
    func client(token: String, chunk: Int64, progressInterval: Double = 0.05, pipelining: Bool = true) -> TusClient {
        TusClient(server: ParseServer(baseURL: publicURL, applicationId: a.appId, credential: .sessionToken(token)),
                  configuration: .init(chunkBytes: chunk, checksum: .sha256,
                                       retry: RetryPolicy(maxConsecutiveFailures: 12, initialDelaySeconds: 0.05, maxDelaySeconds: 0.5),
                                       progressIntervalSeconds: progressInterval, pipelining: pipelining))
    }

    /// A request through nginx (with the session token).
    func viaNginx(_ method: String, _ path: String, json: JSON? = nil, body: Data? = nil, token: String,
                  headers: [String: String] = [:]) async throws -> ParseTestServer.Reply {
        try await a.request(method, publicURL + path, json: json, body: body, key: .session(token), headers: headers)
    }

    /// nginx's error log, one entry per line.
    func nginxErrors() -> [String] {
        ((try? String(contentsOf: shared.appendingPathComponent("nginx/error.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// What nginx and both instances logged about upload `id`, for a failure message.
    func diagnostics(upload id: String) -> String {
        let nginxLog = nginxErrors().joined(separator: "\n")
        func lines(_ s: ParseTestServer) -> String {
            s.serverLog().split(separator: "\n").filter { $0.contains(id) || $0.contains("error") }.suffix(40).joined(separator: "\n")
        }
        return "nginx error.log:\n\(nginxLog)\ninstance A (\(a.port)):\n\(lines(a))\ninstance B (\(b.port)):\n\(lines(b))"
    }

    /// One SQL statement on the shared database.
    func sql(_ text: String) throws -> String {
        try TestDatabase.query(text, dataDir: shared, arguments: databaseArguments)
    }
}

extension ParseTestServer {
    /// When this instance last answered a PATCH for upload `id` (its log's timestamp; "" never).
    func lastPatch(of id: String) -> String {
        serverLog().split(separator: "\n").last { $0.contains("method=PATCH path=/parse/uploads/\(id) ") }
            .map { String($0.prefix(24)) } ?? ""
    }

    /// How many PATCH requests for upload `id` this instance answered (from its access log).
    func patches(of id: String) -> Int {
        serverLog().split(separator: "\n").filter { $0.contains("method=PATCH path=/parse/uploads/\(id) status=204") }.count
    }
}
