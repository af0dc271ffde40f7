import Foundation
import Synchronization
import PhotoWallTesting
import Testing

/// The tus 1.0.0 server at `/parse/uploads`, one test per status code it answers
/// (tus 1.0.0 §Core, §Creation, §Checksum, §Termination, §Expiration).
@Suite struct TusProtocolTests {
    /// A fresh user's raw tus connection to the shared server.
    func tus() async throws -> RawTus { try RawTus(sharedServer, token: try await sharedServer.signUp().1) }

    @Test func optionsAdvertisesTheServer() async throws {
        let t = try await tus()
        let r = try t.client.request("OPTIONS", "/parse/uploads", headers: [("X-Parse-Application-Id", sharedServer.appId)])
        #expect(r.status == 204)
        #expect(r.header("Tus-Version") == "1.0.0")
        #expect(r.header("Tus-Extension") == "creation,creation-with-upload,creation-defer-length,termination,checksum,expiration")
        #expect(r.header("Tus-Max-Size") == "\(20 << 20)")
        #expect(r.header("Tus-Checksum-Algorithm") == "sha1,sha256")
    }

    @Test func status201OnCreation() async throws {
        let t = try await tus()
        let (r, path) = try t.create(length: 1000)
        #expect(r.status == 201)
        #expect(r.header("Tus-Resumable") == "1.0.0")
        #expect(r.header("Upload-Offset") == "0")
        #expect(r.header("Location") == sharedServer.baseURL + path.dropFirst("/parse".count))
        #expect(path.hasPrefix("/parse/uploads/") && path.count == "/parse/uploads/".count + 32)
        #expect(r.header("Upload-Expires")?.hasSuffix(" GMT") == true)
    }

    @Test func status201WithUploadReportsTheOffset() async throws {
        let t = try await tus()
        let body = TestFiles.randomBytes(3000)
        let (r, path) = try t.create(length: 5000, body: body)
        #expect(r.status == 201)
        #expect(r.header("Upload-Offset") == "3000")
        #expect(try t.head(path).header("Upload-Offset") == "3000")
    }

