internal import CWslay
import Foundation
import PhotoWallCore
import PhotoWallHTTP

/// One connection as the loop thread holds it: the wslay context and the socket's state.
/// Touched only on the loop thread (wslay contexts are not thread-safe).
final class WebSocketPeer {
    let upgraded: UpgradedConnection
    let connection: WebSocketConnection
    var session: (any WebSocketSession)?
    var context: OpaquePointer?
    /// Bytes libmicrohttpd read past the request head, handed to wslay first.
    var early: [UInt8]
    var earlyOffset = 0
    var lastPing = ContinuousClock.now
    var awaitingPong = false
    /// When a close frame was queued (the peer then has 5 s to answer it).
    var closingSince: ContinuousClock.Instant?
    /// When wslay was done and our side of the socket was shut down: input is read and dropped until
    /// the peer's end of stream (or 2 s), so unread input can't make the kernel reset the connection
    /// and lose the close frame (RFC 6455 §7.1.1; a message over the cap is the usual case).
    var lingeringSince: ContinuousClock.Instant?
    /// Framed bytes wslay handed to the send callback that the socket has not taken yet, from
    /// `unsentOffset` on. The callback only stages (up to `stagingBytes`); `WebSocketLoop.pump` writes
    /// them with one send(2), so a frame's header and payload, and every frame of one pass, leave in one
    /// segment instead of one syscall per wslay write (wslay sends a header, then its payload, separately).
    var unsent: [UInt8] = []
    var unsentOffset = 0
    var unsentCount: Int { unsent.count - unsentOffset }
    /// Most bytes staged in `unsent` at once; beyond it the callback says "would block" and wslay keeps
    /// the rest queued (so the slow-consumer cap still sees them).
    static let stagingBytes = 64 * 1024

    init(upgraded: UpgradedConnection, connection: WebSocketConnection) {
        self.upgraded = upgraded; self.connection = connection; self.early = upgraded.bytesAlreadyRead
    }
}

/// One of the hub's poll(2) loops, for the connections of its `shard`. `@unchecked Sendable` because it is
/// handed to its thread once at start and from then on used by that thread alone (the hub talks to it only
/// through the shard's `pending` and `dirty`, the connections' outboxes and the wake-up pipe, all thread-safe).
final class WebSocketLoop: @unchecked Sendable {
    let hub: WebSocketHub
    let shard: WebSocketShard
    var peers: [WebSocketPeer] = [] { didSet { if peers.count != oldValue.count { index() } } }
    /// `peers` by their connection (for the hub's dirty set).
    var byConnection: [ObjectIdentifier: WebSocketPeer] = [:]

    private func index() {
        byConnection = Dictionary(peers.map { (ObjectIdentifier($0.connection), $0) }, uniquingKeysWith: { a, _ in a })
    }

    init(hub: WebSocketHub, shard: WebSocketShard) { self.hub = hub; self.shard = shard }

