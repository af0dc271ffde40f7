import PhotoWallCore
@testable import PhotoWallHTTP
import PhotoWallTesting
import Testing
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Tracks how many handlers run at the same time.
final class ConcurrencyProbe: Sendable {
    private let state = Box((current: 0, maximum: 0))

    /// Enters, waits until `target` handlers are inside at once (or `timeoutSeconds`), sleeps
    /// `holdMilliseconds`, leaves. The waits are a `WorkerPool.blocking` region, as a handler's wait
    /// on a disk or a network is (so the pool's active limit does not hold the others back).
    func run(target: Int, holdMilliseconds: Int, timeoutSeconds: Double = 5) {
        state.update { $0.current += 1; $0.maximum = max($0.maximum, $0.current) }
        WorkerPool.blocking {
            _ = eventually(timeoutSeconds: timeoutSeconds) { state.value.maximum >= target }
            usleep(UInt32(holdMilliseconds * 1000))
        }
        state.update { $0.current -= 1 }
    }

    var maximum: Int { state.value.maximum }
}

@Suite("Worker pool")
struct ConcurrencyTests {
    /// Handlers block on the worker pool, not the event thread: with one event thread, eight handlers
    /// waiting (inside `WorkerPool.blocking`) are all inside at once, more than the active limit.
    @Test func blockingHandlersRunInParallel() throws {
        let probe = ConcurrencyProbe()
        var router = Router()
        router.add("GET", "/sleep") { _ in
            .buffered(maxBodyBytes: 0) { _ in
                probe.run(target: 8, holdMilliseconds: 200)
                return .text("done", status: 200)
            }
        }
        try withServer(router, configure: { $0.eventThreads = 1; $0.workerThreads = 32 }) { _, port, log in
            let statuses = Box<[Int]>([])
            let threads = (0..<8).map { _ in
                TestThread {
                    let status = (try? TestHTTPClient(port: port).request("GET", "/sleep").status) ?? -1
                    statuses.update { $0.append(status) }
                }
            }
            for thread in threads { #expect(thread.join()) }
            #expect(statuses.value == Array(repeating: 200, count: 8))
            #expect(probe.maximum == 8)
            #expect(log.wait(forCount: 8).count == 8)
        }
    }

    /// The pool is bounded: never more handlers at once than `workerThreads`, even when they all wait
    /// inside `WorkerPool.blocking`.
    @Test func workerPoolIsBounded() throws {
        let probe = ConcurrencyProbe()
        var router = Router()
        router.add("GET", "/sleep") { _ in
            .buffered(maxBodyBytes: 0) { _ in
                probe.run(target: 2, holdMilliseconds: 100, timeoutSeconds: 2)
                return .text("done", status: 200)
            }
        }
        try withServer(router, configure: { $0.workerThreads = 2 }) { _, port, _ in
            let statuses = Box<[Int]>([])
            let threads = (0..<6).map { _ in
                TestThread {
                    let status = (try? TestHTTPClient(port: port).request("GET", "/sleep").status) ?? -1
                    statuses.update { $0.append(status) }
                }
            }
            for thread in threads { #expect(thread.join()) }
            #expect(statuses.value == Array(repeating: 200, count: 6))
            #expect(probe.maximum == 2)
        }
    }

    /// Many short requests from several connections at once, mixing inline and worker answers.
    @Test func manyConcurrentKeepAliveClients() throws {
        var router = Router()
        router.add("GET", "/inline") { _ in .immediate(.text("i", status: 200)) }
        router.add("POST", "/echo") { _ in .buffered(maxBodyBytes: 4096) { Response(status: 200, body: .bytes($0.body)) } }
        try withServer(router) { _, port, log in
            let failures = Box(0)
            let threads = (0..<16).map { n in
                TestThread {
                    do {
                        let client = try TestHTTPClient(port: port)
                        for i in 0..<50 {
                            let body = Array("\(n)-\(i)".utf8)
                            let echoed = try client.request("POST", "/echo", body: body)
                            let inline = try client.request("GET", "/inline")
                            if echoed.body != body || inline.text != "i" { failures.update { $0 += 1 } }
                        }
                    } catch {
                        failures.update { $0 += 1 }
                    }
                }
            }
            for thread in threads { #expect(thread.join(timeoutSeconds: 20)) }
            #expect(failures.value == 0)
            #expect(log.wait(forCount: 1600).count == 1600)
        }
    }

    /// At `connectionLimit` new clients wait in the listen backlog instead of being dropped.
    @Test func connectionLimitQueuesNewClients() throws {
        var router = Router()
        router.add("GET", "/x") { _ in .immediate(.text("x", status: 200)) }
        try withServer(router, configure: { $0.connectionLimit = 2 }) { _, port, _ in
            let first = try TestHTTPClient(port: port)
            let second = try TestHTTPClient(port: port)
            #expect(try first.request("GET", "/x").status == 200)
            #expect(try second.request("GET", "/x").status == 200)
            let third = try TestHTTPClient(port: port, timeoutSeconds: 0.3) // completes in the kernel backlog
            try third.sendHead("GET", "/x")
            #expect(throws: TestHTTPClientError.self) { try third.readResponse() } // not served yet
            first.close()
            #expect(eventually(timeoutSeconds: 3) {
                (try? third.readResponse())?.status == 200
            })
        }
    }

    /// Over `perIPConnectionLimit`, libmicrohttpd closes the extra connection at once.
    @Test func perIPLimitClosesExtraConnections() throws {
        var router = Router()
        router.add("GET", "/x") { _ in .immediate(.text("x", status: 200)) }
        try withServer(router, configure: { $0.perIPConnectionLimit = 2 }) { _, port, _ in
            let first = try TestHTTPClient(port: port)
            let second = try TestHTTPClient(port: port)
            #expect(try first.request("GET", "/x").status == 200)
            #expect(try second.request("GET", "/x").status == 200)
            let third = try TestHTTPClient(port: port)
            #expect(third.waitForPeerClose(timeoutSeconds: 2))
            #expect(try first.request("GET", "/x").status == 200)
        }
    }
}

@Suite("Streamed open off the event thread")
struct StreamedOpenTests {
    /// A streamed route's `open` (which may look up a session: a network round trip on PostgreSQL) runs
    /// on a worker, not on the event thread: with ONE event thread, while an upload's `open` is blocked,
    /// another request on another connection is answered, and only then is the upload let through.
    /// (On an engine that ran `open` on the event thread, `/ping` would wait behind it and its client
    /// time out, the semaphore is signalled by no one, and both fail.)
    @Test func aBlockedOpenDoesNotHoldUpOtherConnections() throws {
        let openEntered = DispatchSemaphore(value: 0)
        let releaseOpen = DispatchSemaphore(value: 0)
        let order = Box<[String]>([])
        var router = Router()
        router.add("PUT", "/upload") { _ in
            .streamed(maxBodyBytes: 1024, open: { _ in
                openEntered.signal()
                // Released by the test once /ping was answered; the 10 s cap only keeps a broken
                // engine from hanging the suite (the test then fails on the order below).
                _ = releaseOpen.wait(timeout: .now() + 10)
                order.update { $0.append("open returned") }
                return .sink(CountingSink())
            }, handler: { _, sink in
                .json(["bytes": .number(Double(sink.count))])
            })
        }
        router.add("GET", "/ping") { _ in .immediate(.text("pong", status: 200)) }
        try withServer(router, configure: { $0.eventThreads = 1 }) { _, port, _ in
            let upload = Box<TestHTTPResponse?>(nil)
            let uploader = TestThread {
                let response = try? TestHTTPClient(port: port).request("PUT", "/upload", body: Array("hello".utf8))
                upload.update { $0 = response }
            }
            #expect(openEntered.wait(timeout: .now() + 5) == .success)
            let ping = try TestHTTPClient(port: port, timeoutSeconds: 3).request("GET", "/ping")
            order.update { $0.append("ping answered") }
            releaseOpen.signal()
            #expect(uploader.join())
            #expect(ping.status == 200)
            #expect(ping.text == "pong")
            #expect(order.value == ["ping answered", "open returned"])
            #expect(upload.value?.status == 200)
            #expect(upload.value?.text == #"{"bytes":5}"#)
        }
    }

