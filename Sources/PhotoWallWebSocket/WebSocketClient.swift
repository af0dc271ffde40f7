internal import CWslay
import Foundation
import PhotoWallCore
import PhotoWallCrypto

/// A blocking WebSocket client over a plain TCP socket (`ws://` only; put a TLS proxy's `wss://` behind
/// `stunnel` or use the proxy's plain port), framed by wslay's client context: masking, fragmentation,
/// answering pings. For one thread at a time (not Sendable).
public final class WebSocketClient {
    /// Why a connection or a read failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    let socket: Int32
    var context: OpaquePointer?
    /// Complete text messages not yet returned by `receive`.
    var inbox: [String] = []
    var closedByPeer = false

    /// Connects to `url` (`ws://host[:port]/path`) and performs the opening handshake (RFC 6455 §4.1).
    /// - Throws: `Failure` for a bad URL, no connection within `timeoutSeconds`, or a refused handshake.
    public init(url: String, timeoutSeconds: Int = 10) throws {
        guard url.hasPrefix("ws://") else { throw Failure(description: "only ws:// URLs are supported (got \(url))") }
        let rest = url.dropFirst(5)
        let hostPort = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(hostPort.count).isEmpty ? "/" : String(rest.dropFirst(hostPort.count))
        var host = String(hostPort), port = "80"
        if let colon = hostPort.lastIndex(of: ":") { host = String(hostPort[..<colon]); port = String(hostPort[hostPort.index(after: colon)...]) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &list) == 0, let first = list else { throw Failure(description: "cannot resolve \(host)") }
        defer { freeaddrinfo(list) }
        var fd: Int32 = -1
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            fd = Glibc.socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if fd >= 0 {
                var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
                _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                if connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { break }
                Glibc.close(fd)
                fd = -1
            }
            ai = a.pointee.ai_next
        }
        guard fd >= 0 else { throw Failure(description: "cannot connect to \(host):\(port)") }
        socket = fd
        do {
            try handshake(host: String(hostPort), path: path, timeoutSeconds: timeoutSeconds)
        } catch {
            Glibc.close(fd)
            throw error
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var callbacks = wslay_event_callbacks(
            recv_callback: webSocketClientRecv, send_callback: webSocketClientSend, genmask_callback: webSocketClientMask,
            on_frame_recv_start_callback: nil, on_frame_recv_chunk_callback: nil, on_frame_recv_end_callback: nil,
            on_msg_recv_callback: webSocketClientMessage)
        var ctx: OpaquePointer?
        guard wslay_event_context_client_init(&ctx, &callbacks, Unmanaged.passUnretained(self).toOpaque()) == 0 else {
            Glibc.close(fd)
            throw Failure(description: "out of memory")
        }
        context = ctx
        if !early.isEmpty { _ = wslay_event_recv(ctx) }
    }

    deinit {
        if let context { wslay_event_context_free(context) }
        Glibc.close(socket)
    }

    /// Bytes that followed the `101` head (frames the server sent at once), handed to wslay first.
    var early: [UInt8] = []

    private func handshake(host: String, path: String, timeoutSeconds: Int) throws {
        let key = Base64.encode(Crypto.randomBytes(16))
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        var bytes = Array(request.utf8)
        guard Glibc.send(socket, &bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw Failure(description: "handshake not sent") }
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = [13, 10, 13, 10]
        var pfd = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        while true {
            if let r = head.firstRange(of: end) {
                early = Array(head[r.upperBound...])
                head = Array(head[..<r.lowerBound])
                break
            }
            guard poll(&pfd, 1, Int32(timeoutSeconds * 1000)) > 0 else { throw Failure(description: "no handshake answer") }
            let n = recv(socket, &buffer, buffer.count, 0)
            guard n > 0 else { throw Failure(description: "connection closed during the handshake") }
            head += buffer[0..<n]
            guard head.count < 16384 else { throw Failure(description: "handshake answer too long") }
        }
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n")
        guard let status = lines.first, status.split(separator: " ").dropFirst().first == "101" else {
            throw Failure(description: "the server refused the WebSocket (\(lines.first ?? ""))")
        }
        let accept = lines.first { $0.lowercased().hasPrefix("sec-websocket-accept:") }
            .map { $0.dropFirst("sec-websocket-accept:".count).trimmingWhitespace() }
        guard accept == WebSocketHandshake.accept(key: key) else { throw Failure(description: "wrong Sec-WebSocket-Accept") }
    }

