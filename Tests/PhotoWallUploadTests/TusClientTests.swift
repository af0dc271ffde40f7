import Foundation
import PhotoWallClient
import PhotoWallCore
import PhotoWallTesting
import Testing

/// `TusClient` against the real server: chunking, progress promises, resume across clients,
/// connections cut at random offsets by a proxy, `kill -9` of the server mid-upload, cancellation,
/// and its typed errors. Every finished upload is downloaded and its SHA-256 compared, with the one
/// the server stored (its `ETag`).
@Suite(.serialized) struct TusClientTests {
    /// Fast retries for tests (the defaults start at 0.2 s and grow to 10 s).
    static let quickRetry = RetryPolicy(maxConsecutiveFailures: 12, initialDelaySeconds: 0.05, maxDelaySeconds: 0.5)

    static func client(_ s: ParseTestServer, token: String, chunk: Int64 = 256 << 10, checksum: ChecksumAlgorithm = .sha256,
                       retry: RetryPolicy = quickRetry, baseURL: String? = nil, progressInterval: Double = 0.05) -> TusClient {
        TusClient(server: ParseServer(baseURL: baseURL ?? s.baseURL, applicationId: s.appId, credential: .sessionToken(token)),
                  configuration: .init(chunkBytes: chunk, checksum: checksum, retry: retry, progressIntervalSeconds: progressInterval))
    }

    /// The uploaded file's bytes hash like the source's.
    static func expectSameFile(_ s: ParseTestServer, _ result: UploadResult, source: String) async throws {
        let r = try await s.request("GET", result.fileURL, key: .none)
        #expect(r.status == 200)
        let digest = try TestFiles.sha256(ofFile: source)
        #expect(TestFiles.sha256(r.body) == digest, "SHA-256 of \(result.fileName)")
        #expect(r.header("ETag") == "\"\(digest)\"", "the SHA-256 the server computed while the chunks came in")
    }

    @Test func uploadsInChunksWithExactProgress() async throws {
        try await withTemporaryDirectory { dir in
            let (_, token) = try await sharedServer.signUp()
            let path = try TestFiles.write(TestFiles.randomBytes(5 << 20), named: "five.bin", in: dir)
            let log = ProgressLog(), events = EventLog()
            let result = try await Self.client(sharedServer, token: token).upload(file: path, contentType: "application/octet-stream",
                                                                                 onEvent: events.record, progress: log.record)
            #expect(log.violations(total: 5 << 20).isEmpty, "\(log.violations(total: 5 << 20))")
            #expect(result.totalBytes == 5 << 20)
            #expect(result.resumedFromOffset == 0)
            #expect(result.retries == 0)
            #expect(result.fileName.hasSuffix("_five.bin") && result.fileName.count == 33 + 8)
            #expect(events.names == ["created"])
            try await Self.expectSameFile(sharedServer, result, source: path)
            // HEAD on the upload URL names the same file.
            let status = try Self.client(sharedServer, token: token).status(uploadURL: result.uploadURL)
            #expect(status == UploadStatus(offset: 5 << 20, length: 5 << 20, fileName: result.fileName, fileURL: result.fileURL))
        }
    }

    @Test func resumesFromAStoredURLInAnotherClient() async throws {
        try await withTemporaryDirectory { dir in
            let (_, token) = try await sharedServer.signUp()
            let total: Int64 = 4 << 20
            let path = try TestFiles.write(TestFiles.randomBytes(Int(total)), named: "resume.bin", in: dir)
            // First "process": cancelled once 40 % went out. Every offset is reported (interval 0): with the
            // default 50 ms between reports, a fast server took the whole 4 MiB between two reports and the
            // cancel never came.
            let token1 = CancellationToken(), events = EventLog()
            let client = Self.client(sharedServer, token: token, chunk: 128 << 10, progressInterval: 0)
            let first = await onThread { () -> ClientError? in
                do {
                    _ = try client.upload(file: path, cancellation: token1, onEvent: events.record) { sent, _ in
                        if sent >= total * 4 / 10 { token1.cancel() }
                    }
                    return nil
                } catch { return error as? ClientError }
            }
            #expect(first?.code == .cancelled)
            let url = try #require(events.createdURL)
            let status = try client.status(uploadURL: url)
            #expect(status.offset > 0 && status.offset < total && status.length == total && status.fileName == nil)

            // Second "process": only the URL survived.
            let log = ProgressLog(), events2 = EventLog()
            let result = try await Self.client(sharedServer, token: token, chunk: 128 << 10)
                .upload(file: path, resumeURL: url, onEvent: events2.record, progress: log.record)
            #expect(result.uploadURL == url)
            // At least where the HEAD above found it: the first client's cut PATCH may still commit its kept
            // bytes after that HEAD (see `retrying` below), and offsets never go back.
            #expect(result.resumedFromOffset >= status.offset && result.resumedFromOffset < total, "\(result.resumedFromOffset) vs \(status.offset)")
            // Resumed, never started again; a `retrying` may follow while the server still commits the
            // first client's cut PATCH (423 with Retry-After, tus's answer to a locked upload).
            #expect(events2.names.first == "resumed" && events2.names.dropFirst().allSatisfy { $0 == "retrying" }, "\(events2.names)")
            #expect(log.entries.first.map { $0.sent >= status.offset } == true, "progress starts at the resumed offset")
            #expect(log.violations(total: total).isEmpty, "\(log.violations(total: total))")
            try await Self.expectSameFile(sharedServer, result, source: path)
        }
    }

