#if canImport(Glibc)
import Glibc
#endif

/// A failure of `TestHTTPClient` (connect, send, receive, parse or timeout), with the errno if any.
public struct TestHTTPClientError: Error, CustomStringConvertible {
    public var message: String
    public var systemError: Int32?
    public init(_ message: String, systemError: Int32? = nil) { self.message = message; self.systemError = systemError }
    public var description: String { systemError.map { "\(message) (errno \($0))" } ?? message }
}

/// A parsed HTTP/1.1 response.
public struct TestHTTPResponse: Sendable {
    public var status: Int
    public var reason: String
    /// Fields in arrival order, names as sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Statuses of interim (1xx) responses received before this one, e.g. `[100]`.
    public var interimStatuses: [Int]

    /// First value of a header, case-insensitive.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A small blocking HTTP/1.1 client over one POSIX TCP connection, for tests.
///
/// The connection is kept open between requests (keep-alive), so two `request` calls reuse it; the
/// lower-level `sendHead`/`send`/`readResponse` allow half-sent bodies and raw protocol checks. Every
/// receive waits at most `timeoutSeconds`. Not thread-safe: one client per thread.
///
/// ```swift
/// let client = try TestHTTPClient(port: port)
/// let r = try client.request("POST", "/echo", headers: [("Content-Type", "text/plain")], body: Array("hi".utf8))
/// #expect(r.status == 200 && r.text == "hi")
/// ```
public final class TestHTTPClient {
    public let host: String
    public let port: Int
    private var fd: Int32
    private var received: [UInt8] = []
    private var peerClosed = false
    /// The request line last sent, and when: a receive that times out names them.
    private var lastRequest: (line: String, sent: ContinuousClock.Instant)?

    /// Connects to `host:port` (IPv4), from `sourceAddress` when given (e.g. "127.0.0.2": any 127/8
    /// address is local on Linux, so one test can play clients at several addresses).
    /// - Throws: `TestHTTPClientError` when the connection fails (e.g. `ECONNREFUSED`).
    public init(host: String = "127.0.0.1", port: Int, timeoutSeconds: Double = 10, sourceAddress: String? = nil) throws {
        self.host = host
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPClientError("socket failed", systemError: errno) }
        var tv = timeval(tv_sec: Int(timeoutSeconds), tv_usec: Int((timeoutSeconds - Double(Int(timeoutSeconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        /// `bind` or `connect` to `host:port`; on failure closes the socket and throws `what` failed.
        func attach(_ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32, _ host: String, _ port: Int, _ what: String) throws {
            var address = try makeAddress(host: host, port: port)
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if rc != 0 {
                let code = errno
                Glibc.close(fd)
                fd = -1
                throw TestHTTPClientError("\(what) failed", systemError: code)
            }
        }
        if let sourceAddress { try attach({ bind($0, $1, $2) }, sourceAddress, 0, "bind to \(sourceAddress)") }
        try attach({ connect($0, $1, $2) }, host, port, "connect to \(host):\(port)")
    }

    deinit { close() }

    /// Closes the connection (idempotent).
    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    /// Sends a request and reads its response.
    ///
    /// `Host` is added unless given; with a body, `Content-Length` is added (or, when `chunked`,
    /// `Transfer-Encoding: chunked` and pieces of `chunkSize` bytes).
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [],
                        body: [UInt8]? = nil, chunked: Bool = false, chunkSize: Int = 64 * 1024) throws -> TestHTTPResponse {
        var fields = headers
        if let body {
            if chunked { fields.append(("Transfer-Encoding", "chunked")) } else { fields.append(("Content-Length", "\(body.count)")) }
        }
        try sendHead(method, target, headers: fields)
        if let body {
            if chunked { try sendChunked(body, chunkSize: chunkSize) } else { try send(body) }
        }
        return try readResponse(method: method)
    }

    /// Sends the request line and header fields (adding `Host` unless present), nothing else.
    public func sendHead(_ method: String, _ target: String, headers: [(String, String)] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        lastRequest = ("\(method) \(target)", .now)
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: \(host):\(port)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8))
    }

    /// Sends `body` as chunked transfer coding, including the final zero-size chunk.
    public func sendChunked(_ body: [UInt8], chunkSize: Int = 64 * 1024) throws {
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunkSize, body.count)
            try send(Array(String(end - offset, radix: 16).utf8) + [13, 10])
            try send(body[offset..<end])
            try send([13, 10])
            offset = end
        }
        try send(Array("0\r\n\r\n".utf8))
    }