    /// A finished upload of a photo is rendered at once, as a `POST /files` one is
    /// (`ThumbnailService.prerender`, `ThumbnailAPITests.anUploadedPhotoIsRenderedBeforeItsSave`):
    /// the `WallImage` save naming it takes the display and thumbnail made meanwhile (the server's
    /// debug log says so) and answers with them.
    @Test func aFinishedPhotoIsRenderedBeforeItsSave() async throws {
        let server = try ParseTestServer(extraArgs: ["--log-level", "debug"])
        defer { server.stop() }
        let dir = server.dataDir.appendingPathComponent("samples")
        #expect(try runProcess(TestPaths.binary, ["samples", dir.path, "--width", "600", "--height", "400"]).status == 0)
        let token = try await server.signUp().1
        let t = try RawTus(server, token: token)
        let photo = [UInt8](try Data(contentsOf: dir.appendingPathComponent("landscape_o3.jpg")))
        let (_, path) = try t.create(length: photo.count, name: "photo.jpg")
        let last = try t.patch(path, offset: 0, body: photo, checksum: RawTus.checksum(photo))
        #expect(last.status == 204)
        let name = try #require(last.header("X-Parse-File-Name"))
        #expect(try await server.waitForLog("prerendered file=\(name)\n"), "the finished upload was prerendered without an error")
        let c = try await server.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]], key: .session(token))
        #expect(c.status == 201, "\(c.text)")
        #expect(c.json["width"] == 600 && c.json["height"] == 400, "\(c.text)")
        #expect(server.serverLog().contains("thumbnails from the upload's prerender file=\(name)\n"))
    }

    @Test func status204OnPatchAnd200OnHead() async throws {
        let t = try await tus()
        let bytes = TestFiles.randomBytes(300_000)
        let (_, path) = try t.create(length: bytes.count, name: "two parts.bin")
        let first = try t.patch(path, offset: 0, body: Array(bytes[0..<100_000]), checksum: RawTus.checksum(Array(bytes[0..<100_000])))
        #expect(first.status == 204)
        #expect(first.header("Upload-Offset") == "100000")
        #expect(first.header("X-Parse-File-Name") == nil)

        let head = try t.head(path)
        #expect(head.status == 200)
        #expect(head.header("Upload-Offset") == "100000")
        #expect(head.header("Upload-Length") == "300000")
        #expect(head.header("Cache-Control") == "no-store")
        #expect(head.body.isEmpty)

        let rest = Array(bytes[100_000...])
        let last = try t.patch(path, offset: 100_000, body: rest, checksum: RawTus.checksum(rest, .sha1))
        #expect(last.status == 204)
        #expect(last.header("Upload-Offset") == "300000")
        let name = try #require(last.header("X-Parse-File-Name"))
        // The stored name's safe form (a space becomes `_`); FileNameTests covers real names.
        #expect(name.hasSuffix("_two_parts.bin") && name.count == 33 + "two_parts.bin".count)
        #expect(last.header("X-Parse-File-URL") == "\(sharedServer.baseURL)/files/\(sharedServer.appId)/\(name)")
        // HEAD on a finished upload names the file too.
        #expect(try t.head(path).header("X-Parse-File-Name") == name)
        let file = try await sharedServer.request("GET", last.header("X-Parse-File-URL")!, key: .none)
        #expect(file.status == 200)
        #expect(TestFiles.sha256(file.body) == TestFiles.sha256(bytes))
    }

    @Test func status204OnTerminationThen404() async throws {
        let t = try await tus()
        let (_, path) = try t.create(length: 10)
        let r = try t.client.request("DELETE", path, headers: t.headers())
        #expect(r.status == 204)
        #expect(try t.head(path).status == 404)
    }

    @Test func methodOverrideActsAsPatch() async throws {
        let t = try await tus()
        let (_, path) = try t.create(length: 4)
        let r = try t.client.request("POST", path, headers: t.headers([("X-HTTP-Method-Override", "PATCH"), ("Upload-Offset", "0"),
                                                                         ("Content-Type", "application/offset+octet-stream")]),
                                     body: [1, 2, 3, 4])
        #expect(r.status == 204)
        #expect(r.header("Upload-Offset") == "4")
    }

    @Test func status404ForAnUnknownUpload() async throws {
        let t = try await tus()
        let path = "/parse/uploads/" + String(repeating: "ab", count: 16)
        #expect(try t.head(path).status == 404)
        let patch = try t.patch(path, offset: 0, body: [1, 2, 3])
        #expect(patch.status == 404)
        #expect(patch.text == #"{"code":101,"error":"Upload not found."}"#)
        // Another user's upload is unknown too.
        let (_, other) = try t.create(length: 10)
        #expect(try await tus().head(other).status == 404)
    }

    @Test func status409OnOffsetMismatch() async throws {
        let t = try await tus()
        let (_, path) = try t.create(length: 100)
        #expect(try t.patch(path, offset: 0, body: Array(repeating: 7, count: 40)).status == 204)
        let r = try t.patch(path, offset: 10, body: Array(repeating: 7, count: 10))
        #expect(r.status == 409)
        #expect(r.text == #"{"code":130,"error":"Upload-Offset does not match the upload's offset 40."}"#)
        #expect(r.header("Upload-Offset") == "40")
        #expect(try t.head(path).header("Upload-Offset") == "40")
        // The offset is checked before the length (tus 1.0.0 §PATCH, as tusd): a wrong offset with a
        // body longer than the upload lacks, or on a finished upload (which lacks nothing), is 409 too.
        let long = try t.patch(path, offset: 1, body: Array(repeating: 7, count: 99))
        #expect(long.status == 409 && long.header("Upload-Offset") == "40")
        #expect(try t.patch(path, offset: 40, body: Array(repeating: 7, count: 60)).status == 204)
        let finished = try t.patch(path, offset: 5, body: Array(repeating: 7, count: 10))
        #expect(finished.status == 409)
        #expect(finished.text == #"{"code":130,"error":"Upload-Offset does not match the upload's offset 100."}"#)
        #expect(finished.header("Upload-Offset") == "100")
    }

    /// Issue 11 finding 11: after a crash between the last byte's commit and the completion, the
    /// record says every byte is in while a lease from the dead writer is still fresh. The next HEAD
    /// completes the upload at once and names the file (it used to answer without a name until the
    /// lease lapsed). The state is set up in the database: a deferred-length upload holding all its
    /// bytes gets its length and a dead writer's fresh lease.
    @Test func headCompletesAnUploadWhoseLastByteIsCommitted() async throws {
        let s = sharedServer
        let t = try await tus()
        let bytes = TestFiles.randomBytes(5000)
        let created = try t.client.request("POST", "/parse/uploads", headers: t.headers([
            ("Upload-Defer-Length", "1"), ("Upload-Metadata", "filename \(Data("crash.bin".utf8).base64EncodedString())"),
        ]))
        #expect(created.status == 201)
        let path = RawTus.path(of: try #require(created.header("Location")))
        let id = String(path.split(separator: "/").last!)
        #expect(try t.patch(path, offset: 0, body: bytes).status == 204)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try s.databaseQuery("UPDATE \"_UPLOADS\" SET length = 5000, writer = 'dead-writer', \"writerSeenAt\" = \(now) WHERE id = '\(id)'")

        let head = try t.head(path)
        #expect(head.status == 200)
        #expect(head.header("Upload-Offset") == "5000")
        let name = try #require(head.header("X-Parse-File-Name"))
        #expect(name == "\(id)_crash.bin")
        #expect(head.header("X-Parse-File-URL") == "\(s.baseURL)/files/\(s.appId)/\(name)")
        let file = try await s.request("GET", try #require(head.header("X-Parse-File-URL")), key: .none)
        #expect(file.status == 200)
        #expect(TestFiles.sha256(file.body) == TestFiles.sha256(bytes))
        // Completed for good: the record names the file, the lease is released.
        #expect(try s.databaseQuery("SELECT \"completedName\", writer IS NULL FROM \"_UPLOADS\" WHERE id = '\(id)'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "\(name)|\(TestDatabase.postgresAdminURL == nil ? "1" : "t")")
        #expect(try t.head(path).header("X-Parse-File-Name") == name)
    }

    @Test func status410WhenExpired() async throws {
        // Expiry 1 s; the reaper runs once at start, then not for an hour.
        let s = try ParseTestServer(extraArgs: ["--upload-expiry", "1", "--upload-reaper-interval", "3600"])
        let (_, token) = try await s.signUp()
        let t = try RawTus(s, token: token)
        let (_, path) = try t.create(length: 100)
        #expect(try t.patch(path, offset: 0, body: [1, 2, 3]).status == 204)  // pushes the expiry on by 1 s
        try await Task.sleep(for: .milliseconds(1300))
        let head = try t.head(path)
        #expect(head.status == 410)
        #expect(head.header("Upload-Offset") == nil)
        #expect(try t.patch(path, offset: 3, body: [4]).status == 410)
    }

    @Test func theReaperRemovesExpiredUploads() async throws {
        let s = try ParseTestServer(extraArgs: ["--upload-expiry", "1", "--upload-reaper-interval", "0.3"])
        let (_, token) = try await s.signUp()
        let t = try RawTus(s, token: token)
        let (_, path) = try t.create(length: 100)
        #expect(try t.patch(path, offset: 0, body: [1, 2, 3]).status == 204)
        let id = String(path.split(separator: "/").last!)
        #expect(try s.uploadLeftovers(id).count == 1, "the 3 bytes are kept (a part file, or a tail object on S3)")
        try await Task.sleep(for: .milliseconds(2000))
        #expect(try t.head(path).status == 404)
        #expect(try s.uploadLeftovers(id).isEmpty)
    }

    /// Storage a crash left without an upload record (a part file; on S3 a multipart upload and a
    /// tail) is removed at start once older than `--upload-orphan-age`; a live upload's is kept,
    /// however old, and the upload still completes.
    @Test func orphanedUploadStorageIsRemovedAndLiveUploadsKept() async throws {
        let s = try ParseTestServer(extraArgs: ["--upload-orphan-age", "1"])
        let (_, token) = try await s.signUp()
        let t = try RawTus(s, token: token)
        let (_, path) = try t.create(length: 6)
        #expect(try t.patch(path, offset: 0, body: [1, 2, 3]).status == 204)
        let live = String(path.split(separator: "/").last!)
        let orphan = "0f" + String(repeating: "e", count: 30)
        try s.plantOrphanedUpload(orphan)
        #expect(try s.uploadLeftovers(orphan).count == 1)
        #expect(s.localPartFileExists(orphan))
        try await Task.sleep(for: .milliseconds(2100))  // both now older than the orphan age
        s.stop()
        try s.start()  // the sweep runs at start
        var swept = false
        for _ in 0..<100 where !swept {
            swept = try s.uploadLeftovers(orphan).isEmpty && s.multipartUploads(of: orphan).isEmpty && !s.localPartFileExists(orphan)
            if !swept { try await Task.sleep(for: .milliseconds(100)) }
        }
        let left = try s.uploadLeftovers(orphan) + s.multipartUploads(of: orphan) + (s.localPartFileExists(orphan) ? ["local part file"] : [])
        #expect(swept, "orphan left: \(left)")
        #expect(try s.uploadLeftovers(live).count == 1, "the live upload keeps its bytes")
        let t2 = try RawTus(s, token: token)
        let last = try t2.patch(path, offset: 3, body: [4, 5, 6])
        #expect(last.status == 204)
        let url = try #require(last.header("X-Parse-File-URL"))
        let file = try await s.request("GET", url, key: .none)
        #expect([UInt8](file.body) == [1, 2, 3, 4, 5, 6])
    }

    @Test func status412ForAnotherTusVersion() async throws {
        let t = try await tus()
        let (_, path) = try t.create(length: 100)
        let r = try t.client.request("PATCH", path, headers: t.headers([("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream")],
                                                                          tusVersion: "0.2.2"), body: [1, 2, 3])
        #expect(r.status == 412)
        #expect(r.header("Tus-Version") == "1.0.0")
        let missing = try t.client.request("POST", "/parse/uploads", headers: t.headers([("Upload-Length", "10")], tusVersion: nil))
        #expect(missing.status == 412)
        #expect(try t.head(path).header("Upload-Offset") == "0")
    }

    @Test func status413OverTusMaxSize() async throws {
        let t = try await tus()
        let (r, _) = try t.create(length: (20 << 20) + 1)
        #expect(r.status == 413)
        // A PATCH body longer than what the upload lacks is refused before it is read.
        let (_, path) = try t.create(length: 10)
        #expect(try t.patch(path, offset: 0, body: Array(repeating: 1, count: 11)).status == 413)
        #expect(try RawTus(sharedServer, token: t.token).head(path).header("Upload-Offset") == "0")
    }

    @Test func status415ForAnotherContentType() async throws {
        let t = try await tus()
        let (_, path) = try t.create(length: 10)
        #expect(try t.patch(path, offset: 0, body: [1, 2], contentType: "application/octet-stream").status == 415)
        #expect(try t.head(path).header("Upload-Offset") == "0")
    }

    @Test func status423ForASecondConcurrentPatch() async throws {
        let t = try await tus()
        let (_, path) = try t.create(length: 2000)
        // The first PATCH sends its head and then its body a byte every 50 ms: it holds the upload
        // and is visibly alive.
        let first = try TestHTTPClient(port: sharedServer.port)
        try first.sendHead("PATCH", path, headers: t.headers([("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream"),
                                                              ("Content-Length", "1000")]))
        try first.send(Array(repeating: UInt8(1), count: 500))
        // The trickle starts before the wait, so that however long the server takes to write the 500
        // bytes, the first PATCH never goes quiet for the upload stall limit (5 s) and is never ended.
        let trickle = Trickle(first, bytes: 400)
        try await waitForPart(sharedServer, path, bytes: 500)
        let second = try t.patch(path, offset: 0, body: Array(repeating: 2, count: 1000))
        #expect(second.status == 423)
        // A HEAD leaves a PATCH that is receiving bytes be, and reports the committed offset.
        #expect(try t.head(path).header("Upload-Offset") == "0")
        let trickled = await onThread { trickle.finish() }
        try first.send(Array(repeating: UInt8(1), count: 500 - trickled))
        let done = try first.readResponse(method: "PATCH")
        #expect(done.status == 204)
        #expect(done.header("Upload-Offset") == "1000")
    }

    /// Starts a PATCH of `bytes[offset..<offset + 1000]` at `offset` (`Content-Length: 1000`, with
    /// `checksum` when given) on a new connection to `s`, and sends its first `count` bytes; with
    /// `waitForThem`, waits until the server wrote them (that PATCH then holds the upload).
    static func startPartialPatch(on s: ParseTestServer = sharedServer, _ t: RawTus, _ path: String,
                                  _ bytes: [UInt8] = Array(repeating: 1, count: 1000), at offset: Int = 0,
                                  sending count: Int = 500, checksum: String? = nil,
                                  waitForThem: Bool = true) async throws -> TestHTTPClient {
        let patch = try TestHTTPClient(port: s.port)
        var headers = [("Upload-Offset", "\(offset)"), ("Content-Type", "application/offset+octet-stream"), ("Content-Length", "1000")]
        if let checksum { headers.append(("Upload-Checksum", checksum)) }
        try patch.sendHead("PATCH", path, headers: t.headers(headers))
        try patch.send(Array(bytes[offset..<offset + count]))
        if waitForThem { try await waitForPart(s, path, bytes: offset + count) }
        return patch
    }

    @Test func aPatchAtTheEndOfOneInProgressIsPipelinedBehindIt() async throws {
        let t = try await tus()
        let bytes = TestFiles.randomBytes(3000)
        let (_, path) = try t.create(length: 3000)
        // The first PATCH (0..<1000) sends half its body and holds the upload…
        let first = try await Self.startPartialPatch(t, path, bytes, checksum: RawTus.checksum(Array(bytes[0..<1000])))
        // …while the next one (1000..<2000), on another connection, is already sent: it is not refused
        // (423) but waits for the first one's body, then writes behind it.
        nonisolated(unsafe) let other = try RawTus(sharedServer, token: t.token)  // used by that task alone
        let second = Task { try await onThread { try other.patch(path, offset: 1000, body: Array(bytes[1000..<2000]),
                                                                 checksum: RawTus.checksum(Array(bytes[1000..<2000]))) } }
        try await Task.sleep(for: .milliseconds(300))  // the second PATCH reaches the server first
        try first.send(Array(bytes[500..<1000]))
        let done = try first.readResponse(method: "PATCH")
        #expect(done.status == 204)
        #expect(done.header("Upload-Offset") == "1000")
        let pipelined = try await second.value
        if TestFileStore.s3URL != nil {
            // S3 parts are not pipelined (README, tus uploads): the early PATCH is refused with the offset
            // it found (409), and the client sends that chunk again. On a loaded machine it may reach the
            // server only as the first one commits: it then waits for it and writes (204), never 423.
            #expect(pipelined.status == 409 || pipelined.status == 204)
            if pipelined.status == 409 {
                #expect(pipelined.header("Upload-Offset") == "0")
                let again = try t.patch(path, offset: 1000, body: Array(bytes[1000..<2000]))
                #expect(again.status == 204)
                #expect(again.header("Upload-Offset") == "2000")
            } else {
                #expect(pipelined.header("Upload-Offset") == "2000")
            }
        } else {
            #expect(pipelined.status == 204)
            #expect(pipelined.header("Upload-Offset") == "2000")
        }
        let last = try t.patch(path, offset: 2000, body: Array(bytes[2000...]))
        #expect(last.status == 204)
        let url = try #require(last.header("X-Parse-File-URL"))
        let file = try await sharedServer.request("GET", url, key: .none)
        #expect(Array(file.body) == bytes, "the three chunks, in order")
    }

    /// A PATCH at the offset where the one before it ends, sent as that one's last byte goes out (a
    /// pipelining client's next chunk), is never refused as locked (423) for the instant the two
    /// overlap: when it finds the upload still held by the PATCH that is committing, it waits for it to
    /// let go and writes (204); when it read the upload before that commit, it gets 409 with the offset
    /// it read. Sent unpipelined (chunked, so without a declared length, as every PATCH is on S3), at
    /// delays that sweep the first PATCH's commit, on a server admitting one handler at a time.
    @Test func aPatchSentAsThePreviousOneCommitsIsNotRefusedAsLocked() async throws {
        let s = try ParseTestServer(extraArgs: ["--active-workers", "1", "--log-level", "info"])
        let t = try RawTus(s, token: try await s.signUp().1)
        var statuses: [Int] = []
        for round in 0..<96 {
            let (_, path) = try t.create(length: 2000)
            // Used by the thread below alone, while this task waits for it.
            nonisolated(unsafe) let first = try await Self.startPartialPatch(on: s, t, path, sending: 999)
            nonisolated(unsafe) let next = try TestHTTPClient(port: s.port)
            // Head and body in one write: a server that refuses the head may close before a body sent later.
            let fields = t.headers([("Host", "127.0.0.1:\(s.port)"), ("Upload-Offset", "1000"),
                                    ("Content-Type", "application/offset+octet-stream"), ("Transfer-Encoding", "chunked")])
            let request = Array(("PATCH \(path) HTTP/1.1\r\n" + fields.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n3e8\r\n").utf8)
                + Array(repeating: 2, count: 1000) + Array("\r\n0\r\n\r\n".utf8)
            let delay = Duration.microseconds(round % 24 * 15)  // 0 to 345 µs after the first PATCH's last byte
            let (done, second) = try await onThread { () throws -> (TestHTTPResponse, TestHTTPResponse) in
                try first.send([1])
                let sent = ContinuousClock.now
                while ContinuousClock.now - sent < delay {}  // spun: a sleep's granularity is coarser
                try next.send(request)
                return (try first.readResponse(method: "PATCH"), try next.readResponse(method: "PATCH"))
            }
            #expect(done.status == 204 && done.header("Upload-Offset") == "1000", "round \(round): the first PATCH")
            statuses.append(second.status)
            if second.status == 409 {
                #expect(second.header("Upload-Offset") == "0", "round \(round): 409 names the offset it read")
                let again = try t.patch(path, offset: 1000, body: Array(repeating: 2, count: 1000))
                #expect(again.status == 204, "round \(round): the chunk sent again")
            } else {
                #expect(second.status == 204 && second.header("Upload-Offset") == "2000",
                        "round \(round): got \(second.status) \(second.text); server log: \(s.serverLog().suffix(3000))")
            }
        }
        #expect(!statuses.contains(423), "statuses of the second PATCH: \(statuses)")
    }

    /// Three PATCHes in flight at once (as `TusClient` sends them): the second chains behind the first,
    /// the third behind the second while the second's body still streams. Each is confirmed in order,
    /// and the file's stored SHA-256 (its `ETag`) is the whole file's: the running digest goes on
    /// across the chain, whichever thread hashes the bytes.
    @Test func threePipelinedPatchesCommitInOrderAndTheFileGetsTheWholeDigest() async throws {
        if TestFileStore.s3URL != nil { return }  // S3 parts are not pipelined
        let t = try await tus()
        let bytes = TestFiles.randomBytes(3000)
        let (_, path) = try t.create(length: 3000)
        let first = try await Self.startPartialPatch(t, path, bytes, checksum: RawTus.checksum(Array(bytes[0..<1000])))
        // The second (1000..<2000) sends half its body at once; it waits for the first's body.
        let second = try await Self.startPartialPatch(t, path, bytes, at: 1000, checksum: RawTus.checksum(Array(bytes[1000..<2000])),
                                                   waitForThem: false)
        try await Task.sleep(for: .milliseconds(300))
        try first.send(Array(bytes[500..<1000]))
        try await waitForPart(sharedServer, path, bytes: 1500)  // the second chained on and wrote its half
        // The third (2000..<3000) waits for the second's body, then chains behind it.
        nonisolated(unsafe) let other = try RawTus(sharedServer, token: t.token)  // used by that task alone
        let third = Task { try await onThread { try other.patch(path, offset: 2000, body: Array(bytes[2000...]),
                                                                checksum: RawTus.checksum(Array(bytes[2000...]))) } }
        try await Task.sleep(for: .milliseconds(300))
        try second.send(Array(bytes[1500..<2000]))
        let one = try first.readResponse(method: "PATCH")
        #expect(one.status == 204)
        #expect(one.header("Upload-Offset") == "1000")
        let two = try second.readResponse(method: "PATCH")
        #expect(two.status == 204)
        #expect(two.header("Upload-Offset") == "2000")
        let three = try await third.value
        #expect(three.status == 204)
        #expect(three.header("Upload-Offset") == "3000")
        let url = try #require(three.header("X-Parse-File-URL"))
        let file = try await sharedServer.request("GET", url, key: .none)
        #expect(Array(file.body) == bytes, "the three chunks, in order")
        #expect(file.header("ETag") == "\"\(TestFiles.sha256(bytes))\"", "the stored SHA-256 is the whole file's")
    }

    @Test func aPipelinedPatchFailsWith409WhenTheOneBeforeItIsRefused() async throws {
        let t = try await tus()
        let bytes = TestFiles.randomBytes(2000)
        let (_, path) = try t.create(length: 2000)
        let first = try await Self.startPartialPatch(t, path, bytes, checksum: RawTus.checksum([1, 2, 3]))
        nonisolated(unsafe) let other = try RawTus(sharedServer, token: t.token)  // used by that task alone
        let second = Task { try await onThread { try other.patch(path, offset: 1000, body: Array(bytes[1000...])) } }
        try await Task.sleep(for: .milliseconds(300))
        try first.send(Array(bytes[500..<1000]))
        #expect(try first.readResponse(method: "PATCH").status == 460, "the first chunk's checksum is wrong")
        let pipelined = try await second.value
        #expect(pipelined.status == 409, "its bytes had nothing to follow")
        #expect(pipelined.header("Upload-Offset") == "0")
        #expect(try t.head(path).header("Upload-Offset") == "0")
        // Nothing of either stayed: the upload goes on from 0.
        #expect(try t.patch(path, offset: 0, body: Array(bytes[0..<1000])).status == 204)
        let last = try t.patch(path, offset: 1000, body: Array(bytes[1000...]))
        #expect(last.status == 204)
        let url = try #require(last.header("X-Parse-File-URL"))
        #expect(Array(try await sharedServer.request("GET", url, key: .none).body) == bytes)
    }

    /// A pipelined PATCH whose own checksum is wrong, while the one before it still commits: that one is
    /// kept, this one answers 460 and keeps nothing.
    @Test func aPipelinedPatchWithAWrongChecksumIsRefusedAfterTheOneBeforeCommits() async throws {
        if TestFileStore.s3URL != nil { return }  // S3 parts are not pipelined
        let t = try await tus()
        let bytes = TestFiles.randomBytes(2000)
        let (_, path) = try t.create(length: 2000)
        let first = try await Self.startPartialPatch(t, path, bytes, checksum: RawTus.checksum(Array(bytes[0..<1000])))
        nonisolated(unsafe) let other = try RawTus(sharedServer, token: t.token)  // used by that task alone
        let second = Task { try await onThread { try other.patch(path, offset: 1000, body: Array(bytes[1000...]),
                                                                 checksum: RawTus.checksum(Array(bytes[0..<1000]))) } }
        try await Task.sleep(for: .milliseconds(300))
        try first.send(Array(bytes[500..<1000]))
        let done = try first.readResponse(method: "PATCH")
        #expect(done.status == 204)
        #expect(done.header("Upload-Offset") == "1000")
        var refused = try await second.value
        if refused.status == 423 {
            // It reached the server only while the first one was finishing (a loaded machine: the 300 ms were
            // not enough): tus's "locked", which a client answers by sending it again, now behind the first.
            refused = try other.patch(path, offset: 1000, body: Array(bytes[1000...]), checksum: RawTus.checksum(Array(bytes[0..<1000])))
        }
        #expect(refused.status == 460)
        #expect(try t.head(path).header("Upload-Offset") == "1000")
        let right = try t.patch(path, offset: 1000, body: Array(bytes[1000...]), checksum: RawTus.checksum(Array(bytes[1000...])))
        #expect(right.status == 204)
        let url = try #require(right.header("X-Parse-File-URL"))
        #expect(Array(try await sharedServer.request("GET", url, key: .none).body) == bytes)
    }

    /// On a new server with `--upload-stall-timeout 1`: a 2000-byte upload whose PATCH sent 600 of its
    /// 1000 bytes and then went quiet (a dropped link the server can't see) for 1.3 s.
    static func stalledPatch() async throws -> (server: ParseTestServer, tus: RawTus, path: String, connection: TestHTTPClient) {
        let s = try ParseTestServer(extraArgs: ["--upload-stall-timeout", "1"])
        let t = try RawTus(s, token: try await s.signUp().1)
        let (_, path) = try t.create(length: 2000)
        let patch = try await startPartialPatch(on: s, t, path, sending: 600)
        try await Task.sleep(for: .milliseconds(1300))
        return (s, t, path, patch)
    }

    @Test func aStalledPatchGivesWayToTheNextOne() async throws {
        // A PATCH whose connection went quiet…
        let (s, t, path, first) = try await Self.stalledPatch()
        // …is preempted by the next one, keeping the 600 bytes it received.
        let second = try t.patch(path, offset: 0, body: Array(repeating: 2, count: 1000))
        #expect(second.status == 409)
        #expect(second.header("Upload-Offset") == "600")
        let third = try t.patch(path, offset: 600, body: Array(repeating: 3, count: 1400))
        #expect(third.status == 204)
        let name = try #require(third.header("X-Parse-File-Name"))
        // The kept bytes count in the file's recorded SHA-256.
        let recorded = try TestDatabase.query("SELECT sha256 FROM \"_FILES\" WHERE name = '\(name)'", dataDir: s.dataDir, arguments: s.extraArgs)
        #expect(recorded.trimmingCharacters(in: .whitespacesAndNewlines)
                == TestFiles.sha256(Array(repeating: UInt8(1), count: 600) + Array(repeating: UInt8(3), count: 1400)))
        // The old connection's later bytes are refused: it is closed.
        try? first.send(Array(repeating: UInt8(1), count: 400))
        #expect(first.waitForPeerClose(timeoutSeconds: 5))
    }

    /// A client resuming right after its connection broke (a Ctrl-C, a dropped Wi-Fi) sends HEAD at
    /// once. The server keeps what the cut PATCH received, but keeping it (a sync and a commit, on a
    /// worker, behind the requests queued for the cores) may still be under way when the HEAD comes:
    /// the HEAD waits for it and reports every byte kept, never the offset from before the PATCH.
    /// Forty rounds, each on a fresh upload, on a server admitting one handler at a time while four
    /// other clients keep it busy with uploads of their own (as on a loaded server).
    @Test func aHeadRightAfterACutPatchReportsWhatItKept() async throws {
        // At `info`, so that a failure shows the server's side (each message ends with its log's tail).
        let s = try ParseTestServer(extraArgs: ["--active-workers", "1", "--log-level", "info"])
        let token = try await s.signUp().1
        let stop = Flag()
        defer { _ = stop.setOnce() }  // also when a round throws: the load threads must not run on
        var load: [Task<(uploads: Int, error: String?), Never>] = []
        for _ in 0..<4 {
            let other = try await s.signUp().1
            // On threads of their own: blocking socket calls must not take the test's async threads.
            load.append(Task {
                await onThread {
                    var done = 0
                    do {
                        let client = try RawTus(s, token: other)
                        while !stop.isSet {
                            let (_, path) = try client.create(length: 4000)
                            _ = try client.patch(path, offset: 0, body: Array(repeating: 7, count: 4000))
                            done += 1
                        }
                    } catch {
                        return (done, "\(error)")
                    }
                    return (done, nil)
                }
            })
        }
        var offsets: [String] = []
        do {
            // Opened only now: a connection that sends no request head for `--request-head-timeout`
            // (10 s; the sign-ups above can take that long on a loaded machine) is closed by the server.
            let t = try RawTus(s, token: token)
            for _ in 0..<40 {
                let (_, path) = try t.create(length: 2000)
                let cut = try await Self.startPartialPatch(on: s, t, path, sending: 600)
                cut.close()
                // As a client process that restarts would: a few milliseconds later, on a new connection.
                try await Task.sleep(for: .milliseconds(5))
                offsets.append(try RawTus(s, token: token).head(path).header("Upload-Offset") ?? "none")
            }
        } catch {
            Issue.record("round \(offsets.count + 1): \(error); server log: \(s.serverLog().suffix(4000))")
        }
        _ = stop.setOnce()
        var uploads = 0
        for task in load {
            let result = await task.value
            uploads += result.uploads
            #expect(result.error == nil, "a load client: \(result.error ?? ""); server log: \(s.serverLog().suffix(4000))")
        }
        #expect(uploads > 0, "the other clients uploaded meanwhile")
        #expect(offsets == Array(repeating: "600", count: 40))
    }

    /// A HEAD finds the upload as the next PATCH would: a PATCH whose connection went quiet for the
    /// stall limit (a dropped link the server can't see) gives way to it, keeping what it received,
    /// and the HEAD reports that offset instead of the one from before the PATCH (as tusd's HEAD,
    /// which takes the upload's lock, does).
    @Test func aHeadPreemptsAStalledPatchAndReportsWhatItKept() async throws {
        let (_, t, path, quiet) = try await Self.stalledPatch()
        let head = try t.head(path)
        #expect(head.status == 200)
        #expect(head.header("Upload-Offset") == "600")
        let rest = try t.patch(path, offset: 600, body: Array(repeating: 3, count: 1400))
        #expect(rest.status == 204)
        #expect(rest.header("Upload-Offset") == "2000")
        // The preempted connection is closed.
        try? quiet.send(Array(repeating: UInt8(1), count: 400))
        #expect(quiet.waitForPeerClose(timeoutSeconds: 5))
    }

    @Test func status460OnChecksumMismatchDiscardsTheChunk() async throws {
        let t = try await tus()
        let bytes = TestFiles.randomBytes(2000)
        let (_, path) = try t.create(length: 2000)
        #expect(try t.patch(path, offset: 0, body: Array(bytes[0..<1000]), checksum: RawTus.checksum(Array(bytes[0..<1000]))).status == 204)
        let wrong = try t.patch(path, offset: 1000, body: Array(bytes[1000...]), checksum: RawTus.checksum(Array(bytes[0..<1000])))
        #expect(wrong.status == 460)
        #expect(try t.head(path).header("Upload-Offset") == "1000")
        let sha1Wrong = try t.patch(path, offset: 1000, body: Array(bytes[1000...]), checksum: RawTus.checksum([1], .sha1))
        #expect(sha1Wrong.status == 460)
        #expect(try t.head(path).header("Upload-Offset") == "1000")
        // Unknown algorithm: 400, nothing kept.
        #expect(try t.patch(path, offset: 1000, body: Array(bytes[1000...]), checksum: "md5 AAAA").status == 400)
        let right = try t.patch(path, offset: 1000, body: Array(bytes[1000...]), checksum: RawTus.checksum(Array(bytes[1000...])))
        #expect(right.status == 204)
        #expect(right.header("X-Parse-File-Name") != nil)
    }

    @Test func anonymousAndWrongAppAreRefused() async throws {
        let t = try await tus()
        let anonymous = try t.client.request("POST", "/parse/uploads", headers: [("X-Parse-Application-Id", sharedServer.appId),
                                                                                 ("Tus-Resumable", "1.0.0"), ("Upload-Length", "10")])
        #expect(anonymous.status == 400)
        #expect(anonymous.text == #"{"code":130,"error":"File upload by public is disabled."}"#)
        let wrongApp = try t.client.request("POST", "/parse/uploads", headers: [("X-Parse-Application-Id", "nope"),
                                                                                ("Tus-Resumable", "1.0.0"), ("Upload-Length", "10")])
        #expect(wrongApp.status == 403)
    }
}

/// Sends one byte every 50 ms on a connection from a background thread, until `finish` (which
/// waits for the thread). At most `bytes` bytes.
final class Trickle: @unchecked Sendable {
    // @unchecked Sendable: `stop` is only touched under `lock`; `client` is used by the thread
    // alone until `finish` returns.
    private let lock = NSLock()
    private var stop = false
    private var sent = 0
    private let done = DispatchSemaphore(value: 0)

    init(_ client: TestHTTPClient, bytes: Int) {
        nonisolated(unsafe) let client = client
        Thread { [self] in
            for _ in 0..<bytes {
                if lock.withLock({ stop }) { break }
                guard (try? client.send([UInt8(1)])) != nil else { break }
                lock.withLock { sent += 1 }
                Thread.sleep(forTimeInterval: 0.05)
            }
            done.signal()
        }.start()
    }

    /// Stops the thread. - Returns: how many bytes it sent, once it has stopped.
    func finish() -> Int {
        lock.withLock { stop = true }
        done.wait()
        return lock.withLock { sent }
    }
}

/// Waits until the server has written `bytes` of the upload's part file: its PATCH holds the upload.
func waitForPart(_ s: ParseTestServer, _ uploadPath: String, bytes: Int) async throws {
    let part = s.dataDir.appendingPathComponent("uploads/\(uploadPath.split(separator: "/").last!).part").path
    var size = 0
    for _ in 0..<500 {
        size = (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0
        if size >= bytes { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    // With the server's last log lines, as a receive timeout has (`TestHTTPClient`): which request stalled.
    let log = TestServerLogs.tail(port: s.port).map { "; the end of the server's log:\n\($0)" } ?? ""
    throw TestServerError(description: "the server never wrote \(bytes) bytes to \(part) (it holds \(size))\(log)")
}
