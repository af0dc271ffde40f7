import PhotoWallCore
@testable import PhotoWallHTTP
import PhotoWallTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One address can't lock everyone out (issue 11 finding 5): the per-address cap refuses a flood's
/// extra connections, the request-head deadline closes heads trickled a byte at a time (the idle
/// timeout alone restarts on every byte), and a client at another address is answered meanwhile.
/// Outcomes are asserted (answered, closed); the latency figures are in `make bench`.
@Suite struct ConnectionLimitTests {
    static let headBytes = Array("GET /x HTTP/1.1\r\nHost: flood\r\nX-Padding: \(String(repeating: "p", count: 200))\r\n\r\n".utf8)

    @Test func aSlowHeaderFloodFromOneAddressLeavesOthersServed() throws {
        var router = Router()
        router.add("GET", "/x") { _ in .immediate(.text("x", status: 200)) }
        try withServer(router, configure: {
            $0.perIPConnectionLimit = 8
            $0.requestHeadTimeoutSeconds = 2
            $0.idleTimeoutSeconds = 30
        }) { server, port, _ in
            // The flood: as many connections as the cap allows from 127.0.0.1, each sending its head a
            // byte at a time (the whole head would take a minute).
            let flood = try (0..<8).map { _ in try TestHTTPClient(port: port, sourceAddress: "127.0.0.1") }
            for client in flood { try client.send(Self.headBytes.prefix(1)) }
            // Beyond the cap, a further connection from that address is closed at once, unanswered.
            let extra = try (0..<4).map { _ in try TestHTTPClient(port: port, sourceAddress: "127.0.0.1") }
            for client in extra {
                #expect(client.waitForPeerClose(timeoutSeconds: 5))
                #expect(client.unreadByteCount == 0)
            }
            // A client at another address gets its answers meanwhile, on new connections and kept-alive.
            let other = try TestHTTPClient(port: port, sourceAddress: "127.0.0.2")
            for _ in 0..<3 {
                let r = try other.request("GET", "/x")
                #expect(r.status == 200 && r.text == "x")
                #expect(try TestHTTPClient(port: port, sourceAddress: "127.0.0.2").request("GET", "/x").status == 200)
            }
            other.close()
            // Keep trickling: every flood connection is closed although bytes keep coming.
            var sent = 1
            var open = flood
            while !open.isEmpty && sent < Self.headBytes.count {
                usleep(100_000)
                open = open.filter { client in
                    if client.peerHasClosed() { return false }
                    return (try? client.send(Self.headBytes[sent..<(sent + 1)])) != nil
                }
                sent += 1
            }
            #expect(open.isEmpty)
            #expect(sent < Self.headBytes.count)  // closed before its head was whole
            #expect(flood.allSatisfy { $0.unreadByteCount == 0 })  // no response to an unfinished head
            #expect(server.requestHeadTimeouts == 8)
            // The address's slots are free again.
            #expect(try TestHTTPClient(port: port, sourceAddress: "127.0.0.1").request("GET", "/x").status == 200)
        }
    }

    /// A whole head sent in time is served, and a body is not covered by the deadline. On a kept-alive
    /// connection the next head's deadline starts once the idle timeout has passed: an idle connection
    /// is the idle timeout's to close, one trickling its next head is closed at the deadline.
    @Test func headsInTimeAreServedAndBodiesAreNotCut() throws {
        var router = Router()
        router.add("POST", "/echo") { _ in .buffered(maxBodyBytes: 4096) { Response(status: 200, body: .bytes($0.body)) } }
        try withServer(router, configure: { $0.requestHeadTimeoutSeconds = 1; $0.idleTimeoutSeconds = 2 }) { server, port, _ in
            func exchange(_ client: TestHTTPClient, _ i: Int) throws {
                // The body trickles for longer than the head deadline.
                try client.sendHead("POST", "/echo", headers: [("Content-Length", "6")])
                for byte in Array("body-\(i)".utf8) {
                    usleep(300_000)
                    try client.send([byte])
                }
                let r = try client.readResponse(method: "POST")
                #expect(r.status == 200 && r.text == "body-\(i)")
            }
            let idle = try TestHTTPClient(port: port)
            for i in 0..<3 { try exchange(idle, i) }
            #expect(idle.waitForPeerClose(timeoutSeconds: 10))  // by the idle timeout
            #expect(server.requestHeadTimeouts == 0)

            let trickler = try TestHTTPClient(port: port)
            try exchange(trickler, 0)
            var sent = 0
            while !trickler.peerHasClosed() && sent < Self.headBytes.count {
                try? trickler.send(Self.headBytes[sent..<(sent + 1)])  // each byte restarts the idle timer
                sent += 1
                usleep(250_000)
            }
            #expect(trickler.peerHasClosed() && sent < Self.headBytes.count)
            #expect(trickler.unreadByteCount == 0)
            #expect(server.requestHeadTimeouts == 1)
        }
    }
}

/// RFC 9112 §6.3: a request whose body length is ambiguous gets 400 and its connection is closed,
/// before routing (request smuggling behind a proxy; issue 11 finding 9).
@Suite struct FramingTests {
    func answer(_ raw: String) throws -> (TestHTTPResponse, closed: Bool, routed: Bool) {
        var router = Router()
        let routed = Box(false)
        router.add("POST", "/echo") { _ in
            routed.update { $0 = true }
            return .buffered(maxBodyBytes: 4096) { Response(status: 200, body: .bytes($0.body)) }
        }
        return try withServer(router) { _, port, _ in
            let client = try TestHTTPClient(port: port)
            try client.send(Array(raw.utf8))
            let r = try client.readResponse(method: "POST")
            return (r, client.waitForPeerClose(timeoutSeconds: 5), routed.value)
        }
    }

    /// Refused by the engine, before routing, with its reason.
    @Test(arguments: [
        ("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", "conflicting Content-Length values"),
        ("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
         "Transfer-Encoding together with Content-Length"),
        ("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
         "Transfer-Encoding together with Content-Length"),
        ("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\nhello", "Transfer-Encoding must end with chunked"),
    ])
    func ambiguousFramingIs400AndCloses(raw: String, reason: String) throws {
        let (r, closed, routed) = try answer(raw)
        #expect(r.status == 400)
        #expect(r.text == #"{"error":"\#(reason)"}"#)
        #expect(r.header("Connection")?.lowercased() == "close")
        #expect(closed)
        #expect(!routed)
    }

    /// A list of differing lengths in one field, or a length that is not a number: libmicrohttpd 0.9.75
    /// itself answers 400 and closes before the engine sees the request (its page, "Request malformed").
    @Test(arguments: ["POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\nhello!",
                      "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello"])
    func malformedLengthsAreRefusedByTheLibrary(raw: String) throws {
        let (r, closed, routed) = try answer(raw)
        #expect(r.status == 400)
        #expect(closed)
        #expect(!routed)
    }

    @Test func repeatedEqualContentLengthIsOneLength() throws {
        let (r, _, routed) = try answer("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello")
        #expect(r.status == 200 && r.text == "hello")
        #expect(routed)
        let (chunked, _, _) = try answer("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(chunked.status == 200 && chunked.text == "hello")
    }
}