    @Test func startsAgainWhenTheStoredUploadIsUnknown() async throws {
        try await withTemporaryDirectory { dir in
            let (_, token) = try await sharedServer.signUp()
            let path = try TestFiles.write(TestFiles.randomBytes(300_000), named: "again.bin", in: dir)
            let events = EventLog()
            let gone = sharedServer.baseURL + "/uploads/" + String(repeating: "0", count: 32)
            let result = try await Self.client(sharedServer, token: token).upload(file: path, resumeURL: gone, onEvent: events.record) { _, _ in }
            #expect(events.names == ["restarted", "created"])
            #expect(result.uploadURL != gone)
            try await Self.expectSameFile(sharedServer, result, source: path)
        }
    }

    @Test(arguments: [true, false])
    func pipelinesChunksOnFurtherConnections(pipelining: Bool) async throws {
        // A proxy that cuts nothing, only to count the connections the client opens.
        let proxy = try CuttingProxy(cuts: 0, minBytes: 1, maxBytes: 1)
        defer { proxy.stop() }
        let s = try ParseTestServer(extraArgs: ["--public-url", "http://127.0.0.1:\(proxy.port)/parse"])
        proxy.upstreamPort = s.port
        let (_, token) = try await s.signUp()
        try await withTemporaryDirectory { dir in
            let path = try TestFiles.write(TestFiles.randomBytes(3 << 20), named: "pipe.bin", in: dir)
            var client = Self.client(s, token: token, baseURL: "http://127.0.0.1:\(proxy.port)/parse")
            client.configuration.pipelining = pipelining
            let log = ProgressLog()
            let result = try await client.upload(file: path, progress: log.record)
            // Pipelined: each next chunk goes out on another keep-alive connection while the ones
            // before are answered (up to `UploadRun.pipelineDepth` at once, and more only if the server
            // closed one refusing a late PATCH); without: everything on one.
            if pipelining { #expect(proxy.connections >= 2, "\(proxy.summary)") } else { #expect(proxy.connections == 1, "\(proxy.summary)") }
            #expect(result.retries == 0)
            #expect(log.violations(total: 3 << 20).isEmpty, "\(log.violations(total: 3 << 20))")
            try await Self.expectSameFile(s, result, source: path)
        }
    }

    @Test(arguments: [ChecksumAlgorithm.sha256, .none])
    func survivesConnectionsCutAtRandomOffsets(checksum: ChecksumAlgorithm) async throws {
        // The server's public URL names the proxy, so the Location it hands out goes through it too.
        let proxy = try CuttingProxy(cuts: 10, minBytes: 20_000, maxBytes: 1_500_000)
        defer { proxy.stop() }
        // A cut PATCH may linger on the server (no FIN seen); after 0.5 s quiet the next PATCH takes over.
        let s = try ParseTestServer(extraArgs: ["--public-url", "http://127.0.0.1:\(proxy.port)/parse", "--upload-stall-timeout", "0.5"])
        proxy.upstreamPort = s.port
        let (_, token) = try await s.signUp()
        try await withTemporaryDirectory { dir in
            let total = 6 << 20
            let path = try TestFiles.write(TestFiles.randomBytes(total), named: "cut.bin", in: dir)
            let log = ProgressLog(), events = EventLog()
            let client = Self.client(s, token: token, chunk: 512 << 10, checksum: checksum, baseURL: "http://127.0.0.1:\(proxy.port)/parse")
            let result: UploadResult
            do {
                result = try await client.upload(file: path, onEvent: events.record, progress: log.record)
            } catch {
                print(s.serverLog().split(separator: "\n").suffix(60).joined(separator: "\n"))
                throw error
            }
            #expect(proxy.cutsMade >= 2, "\(proxy.summary)")
            #expect(result.retries >= 1, "\(proxy.summary)")
            #expect(events.names.filter { $0 == "retrying" }.count == result.retries)
            #expect(log.violations(total: Int64(total)).isEmpty, "\(log.violations(total: Int64(total))) \(proxy.summary)")
            try await Self.expectSameFile(s, result, source: path)
        }
    }

    @Test func resumesAfterKillNineAndRestartOnTheSamePort() async throws {
        let port = freePort()
        let s = try ParseTestServer(port: port)
        let (_, token) = try await s.signUp()
        try await withTemporaryDirectory { dir in
            let total: Int64 = 8 << 20
            let path = try TestFiles.write(TestFiles.randomBytes(Int(total)), named: "kill.bin", in: dir)
            // The upload thread pauses inside its progress callback past 30 %, in the middle of a
            // PATCH body, while the server is killed and restarted; then it carries on into the
            // dead connection. (Progress unthrottled here, and chunks several times libcurl's 512 KiB
            // send size, so calls in the middle of a chunk surely come; `total - 1` is the clamped
            // value at the end of the last chunk, not the middle of one.)
            let reached = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
            let paused = Flag()
            let log = ProgressLog(), events = EventLog()
            let chunk: Int64 = 2 << 20
            let client = Self.client(s, token: token, chunk: chunk, progressInterval: 0)
            async let upload = client.upload(file: path, onEvent: events.record) { sent, t in
                log.record(sent, t)
                if sent >= total * 3 / 10, sent % chunk != 0, sent < total - 1, paused.setOnce() {
                    reached.signal()
                    go.wait()
                }
            }
            let pausedMidChunk = await onThread { reached.wait(timeout: .now() + 30) == .success }
            #expect(pausedMidChunk, "the upload never reported a byte count inside a chunk")
            s.kill(SIGKILL)
            try s.start(port: port)
            go.signal()
            let result = try await upload
            #expect(result.retries >= 1)
            #expect(events.names.contains("retrying"))
            #expect(log.violations(total: total, minimumInterval: 0).isEmpty, "\(log.violations(total: total, minimumInterval: 0))")
            try await Self.expectSameFile(s, result, source: path)
        }
    }

    @Test func cancellingTheTaskStopsTheUpload() async throws {
        try await withTemporaryDirectory { dir in
            let (_, token) = try await sharedServer.signUp()
            let path = try TestFiles.write(TestFiles.randomBytes(4 << 20), named: "cancel.bin", in: dir)
            // The first progress call waits until the Task has been cancelled, so the cancel surely
            // lands mid-upload.
            let started = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0), flag = Flag()
            let task = Task {
                try await Self.client(sharedServer, token: token, chunk: 64 << 10).upload(file: path) { _, _ in
                    if flag.setOnce() {
                        started.signal()
                        cancelled.wait()
                    }
                }
            }
            await onThread { started.wait() }
            task.cancel()
            cancelled.signal()
            do {
                _ = try await task.value
                Issue.record("the upload finished despite the cancel")
            } catch let e as ClientError {
                #expect(e.code == .cancelled)
            }
        }
    }