    /// Writes all of `bytes`. - Throws: on a send error (e.g. `EPIPE`, `ECONNRESET` when the server closed).
    public func send<C: Collection>(_ bytes: C) throws where C.Element == UInt8 {
        guard fd >= 0 else { throw TestHTTPClientError("connection closed") }
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let n = array.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, array.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw TestHTTPClientError("send failed", systemError: errno)
            }
            offset += n
        }
    }

    /// Reads one response, skipping (and recording) interim 1xx responses.
    /// - Parameters:
    ///   - method: the request's method; after `HEAD` no body is read.
    ///   - returnInterim: return a 1xx response (e.g. `100 Continue`) instead of skipping it.
    public func readResponse(method: String = "GET", returnInterim: Bool = false) throws -> TestHTTPResponse {
        var interim: [Int] = []
        while true {
            let headEnd = try readUntil([13, 10, 13, 10])
            let headText = String(decoding: received[..<headEnd], as: UTF8.self)
            received.removeFirst(headEnd + 4)
            var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
            let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2).map(String.init)
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
                throw TestHTTPClientError("bad status line: \(headText.prefix(80))")
            }
            let headers: [(name: String, value: String)] = lines.compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces)
            }
            if (100..<200).contains(status) {
                if returnInterim {
                    return TestHTTPResponse(status: status, reason: statusLine.count > 2 ? statusLine[2] : "",
                                            headers: headers, body: [], interimStatuses: interim)
                }
                interim.append(status)
                continue
            }
            var response = TestHTTPResponse(status: status, reason: statusLine.count > 2 ? statusLine[2] : "",
                                            headers: headers, body: [], interimStatuses: interim)
            if method == "HEAD" || status == 204 || status == 304 { return response }
            if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                response.body = try readChunkedBody()
            } else if let length = response.header("Content-Length").flatMap({ Int($0) }) {
                try fill(to: length)
                response.body = Array(received[..<length])
                received.removeFirst(length)
            } else {
                while try receiveMore() {}
                response.body = received
                received = []
            }
            return response
        }
    }

    /// Waits until the server closes or resets the connection.
    /// - Returns: true if it did within `timeoutSeconds` (bytes arriving meanwhile are discarded).
    public func waitForPeerClose(timeoutSeconds: Double = 5) -> Bool {
        guard fd >= 0 else { return true }
        let deadline = monotonicSeconds() + timeoutSeconds
        var buffer = [UInt8](repeating: 0, count: 65536)
        while monotonicSeconds() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, 50)
            if ready <= 0 { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { return true }
        }
        return false
    }

    /// Whether the server has closed or reset the connection, without waiting; any bytes it sent
    /// meanwhile are kept for `readResponse`.
    public func peerHasClosed() -> Bool {
        guard fd >= 0, !peerClosed else { return true }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 0) > 0 else { return false }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { received += buffer[..<n]; continue }
            if n == 0 || (errno != EAGAIN && errno != EINTR) { peerClosed = true; return true }
            return false
        }
    }

    /// Bytes received but not yet read as a response.
    public var unreadByteCount: Int { received.count }

    // MARK: - Receiving

    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil([13, 10])
            let sizeText = String(decoding: received[..<lineEnd], as: UTF8.self).split(separator: ";")[0]
            received.removeFirst(lineEnd + 2)
            guard let size = Int(sizeText.trimmingSpaces, radix: 16) else { throw TestHTTPClientError("bad chunk size") }
            if size == 0 {
                _ = try readUntil([13, 10]) // trailers are not supported: expect the empty line
                received.removeFirst(2)
                return body
            }
            try fill(to: size + 2)
            body += received[..<size]
            received.removeFirst(size + 2)
        }
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if received.count >= marker.count {
                let last = received.count - marker.count
                if searchFrom <= last {
                    for i in searchFrom...last where received[i] == marker[0] && Array(received[i..<i + marker.count]) == marker {
                        return i
                    }
                    searchFrom = last + 1
                }
            }
            guard try receiveMore() else { throw TestHTTPClientError("connection closed before \(marker == [13, 10] ? "line end" : "end of head")") }
        }
    }

    private func fill(to count: Int) throws {
        while received.count < count {
            guard try receiveMore() else { throw TestHTTPClientError("connection closed after \(received.count) of \(count) bytes") }
        }
    }

    /// - Returns: false at end of stream.
    private func receiveMore() throws -> Bool {
        guard fd >= 0, !peerClosed else { return false }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { received += buffer[..<n]; return true }
            if n == 0 { peerClosed = true; return false }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                let waited = lastRequest.map { " waiting for the answer to \($0.line), sent \(ContinuousClock.now - $0.sent) ago" } ?? ""
                let log = TestServerLogs.tail(port: port).map { "; the end of the server's log:\n\($0)" } ?? ""
                throw TestHTTPClientError("receive timed out" + waited + log)
            }
            if errno == ECONNRESET { peerClosed = true; return false }
            throw TestHTTPClientError("recv failed", systemError: errno)
        }
    }
}

/// True when a TCP connect to `host:port` is refused right now (nothing listening).
public func isConnectionRefused(host: String = "127.0.0.1", port: Int) -> Bool {
    do {
        _ = try TestHTTPClient(host: host, port: port, timeoutSeconds: 2)
        return false
    } catch let error as TestHTTPClientError {
        return error.systemError == ECONNREFUSED
    } catch {
        return false
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, read back, closed). Prefer binding
/// the server itself to port 0; use this only for programs that need a port number up front.
public func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(fd >= 0, "socket failed")
    defer { Glibc.close(fd) }
    var address = try! makeAddress(host: "127.0.0.1", port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa -> Bool in
            bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
        }
    }
    precondition(bound, "bind to 127.0.0.1:0 failed")
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Seconds on the monotonic clock.
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

private func makeAddress(host: String, port: Int) throws -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw TestHTTPClientError("not an IPv4 address: \(host)") }
    return address
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