    /// What `open` throws is rendered by the configuration's `errorRenderer`, and the body is not read.
    @Test func aThrowingOpenIsRenderedByTheErrorRenderer() throws {
        struct Refused: Error {}
        var router = Router()
        router.add("PUT", "/upload") { _ in
            .streamed(maxBodyBytes: 1024, open: { _ -> StreamOpenResult<CountingSink> in throw Refused() },
                      handler: { _, _ in .text("never", status: 200) })
        }
        try withServer(router, configure: {
            $0.errorRenderer = { error, head in .text(error is Refused ? "refused \(head.path)" : "other", status: 403) }
        }) { _, port, _ in
            let response = try TestHTTPClient(port: port).request("PUT", "/upload", body: Array("hello".utf8))
            #expect(response.status == 403)
            #expect(response.text == "refused /upload")
        }
    }
}

@Suite("Sink abort off the event thread")
struct SinkAbortTests {
    /// A client that disconnects mid-body gets its sink aborted, and an abort may block (a tus sink
    /// syncs and commits what arrived, after waiting for the PATCH before it). It runs on a worker: with
    /// ONE event thread, while an abort is blocked, another connection's request is answered. (On an
    /// engine that aborted on the event thread, `/ping` would wait behind it and time out.)
    @Test func aBlockedAbortDoesNotHoldUpOtherConnections() throws {
        let abortEntered = DispatchSemaphore(value: 0)
        let releaseAbort = DispatchSemaphore(value: 0)
        let sink = BlockingAbortSink(entered: abortEntered, release: releaseAbort)
        let order = Box<[String]>([])
        var router = Router()
        router.add("PUT", "/upload") { _ in
            .streamed(maxBodyBytes: 1 << 20, open: { _ in .sink(sink) }, handler: { _, _ in .text("whole", status: 200) })
        }
        router.add("GET", "/ping") { _ in .immediate(.text("pong", status: 200)) }
        try withServer(router, configure: { $0.eventThreads = 1 }) { _, port, _ in
            let client = try TestHTTPClient(port: port)
            try client.sendHead("PUT", "/upload", headers: [("Content-Length", "100000")])
            try client.send(Array(repeating: UInt8(7), count: 1000))
            #expect(eventually { sink.written.value == 1000 })
            client.close()  // mid-body: the engine aborts the sink
            #expect(abortEntered.wait(timeout: .now() + 5) == .success)
            let ping = try TestHTTPClient(port: port, timeoutSeconds: 3).request("GET", "/ping")
            order.update { $0.append("ping answered") }
            releaseAbort.signal()
            #expect(ping.status == 200)
            #expect(ping.text == "pong")
            #expect(eventually { sink.aborted.value })
            #expect(order.value == ["ping answered"])
        }
    }
}

/// A sink whose `abort` signals `entered` and then blocks until `release` (10 s at most, so a broken
/// engine fails the test instead of hanging it).
final class BlockingAbortSink: RequestBodySink {
    let written = Box(0)
    let aborted = Box(false)
    private let entered: DispatchSemaphore
    private let release: DispatchSemaphore
    init(entered: DispatchSemaphore, release: DispatchSemaphore) { self.entered = entered; self.release = release }
    func write(_ piece: UnsafeRawBufferPointer) throws {
        let n = piece.count
        written.update { $0 += n }
    }
    func abort() {
        entered.signal()
        _ = release.wait(timeout: .now() + 10)
        aborted.update { $0 = true }
    }
}

/// Counts the body bytes it receives.
final class CountingSink: RequestBodySink {
    private let bytes = Box(0)
    var count: Int { bytes.value }
    func write(_ piece: UnsafeRawBufferPointer) throws {
        let n = piece.count
        bytes.update { $0 += n }
    }
    func abort() {}
}