    @Test func typedErrors() async throws {
        try await withTemporaryDirectory { dir in
            let (_, token) = try await sharedServer.signUp()
            let path = try TestFiles.write(TestFiles.randomBytes(1000), named: "small.bin", in: dir)

            // Nothing listens: unreachable, after the allowed attempts.
            let dead = TusClient(server: ParseServer(baseURL: "http://127.0.0.1:\(freePort())/parse", applicationId: "x"),
                                 configuration: .init(retry: RetryPolicy(maxConsecutiveFailures: 2, initialDelaySeconds: 0.01)))
            let unreachable = await onThread { () -> ClientError? in
                do { _ = try dead.upload(file: path) { _, _ in }; return nil } catch { return error as? ClientError }
            }
            #expect(unreachable?.code == .unreachable)
            #expect(unreachable?.attempts == 2)
            #expect(unreachable?.isRetryable == true)

            // A bad session token: unauthorized (Parse 209), not retried.
            let bad = await onThread { () -> ClientError? in
                do { _ = try Self.client(sharedServer, token: "r:" + String(repeating: "0", count: 32)).upload(file: path) { _, _ in }; return nil }
                catch { return error as? ClientError }
            }
            #expect(bad?.code == .unauthorized)
            #expect(bad?.parseCode == 209)
            #expect(bad?.attempts == 1)

            // Over the server's 20 MiB: 413 before any byte is sent.
            let big = dir + "/big.bin"
            #expect(FileManager.default.createFile(atPath: big, contents: nil))
            #expect(truncate(big, (20 << 20) + 1) == 0)
            let tooLarge = await onThread { () -> ClientError? in
                do { _ = try Self.client(sharedServer, token: token).upload(file: big) { _, _ in }; return nil } catch { return error as? ClientError }
            }
            #expect(tooLarge?.code == .tooLarge)
            #expect(tooLarge?.httpStatus == 413)

            // A missing file.
            let missing = await onThread { () -> ClientError? in
                do { _ = try Self.client(sharedServer, token: token).upload(file: dir + "/nope.bin") { _, _ in }; return nil } catch { return error as? ClientError }
            }
            #expect(missing?.code == .fileError)
            #expect(missing?.systemError == ENOENT)
        }
    }