    /// Sends one text message (blocks until written).
    public func send(text: String) throws {
        guard let context else { throw Failure(description: "closed") }
        var bytes = Array(text.utf8)
        let queued = bytes.withUnsafeMutableBufferPointer { b -> Int32 in
            var msg = wslay_event_msg(opcode: UInt8(WSLAY_TEXT_FRAME.rawValue), msg: b.baseAddress, msg_length: b.count)
            return wslay_event_queue_msg(context, &msg)
        }
        guard queued == 0 else { throw Failure(description: "cannot send (closing)") }
        while wslay_event_want_write(context) != 0 {
            guard wslay_event_send(context) == 0 else { throw Failure(description: "connection lost") }
            if wslay_event_want_write(context) != 0 {
                var pfd = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, 1000)
            }
        }
    }

    /// The next text message; nil when the connection ended (closed by the server or lost), or when
    /// nothing at all (not even a ping) arrived for `idleSeconds`.
    public func receive(idleSeconds: Int) -> String? {
        while inbox.isEmpty {
            guard let context else { return nil }
            if closedByPeer {
                // Answer the server's close (wslay queued the echo), then report the end.
                if wslay_event_want_write(context) != 0 { _ = wslay_event_send(context) }
                return nil
            }
            guard wslay_event_want_read(context) != 0 else { return nil }
            var events = Int16(POLLIN)
            if wslay_event_want_write(context) != 0 { events |= Int16(POLLOUT) }
            var pfd = pollfd(fd: socket, events: events, revents: 0)
            let n = poll(&pfd, 1, Int32(idleSeconds * 1000))
            if n == 0 { return nil }
            if n < 0 { if errno == EINTR { continue }; return nil }
            if pfd.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, wslay_event_recv(context) != 0 { return nil }
            if wslay_event_want_write(context) != 0, wslay_event_send(context) != 0 { return nil }
        }
        return inbox.removeFirst()
    }

    fileprivate func read(_ buf: UnsafeMutablePointer<UInt8>, _ len: Int) -> Int {
        if !early.isEmpty {
            let n = min(len, early.count)
            early.withUnsafeBufferPointer { buf.update(from: $0.baseAddress!, count: n) }
            early.removeFirst(n)
            return n
        }
        return recv(socket, buf, len, 0)
    }
}

// MARK: - wslay callbacks (user_data: the WebSocketClient, alive while its context is)

func webSocketClientRecv(_ ctx: OpaquePointer?, _ buf: UnsafeMutablePointer<UInt8>?, _ len: Int, _ flags: Int32,
                         _ userData: UnsafeMutableRawPointer?) -> Int {
    let client = Unmanaged<WebSocketClient>.fromOpaque(userData!).takeUnretainedValue()
    let n = client.read(buf!, len)
    if n > 0 { return n }
    let wouldBlock = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    wslay_event_set_error(ctx, Int32(wouldBlock ? WSLAY_ERR_WOULDBLOCK.rawValue : WSLAY_ERR_CALLBACK_FAILURE.rawValue))
    return -1
}

func webSocketClientSend(_ ctx: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int, _ flags: Int32,
                         _ userData: UnsafeMutableRawPointer?) -> Int {
    let client = Unmanaged<WebSocketClient>.fromOpaque(userData!).takeUnretainedValue()
    let n = send(client.socket, data, len, Int32(MSG_NOSIGNAL))
    if n >= 0 { return n }
    let wouldBlock = errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
    wslay_event_set_error(ctx, Int32(wouldBlock ? WSLAY_ERR_WOULDBLOCK.rawValue : WSLAY_ERR_CALLBACK_FAILURE.rawValue))
    return -1
}

/// RFC 6455 §5.3: a fresh unpredictable masking key per frame.
func webSocketClientMask(_ ctx: OpaquePointer?, _ buf: UnsafeMutablePointer<UInt8>?, _ len: Int, _ userData: UnsafeMutableRawPointer?) -> Int32 {
    let bytes = Crypto.randomBytes(len)
    bytes.withUnsafeBufferPointer { buf!.update(from: $0.baseAddress!, count: len) }
    return 0
}

func webSocketClientMessage(_ ctx: OpaquePointer?, _ arg: UnsafePointer<wslay_event_on_msg_recv_arg>?, _ userData: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    let client = Unmanaged<WebSocketClient>.fromOpaque(userData!).takeUnretainedValue()
    let m = arg.pointee
    switch m.opcode {
    case UInt8(WSLAY_TEXT_FRAME.rawValue):
        client.inbox.append(String(decoding: UnsafeBufferPointer(start: m.msg, count: m.msg_length), as: UTF8.self))
    case UInt8(WSLAY_CONNECTION_CLOSE.rawValue):
        client.closedByPeer = true
    default:
        break
    }
}