    func run() {
        var stopSince: ContinuousClock.Instant?
        while true {
            if hub.stopping.load(ordering: .relaxed), stopSince == nil {
                stopSince = .now
                for p in peers { p.connection.close(code: 1001, reason: "server stopping") }
            }
            peers.removeAll { $0.context == nil }
            // Cleared before looking, so a send after this point writes a new wake-up byte.
            shard.wakePending.store(false, ordering: .sequentiallyConsistent)
            adoptPending()
            let dirty = shard.dirty.withLock { d in defer { d.removeAll(keepingCapacity: true) }; return d }
            for id in dirty.keys {
                if let p = byConnection[id], p.context != nil, p.lingeringSince == nil { flushOutbox(p) }
            }
            sweep()
            if let stopSince, peers.isEmpty || ContinuousClock.now - stopSince > .seconds(3) {
                for p in peers { drop(p) }
                peers.removeAll()
                shard.finished.signal()
                return
            }
            var fds = [pollfd(fd: shard.wakePipe.0, events: Int16(POLLIN), revents: 0)]
            for p in peers {
                var events: Int32 = 0
                if p.lingeringSince != nil {
                    events = POLLIN
                } else if let ctx = p.context {
                    if wslay_event_want_read(ctx) != 0 { events |= POLLIN }
                    if wslay_event_want_write(ctx) != 0 || p.unsentCount > 0 { events |= POLLOUT }
                }
                fds.append(pollfd(fd: p.upgraded.socket, events: Int16(events), revents: 0))
            }
            let n = poll(&fds, nfds_t(fds.count), 1000)
            if n < 0, errno != EINTR { hub.logger.error("websocket poll failed", ["errno": "\(errno)"]) }
            if fds[0].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 256)
                while read(shard.wakePipe.0, &buffer, buffer.count) > 0 {}
            }
            for (i, p) in peers.enumerated() where fds[i + 1].revents != 0 {
                if p.lingeringSince != nil { discardInput(p); continue }
                guard let ctx = p.context else { continue }
                let revents = Int32(fds[i + 1].revents)
                if revents & (POLLIN | POLLHUP | POLLERR) != 0, wslay_event_want_read(ctx) != 0 {
                    if wslay_event_recv(ctx) != 0 { drop(p); continue }
                }
                pump(p)
            }
            ping()
        }
    }

    /// Creates wslay contexts for newly upgraded sockets.
    private func adoptPending() {
        let fresh = shard.pending.withLock { list in defer { list.removeAll() }; return list }
        for (upgraded, connection, accept) in fresh {
            let peer = WebSocketPeer(upgraded: upgraded, connection: connection)
            _ = fcntl(upgraded.socket, F_SETFL, fcntl(upgraded.socket, F_GETFL) | O_NONBLOCK)
            // Events are small and must leave at once: no Nagle wait for the peer's (delayed) ACK of the
            // previous frame.
            var on: Int32 = 1
            _ = setsockopt(upgraded.socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            var callbacks = wslay_event_callbacks(
                recv_callback: webSocketRecv, send_callback: webSocketSend, genmask_callback: nil,
                on_frame_recv_start_callback: nil, on_frame_recv_chunk_callback: nil, on_frame_recv_end_callback: nil,
                on_msg_recv_callback: webSocketMessage)
            var ctx: OpaquePointer?
            guard wslay_event_context_server_init(&ctx, &callbacks, Unmanaged.passUnretained(peer).toOpaque()) == 0, let ctx else {
                upgraded.close()
                hub.release(address: connection.remoteAddress)
                continue
            }
            wslay_event_config_set_max_recv_msg_length(ctx, UInt64(hub.limits.maxMessageBytes))
            peer.context = ctx
            peer.session = accept(connection)
            peers.append(peer)
            // Bytes that came with the head: frame them now (poll would not report them).
            if !peer.early.isEmpty, wslay_event_recv(ctx) != 0 { drop(peer) }
        }
    }

    /// Moves queued messages (and a requested close) into wslay and writes what the socket takes.
    private func flushOutbox(_ p: WebSocketPeer) {
        guard let ctx = p.context else { return }
        let (messages, close) = p.connection.outbox.withLock { box in
            defer { box.messages.removeAll(); box.bytes = 0 }
            let close = p.closingSince == nil ? box.close : nil
            return (box.messages, close)
        }
        for m in messages {
            m.withUnsafeBufferPointer { b in
                var msg = wslay_event_msg(opcode: UInt8(WSLAY_TEXT_FRAME.rawValue), msg: b.baseAddress, msg_length: b.count)
                _ = wslay_event_queue_msg(ctx, &msg)
            }
        }
        if let close {
            var reason = Array(close.reason.utf8.prefix(123))
            _ = wslay_event_queue_close(ctx, close.code, &reason, reason.count)
            p.closingSince = .now
        }
        pump(p)
    }

    /// Has wslay frame what it holds (into `unsent`, through the send callback) and writes it to the
    /// socket with one send(2) per round, until wslay has nothing left or the socket is full (the loop
    /// then waits for POLLOUT). Drops the connection on a failed write. Updates the outbox's
    /// `framedBytes` (wslay's queue plus `unsent`) for the slow-consumer cap.
    func pump(_ p: WebSocketPeer) {
        guard let ctx = p.context else { return }
        while true {
            guard writeUnsent(p) else { drop(p); return }
            if p.unsentCount > 0 || wslay_event_want_write(ctx) == 0 { break }
            if wslay_event_send(ctx) != 0 { drop(p); return }
            if p.unsentCount == 0 { break } // nothing was framed: nothing more to do this round
        }
        let framed = wslay_event_get_queued_msg_length(ctx) + p.unsentCount
        p.connection.outbox.withLock { $0.framedBytes = framed }
    }

    /// Writes what `unsent` holds with one send(2). - Returns: false when the socket failed (not when it is full).
    private func writeUnsent(_ p: WebSocketPeer) -> Bool {
        guard p.unsentCount > 0 else { return true }
        let n = p.unsent.withUnsafeBufferPointer { b in
            send(p.upgraded.socket, b.baseAddress! + p.unsentOffset, b.count - p.unsentOffset, Int32(MSG_NOSIGNAL))
        }
        if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
        p.unsentOffset += n
        if p.unsentOffset == p.unsent.count { p.unsent = []; p.unsentOffset = 0 }
        return true
    }

    /// Starts the lingering close of connections whose both directions are done; drops those whose
    /// close went unanswered for 5 s or that lingered 2 s.
    private func sweep() {
        let now = ContinuousClock.now
        peers.removeAll { p in
            guard let ctx = p.context else { return true }
            if let since = p.lingeringSince {
                if now - since > .seconds(2) { drop(p); return true }
                return false
            }
            let done = wslay_event_want_read(ctx) == 0 && wslay_event_want_write(ctx) == 0 && p.unsentCount == 0
            let late = p.closingSince.map { now - $0 > .seconds(5) } ?? false
            if late { drop(p); return true }
            if done {
                _ = shutdown(p.upgraded.socket, Int32(SHUT_WR))
                p.lingeringSince = now
                discardInput(p)
                return p.context == nil
            }
            return false
        }
    }

    /// Reads and drops what a lingering connection's peer still sends; drops it at end of stream.
    private func discardInput(_ p: WebSocketPeer) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = recv(p.upgraded.socket, &buffer, buffer.count, 0)
            if n > 0 { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            drop(p) // end of stream or error
            return
        }
    }

    /// Pings every connection each interval; drops those that did not answer the previous ping.
    private func ping() {
        let now = ContinuousClock.now
        let interval = Duration.seconds(hub.limits.pingIntervalSeconds)
        for p in peers where now - p.lastPing >= interval {
            guard let ctx = p.context else { continue }
            if p.awaitingPong {
                hub.logger.info("websocket peer missed a pong, dropping", ["remote": p.connection.remoteAddress])
                drop(p)
                continue
            }
            var msg = wslay_event_msg(opcode: UInt8(WSLAY_PING.rawValue), msg: nil, msg_length: 0)
            _ = wslay_event_queue_msg(ctx, &msg)
            p.awaitingPong = true
            p.lastPing = now
            pump(p)
        }
    }

    /// Ends a connection: frees wslay, tells the session, lets libmicrohttpd close the socket. The
    /// peer leaves `peers` at the start of the next pass.
    func drop(_ p: WebSocketPeer) {
        guard let ctx = p.context else { return }
        p.context = nil
        wslay_event_context_free(ctx)
        p.unsent = []; p.unsentOffset = 0
        p.connection.outbox.withLock { $0.closed = true; $0.messages.removeAll() }
        p.upgraded.close()
        hub.release(address: p.connection.remoteAddress)
        let session = p.session
        p.session = nil
        session?.closed()
    }
}