    @Test func serverInfoAndTermination() async throws {
        let (_, token) = try await sharedServer.signUp()
        let client = Self.client(sharedServer, token: token)
        let info = try await onThread { try client.serverInfo() }
        #expect(info == TusServerInfo(versions: ["1.0.0"], extensions: ["creation", "creation-with-upload", "creation-defer-length",
                                                                          "termination", "checksum", "expiration"],
                                      maxSizeBytes: 20 << 20, checksumAlgorithms: ["sha1", "sha256"]))
        let t = try RawTus(sharedServer, token: token)
        let (_, path) = try t.create(length: 100)
        let url = sharedServer.baseURL + path.dropFirst("/parse".count)
        try await onThread { try client.terminate(uploadURL: url) }
        let after = await onThread { () -> ClientError? in
            do { _ = try client.status(uploadURL: url); return nil } catch { return error as? ClientError }
        }
        #expect(after?.code == .notFound)
        #expect(after?.httpStatus == 404)
    }

    @Test func parseClientLogsInAndSavesObjects() async throws {
        let name = "pc_\(UUID().uuidString.prefix(8))"
        let (id, _) = try await sharedServer.signUp(name, password: "pw-123")
        let server = ParseServer(baseURL: sharedServer.baseURL, applicationId: sharedServer.appId)
        let outcome = try await onThread { () -> (ParseClient.Session, [String: JSON], String, [String: JSON], Int, ClientError?) in
            let c = try ParseClient(server: server)
            let session = try c.logIn(username: name, password: "pw-123")
            let me = try c.currentUser()
            let image = try c.createObject(className: "WallImage", fields: ["userFBId": .string(session.objectId)])
            let objectId = try c.createObject(className: "WallImageComment", fields: ["comment": "hi", "imageObjectId": .string(image)])
            let object = try c.getObject(className: "WallImageComment", objectId: objectId)
            let found = try c.query(className: "WallImageComment", where: ["imageObjectId": .string(image)]).count
            var wrong: ClientError?
            do { _ = try ParseClient(server: server).logIn(username: name, password: "nope") } catch { wrong = error as? ClientError }
            return (session, me, objectId, object, found, wrong)
        }
        #expect(outcome.0.objectId == id && outcome.0.username == name && outcome.0.sessionToken.hasPrefix("r:"))
        #expect(outcome.1["objectId"]?.stringValue == id)
        #expect(outcome.3["comment"]?.stringValue == "hi" && outcome.3["objectId"]?.stringValue == outcome.2)
        #expect(outcome.4 == 1)
        #expect(outcome.5?.code == .rejected && outcome.5?.parseCode == 101 && outcome.5?.httpStatus == 404)
    }
}

// MARK: helpers

/// Runs blocking work on its own thread (not Swift's cooperative pool) and awaits its result.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        Thread { c.resume(with: Result { try body() }) }.start()
    }
}

func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in
        Thread { c.resume(returning: body()) }.start()
    }
}

/// Upload events, recorded from the upload thread.
final class EventLog: @unchecked Sendable {
    // @unchecked Sendable: `events` is only touched under `lock`.
    private let lock = NSLock()
    private var events: [UploadEvent] = []

    func record(_ e: UploadEvent) { lock.lock(); events.append(e); lock.unlock() }

    var names: [String] {
        lock.lock(); defer { lock.unlock() }
        return events.map {
            switch $0 {
            case .created: return "created"
            case .resumed: return "resumed"
            case .restarted: return "restarted"
            case .retrying: return "retrying"
            }
        }
    }

    var createdURL: String? {
        lock.lock(); defer { lock.unlock() }
        for case .created(let url) in events { return url }
        return nil
    }

    /// The messages of the errors the client retried after.
    var retryMessages: [String] {
        lock.lock(); defer { lock.unlock() }
        return events.compactMap { if case .retrying(_, _, let error) = $0 { return error.message } else { return nil } }
    }
}

/// A flag set once from any thread.
final class Flag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = false

    /// - Returns: true for the one call that set it.
    func setOnce() -> Bool {
        lock.lock(); defer { lock.unlock() }
        if value { return false }
        value = true
        return true
    }

    var isSet: Bool { lock.withLock { value } }
}
