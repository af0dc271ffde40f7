import PhotoWallCore
@testable import PhotoWallHTTP
import PhotoWallTesting
import Testing
import Foundation

@Suite("Routing, heads and keep-alive")
struct RoutingTests {
    /// Generated ids come from a counter mixed with a per-process key (no CSPRNG read per request):
    /// they keep the 16-hex-digit shape and never repeat within the process.
    @Test func generatedRequestIDsAreDistinct() {
        let ids = (0..<200_000).map { _ in RequestID.generate() }
        #expect(ids.allSatisfy { isGeneratedRequestID($0) })
        #expect(Set(ids).count == ids.count)
    }

    /// A path splits at every `/` byte, whatever follows it: a combining mark after a `/` does not
    /// glue the two into one segment (it did when paths were split by `Character`), and empty
    /// segments are skipped.
    @Test func pathsSplitAtEverySlash() {
        var table = RouteTable<Int>()
        table.add("GET", "/classes/:className/:objectId", 1)
        let m = table.match(method: "GET", path: "//classes/caf\u{E9}%20x//\u{301}b/")
        #expect(m?.target == 1)
        #expect(m?.parameters == ["className": "caf\u{E9} x", "objectId": "\u{301}b"])
        #expect(table.match(method: "GET", path: "/classes/a/b/c") == nil)
    }

    @Test func pathParametersAndQueryDecoding() throws {
        let seen = Box<RequestHead?>(nil)
        var router = Router()
        router.add("GET", "/items/:id/*rest") { head in
            .buffered(maxBodyBytes: 0) { request in
                seen.update { $0 = request.head }
                return .json(["id": .string(request.head.pathParameters["id"] ?? "")])
            }
        }
        try withServer(router) { _, port, log in
            let client = try TestHTTPClient(port: port)
            let r = try client.request("GET", "/items/a%20b/x/y%2Fz?x=1&y=hello+world&z=%2B%26%3D&x=2&flag")
            #expect(r.status == 200)
            #expect(r.text == #"{"id":"a b"}"#)
            let head = try #require(seen.value)
            #expect(head.method == "GET")
            #expect(head.path == "/items/a%20b/x/y%2Fz")
            #expect(head.pathParameters == ["id": "a b", "rest": "x/y/z"])
            #expect(head.query.map { "\($0.name)=\($0.value)" } == ["x=1", "y=hello world", "z=+&=", "x=2", "flag="])
            #expect(head.queryValue("x") == "1")
            #expect(head.contentLength == nil)
            #expect(head.remoteAddress == "127.0.0.1")
            #expect(head.headers["host"] == "127.0.0.1:\(port)")
            let entries = log.wait(forCount: 1)
            #expect(entries.map(\.path) == ["/items/a%20b/x/y%2Fz"]) // the access log never carries the query
            #expect(entries.map(\.status) == [200])
            #expect(entries.map(\.termination) == [.completed])
        }
    }

    @Test func inlineHandlersRunOnTheEventThreadAndKeepAlive() throws {
        let threads = Box<[String]>([])
        var router = Router()
        router.add("POST", "/inline") { _ in
            .inline(maxBodyBytes: 16) { request in
                // The kernel's name of the calling thread.
                let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
                threads.update { $0.append(name) }
                return .json(["echo": .string(String(decoding: request.body, as: UTF8.self))])
            }
        }
        try withServer(router) { _, port, log in
            let client = try TestHTTPClient(port: port)
            let a = try client.request("POST", "/inline", body: Array("hello".utf8))
            let b = try client.request("POST", "/inline", body: Array("again".utf8))
            #expect(a.status == 200 && a.text == #"{"echo":"hello"}"#)
            #expect(b.text == #"{"echo":"again"}"#)
            #expect(b.header("Connection") == nil, "kept alive")
            let big = try client.request("POST", "/inline", body: Array(repeating: 65, count: 17))
            #expect(big.status == 413)
            #expect(threads.value.count == 2)
            #expect(threads.value.allSatisfy { !$0.hasPrefix("http-worker") }, "\(threads.value)")
            #expect(log.wait(forCount: 3).map(\.status) == [200, 200, 413])
        }
    }