// MARK: - wslay callbacks (global functions; `user_data` is the WebSocketPeer, retained by the loop's `peers`)

func webSocketRecv(_ ctx: OpaquePointer?, _ buf: UnsafeMutablePointer<UInt8>?, _ len: Int, _ flags: Int32,
                   _ userData: UnsafeMutableRawPointer?) -> Int {
    let peer = Unmanaged<WebSocketPeer>.fromOpaque(userData!).takeUnretainedValue()
    if peer.earlyOffset < peer.early.count {
        let n = min(len, peer.early.count - peer.earlyOffset)
        peer.early.withUnsafeBufferPointer { b in buf!.update(from: b.baseAddress! + peer.earlyOffset, count: n) }
        peer.earlyOffset += n
        if peer.earlyOffset == peer.early.count { peer.early = [] ; peer.earlyOffset = 0 }
        return n
    }
    let n = recv(peer.upgraded.socket, buf, len, 0)
    if n > 0 { return n }
    if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
        wslay_event_set_error(ctx, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
    } else {
        wslay_event_set_error(ctx, Int32(WSLAY_ERR_CALLBACK_FAILURE.rawValue)) // end of stream or error
    }
    return -1
}

/// Stages wslay's output in the peer's `unsent` (written by `WebSocketLoop.pump`); "would block" once
/// `WebSocketPeer.stagingBytes` are staged.
func webSocketSend(_ ctx: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int, _ flags: Int32,
                   _ userData: UnsafeMutableRawPointer?) -> Int {
    let peer = Unmanaged<WebSocketPeer>.fromOpaque(userData!).takeUnretainedValue()
    let room = WebSocketPeer.stagingBytes - peer.unsentCount
    guard room > 0, let data else {
        wslay_event_set_error(ctx, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
        return -1
    }
    let n = min(len, room)
    peer.unsent.append(contentsOf: UnsafeBufferPointer(start: data, count: n))
    return n
}

func webSocketMessage(_ ctx: OpaquePointer?, _ arg: UnsafePointer<wslay_event_on_msg_recv_arg>?, _ userData: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    let peer = Unmanaged<WebSocketPeer>.fromOpaque(userData!).takeUnretainedValue()
    let m = arg.pointee
    switch m.opcode {
    case UInt8(WSLAY_PONG.rawValue):
        peer.awaitingPong = false
    case UInt8(WSLAY_TEXT_FRAME.rawValue):
        let text = String(decoding: UnsafeBufferPointer(start: m.msg, count: m.msg_length), as: UTF8.self)
        peer.session?.received(text: text)
    case UInt8(WSLAY_BINARY_FRAME.rawValue):
        // The protocols served here are text-only (RFC 6455 §7.4.1: 1003).
        var reason = Array("text frames only".utf8)
        _ = wslay_event_queue_close(ctx, 1003, &reason, reason.count)
        peer.closingSince = .now
    default:
        break // ping (wslay answers it), close (wslay answers it)
    }
}