    /// `.local` handlers run on the local pool's threads, one request per thread at a time: with one
    /// local thread, requests from several connections at once run one after another (first in, first
    /// out); `.buffered` ones stay on the worker pool.
    @Test func localHandlersRunOnTheLocalPoolOneAtATimePerThread() throws {
        let threads = Box<[String]>([])
        let running = Box(0), mostAtOnce = Box(["local": 0, "buffered": 0])
        @Sendable func tracked(_ kind: String, _ request: Request) -> Response {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            threads.update { $0.append(kind + ":" + name.trimmingCharacters(in: .newlines)) }
            let now = running.update { $0 += 1; return $0 }
            mostAtOnce.update { $0[kind] = max($0[kind] ?? 0, now) }
            usleep(50_000)  // long enough for the other connections' requests to arrive meanwhile
            running.update { $0 -= 1 }
            return .json(["echo": .string(String(decoding: request.body, as: UTF8.self))])
        }
        var router = Router()
        router.add("POST", "/local") { _ in .local(maxBodyBytes: 16) { tracked("local", $0) } }
        router.add("POST", "/buffered") { _ in .buffered(maxBodyBytes: 16) { tracked("buffered", $0) } }
        try withServer(router, configure: { $0.localWorkerThreads = 1; $0.localQueueWaitLimit = .seconds(60) }) { _, port, log in
            for path in ["/local", "/buffered"] {
                let answers = Box<[String]>([])
                let clients = (0..<4).map { i in
                    TestThread {
                        guard let client = try? TestHTTPClient(port: port),
                              let r = try? client.request("POST", path, body: Array("c\(i)".utf8)) else { return }
                        answers.update { $0.append("\(r.status) \(r.text)") }
                    }
                }
                for client in clients { #expect(client.join()) }
                #expect(answers.value.sorted() == (0..<4).map { #"200 {"echo":"c\#($0)"}"# })
            }
            let big = try TestHTTPClient(port: port).request("POST", "/local", body: Array(repeating: 65, count: 17))
            #expect(big.status == 413)
            #expect(mostAtOnce.value["local"] == 1, "\(mostAtOnce.value)")
            #expect(threads.value.filter { $0.hasPrefix("local:") }.allSatisfy { $0 == "local:http-local-0" }, "\(threads.value)")
            #expect(threads.value.filter { $0.hasPrefix("buffered:") }.allSatisfy { $0.hasPrefix("buffered:http-worker") },
                    "\(threads.value)")
            #expect(log.wait(forCount: 9).count == 9)
        }
    }

    /// A `.local` request queued behind a handler that runs long (here: one that waits for the test)
    /// moves to the worker pool once it has waited `localQueueWaitLimit`, so a slow request can't stall
    /// the ones behind it; the slow one still finishes on its own thread.
    @Test func localRequestsWaitingTooLongMoveToTheWorkerPool() throws {
        let release = DispatchSemaphore(value: 0), blocking = DispatchSemaphore(value: 0)
        @Sendable func threadName() -> String {
            ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .newlines)
        }
        var router = Router()
        router.add("GET", "/slow") { _ in
            .local(maxBodyBytes: 0) { _ in
                blocking.signal()
                let released = release.wait(timeout: .now() + 10) == .success
                return .json(["released": .bool(released), "thread": .string(threadName())])
            }
        }
        router.add("GET", "/quick") { _ in .local(maxBodyBytes: 0) { _ in .json(["thread": .string(threadName())]) } }
        try withServer(router, configure: { $0.localWorkerThreads = 1; $0.localQueueWaitLimit = .milliseconds(20) }) { _, port, _ in
            let slow = Box<String>("")
            let slowClient = TestThread {
                guard let client = try? TestHTTPClient(port: port), let r = try? client.request("GET", "/slow") else { return }
                slow.update { $0 = "\(r.status) \(r.text)" }
            }
            #expect(blocking.wait(timeout: .now() + 10) == .success)
            // The one local thread is busy: without the overflow this waits the 10 s and runs on http-local-0.
            let quick = try TestHTTPClient(port: port).request("GET", "/quick")
            release.signal()
            #expect(slowClient.join())
            #expect(quick.status == 200)
            #expect(quick.text.hasPrefix(#"{"thread":"http-worker-"#), "\(quick.text)")
            #expect(slow.value.hasPrefix("200 ") && slow.value.contains(#""released":true"#)
                    && slow.value.contains(#""thread":"http-local-0""#), "\(slow.value)")
        }
    }

    /// `activeWorkerThreads`: with one slot on four worker threads, handlers that keep their thread
    /// (CPU work, here a sleep outside any `blocking` region) run one at a time, first in, first out;
    /// handlers waiting inside `WorkerPool.blocking` (as the adapters wait on fsync, libpq and libcurl)
    /// give their slot back, so all four are in at once (each waits until it sees the other three).
    @Test func handlersBeyondTheActiveLimitWaitUnlessTheyBlock() throws {
        let running = Box(0), mostAtOnce = Box(0), everyoneIn = Box(false)
        var router = Router()
        router.add("POST", "/cpu") { _ in
            .buffered(maxBodyBytes: 0) { _ in
                let now = running.update { $0 += 1; return $0 }
                mostAtOnce.update { $0 = max($0, now) }
                usleep(50_000)
                running.update { $0 -= 1 }
                return .text("cpu", status: 200)
            }
        }
        router.add("POST", "/wait") { _ in
            .buffered(maxBodyBytes: 0) { _ in
                let allIn = WorkerPool.blocking { () -> Bool in
                    if running.update({ $0 += 1; return $0 }) == 4 { everyoneIn.update { $0 = true } }
                    for _ in 0..<10_000 { if everyoneIn.value { return true }; usleep(1_000) }
                    return false
                }
                return .text(allIn ? "all in" : "alone", status: 200)
            }
        }
        try withServer(router, configure: { $0.workerThreads = 4; $0.activeWorkerThreads = 1 }) { _, port, _ in
            for path in ["/cpu", "/wait"] {
                let answers = Box<[String]>([])
                let clients = (0..<4).map { _ in
                    TestThread {
                        guard let client = try? TestHTTPClient(port: port), let r = try? client.request("POST", path) else { return }
                        answers.update { $0.append("\(r.status) \(r.text)") }
                    }
                }
                for client in clients { #expect(client.join()) }
                #expect(answers.value == Array(repeating: path == "/cpu" ? "200 cpu" : "200 all in", count: 4), "\(path)")
            }
            #expect(mostAtOnce.value == 1)
        }
    }

    @Test func unknownPathUsesFallback() throws {
        try withServer(Router()) { _, port, _ in
            let r = try TestHTTPClient(port: port).request("GET", "/nope")
            #expect(r.status == 404)
            #expect(r.text == #"{"error":"not found"}"#)
            #expect(r.header("Content-Type") == "application/json; charset=utf-8")
        }
    }

    /// A server whose routes need its bound port: until `route(_:)`, every request gets `whileStarting`
    /// (body not read); then the routes answer, with the matched pattern in `routePattern`.
    @Test func routesSetAfterStartAnswerStartingUntilThen() throws {
        var configuration = HTTPServer.Configuration(logger: Logger(label: "http-test", level: .warning))
        configuration.eventThreads = 1
        configuration.workerThreads = 2
        let server = HTTPServer(configuration: configuration, whileStarting: .text("starting", status: 503))
        let port = try server.start()
        defer { server.shutdown(gracePeriodSeconds: 1) }
        let client = try TestHTTPClient(port: port)
        let before = try client.request("POST", "/items/7", body: Array("ignored".utf8))
        #expect(before.status == 503)
        #expect(before.text == "starting")
        var router = Router()
        router.add("GET", "/items/:id") { head in .immediate(.text("\(head.routePattern) \(head.pathParameters["id"]!)", status: 200)) }
        server.route(router)
        let after = try client.request("GET", "/items/7")
        #expect(after.status == 200)
        #expect(after.text == "/items/:id 7")
        #expect(try client.request("GET", "/other").status == 404)
    }

    /// The engine's own refusals (here 404 for no route and 413 for a declared length over the limit) are
    /// answered by the configuration's `errorRenderer`, as are errors handlers throw.
    @Test func refusalsAndThrownErrorsGoThroughTheErrorRenderer() throws {
        struct Teapot: Error {}
        var router = Router()
        router.add("POST", "/small") { _ in .buffered(maxBodyBytes: 2) { _ in .text("ok", status: 200) } }
        router.add("GET", "/throws") { _ in .buffered(maxBodyBytes: 0) { _ in throw Teapot() } }
        try withServer(router, configure: {
            $0.errorRenderer = { error, head in
                let name = (error as? HTTPError).map { "http \($0.status)" } ?? (error is Teapot ? "teapot" : "other")
                return .text("\(name) at \(head.path)", status: (error as? HTTPError)?.status ?? 418)
            }
        }) { _, port, _ in
            let missing = try TestHTTPClient(port: port).request("GET", "/nope")
            #expect(missing.status == 404)
            #expect(missing.text == "http 404 at /nope")
            let large = try TestHTTPClient(port: port).request("POST", "/small", body: Array("four".utf8))
            #expect(large.status == 413)
            #expect(large.text == "http 413 at /small")
            let thrown = try TestHTTPClient(port: port).request("GET", "/throws")
            #expect(thrown.status == 418)
            #expect(thrown.text == "teapot at /throws")
        }
    }

    @Test func headersArriveInOrder() throws {
        let seen = Box<[String]>([])
        var router = Router()
        router.add("GET", "/h") { _ in
            .buffered(maxBodyBytes: 0) { request in
                seen.update { $0 = request.head.headers.fields.filter { $0.name.hasPrefix("X-") }.map { "\($0.name)=\($0.value)" } }
                return Response(status: 204)
            }
        }
        try withServer(router) { _, port, _ in
            let r = try TestHTTPClient(port: port).request("GET", "/h", headers: [("X-B", "2"), ("X-A", "1"), ("X-B", "3")])
            #expect(r.status == 204)
            #expect(seen.value == ["X-B=2", "X-A=1", "X-B=3"])
        }
    }

    @Test func keepAliveReusesTheConnection() throws {
        var router = Router()
        router.add("GET", "/hello") { _ in .immediate(.text("hello", status: 200)) }
        router.add("POST", "/echo") { _ in .buffered(maxBodyBytes: 1024) { Response(status: 200, body: .bytes($0.body)) } }
        router.add("GET", "/worker") { _ in .buffered(maxBodyBytes: 0) { _ in .text("from worker", status: 200) } }
        try withServer(router) { _, port, log in
            let client = try TestHTTPClient(port: port)
            let first = try client.request("GET", "/hello")
            let second = try client.request("GET", "/hello")
            let third = try client.request("POST", "/echo", body: Array("ping".utf8))
            let fourth = try client.request("GET", "/worker")
            // A POST with a small body to a path that does not read it (the 404 fallback): the body is
            // dropped, not the connection.
            let fifth = try client.request("POST", "/nothing", body: Array("ignored".utf8))
            let sixth = try client.request("GET", "/hello")
            for r in [first, second, third, fourth, sixth] { #expect(r.status == 200) }
            #expect(fifth.status == 404)
            for r in [first, second, third, fourth, fifth, sixth] {
                #expect(r.header("Connection")?.lowercased() != "close")
            }
            #expect(first.text == "hello")
            #expect(second.text == "hello")
            #expect(third.text == "ping")
            #expect(fourth.text == "from worker")
            #expect(fifth.text == #"{"error":"not found"}"#)
            #expect(sixth.text == "hello")
            #expect(log.wait(forCount: 6).count == 6)
        }
    }

    @Test func requestIDIsEchoedOrGenerated() throws {
        let seen = Box<[String]>([])
        var router = Router()
        router.add("GET", "/id") { _ in
            .buffered(maxBodyBytes: 0) { request in
                seen.update { $0.append(request.head.requestID) }
                return Response(status: 204)
            }
        }
        try withServer(router) { _, port, log in
            let client = try TestHTTPClient(port: port)
            let echoed = try client.request("GET", "/id", headers: [("X-Request-Id", "abc-123.X_y")])
            #expect(echoed.header("X-Request-Id") == "abc-123.X_y")
            let bad = try client.request("GET", "/id", headers: [("X-Request-Id", "not/sane")])
            #expect(isGeneratedRequestID(bad.header("X-Request-Id")))
            let tooLong = try client.request("GET", "/id", headers: [("X-Request-Id", String(repeating: "a", count: 129))])
            #expect(isGeneratedRequestID(tooLong.header("X-Request-Id")))
            let longest = try client.request("GET", "/id", headers: [("X-Request-Id", String(repeating: "a", count: 128))])
            #expect(longest.header("X-Request-Id") == String(repeating: "a", count: 128))
            let none = try client.request("GET", "/id")
            #expect(isGeneratedRequestID(none.header("X-Request-Id")))
            #expect(none.header("X-Request-Id") != bad.header("X-Request-Id"))
            #expect(seen.value == [echoed, bad, tooLong, longest, none].map { $0.header("X-Request-Id")! })
            // Engine answers (404 fallback) carry the id too.
            let missing = try client.request("GET", "/missing", headers: [("X-Request-Id", "r-404")])
            #expect(missing.status == 404)
            #expect(missing.header("X-Request-Id") == "r-404")
            #expect(log.wait(forCount: 6).map(\.requestID).last == "r-404")
        }
    }

    @Test func headAnswersWithGetHeadersAndNoBody() throws {
        var router = Router()
        router.add("GET", "/doc") { _ in .buffered(maxBodyBytes: 0) { _ in .text("twelve bytes", status: 200) } }
        try withServer(router) { _, port, _ in
            let client = try TestHTTPClient(port: port)
            let head = try client.request("HEAD", "/doc")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "12")
            #expect(head.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(head.body.isEmpty)
            // No body bytes were sent after the HEAD response: the next response parses cleanly.
            let get = try client.request("GET", "/doc")
            #expect(get.status == 200)
            #expect(get.text == "twelve bytes")
        }
    }

    @Test func accessLogFormatting() {
        #expect(Engine.oneDecimal(0) == "0.0")
        #expect(Engine.oneDecimal(0.04) == "0.0")
        #expect(Engine.oneDecimal(0.05) == "0.1")
        #expect(Engine.oneDecimal(12.34) == "12.3")
        #expect(Engine.oneDecimal(199.96) == "200.0")
    }

    @Test func lifecycle() throws {
        let server = HTTPServer(configuration: .init(logger: Logger(label: "t", level: .warning)), router: Router())
        #expect(server.port == 0)
        let port = try server.start()
        #expect(port > 0)
        #expect(server.port == port)
        #expect(throws: HTTPServerError.self) { try server.start() }
        server.shutdown(gracePeriodSeconds: 1)
        server.shutdown(gracePeriodSeconds: 1) // second call is a no-op
        #expect(server.port == port)
        #expect(isConnectionRefused(port: port))

        let taken = HTTPServer(configuration: .init(port: port == 65535 ? 1 : 0, logger: Logger(label: "t", level: .error)),
                               router: Router())
        _ = try taken.start()
        let clash = HTTPServer(configuration: .init(port: taken.port, logger: Logger(label: "t", level: .error)), router: Router())
        do {
            _ = try clash.start()
            Issue.record("second bind to port \(taken.port) succeeded")
        } catch let error as HTTPServerError {
            #expect(error.code == .startFailed)
        }
        let badHost = HTTPServer(configuration: .init(host: "localhost", logger: Logger(label: "t", level: .error)), router: Router())
        #expect(throws: HTTPServerError.self) { try badHost.start() }
        taken.shutdown()
    }
}
