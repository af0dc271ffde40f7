import PhotoWallCore
import Synchronization

/// What a WebSocket connection's owner gets told, on the hub's loop thread. Both must return quickly
/// (hand work that may block, such as a database read, to a queue of your own).
public protocol WebSocketSession: AnyObject, Sendable {
    /// One complete text message (fragments joined, UTF-8 checked by wslay).
    func received(text: String)
    /// The connection is gone (closed by either side, a failed read or write, a missed pong, a slow
    /// consumer or the hub stopping). Called once; `send` is a no-op afterwards.
    func closed()
}

/// One upgraded WebSocket connection as its owner sees it: a bounded send queue, safe from any thread.
///
/// Messages are queued here and framed by wslay on its loop thread, so `send` never blocks. When
/// the bytes not yet written to the socket would exceed `WebSocketHub.Limits.maxQueuedBytes`, the peer is
/// a slow consumer: the message is dropped and the connection closed with 1008 (policy violation).
public final class WebSocketConnection: Sendable {
    /// Peer address as text (`127.0.0.1`).
    public let remoteAddress: String
    let maxQueuedBytes: Int
    /// The loop this connection was dealt to.
    let shard: WebSocketShard

    struct Outbox {
        var messages: [[UInt8]] = []
        /// Bytes in `messages`.
        var bytes = 0
        /// Bytes wslay still holds (set by the loop after each write).
        var framedBytes = 0
        /// A close the owner (or the queue cap) asked for: code and reason.
        var close: (code: UInt16, reason: String)?
        var closed = false
    }
    let outbox = Mutex(Outbox())

    init(remoteAddress: String, maxQueuedBytes: Int, shard: WebSocketShard) {
        self.remoteAddress = remoteAddress; self.maxQueuedBytes = maxQueuedBytes; self.shard = shard
    }

    /// Queues one text message. Returns at once; a slow consumer is closed with 1008 instead.
    public func send(text: String) {
        send(utf8: Array(text.utf8))
    }

    /// Queues one text message already encoded as UTF-8 (the caller vouches for the encoding), as `send(text:)`.
    public func send(utf8 bytes: [UInt8]) {
        let queued = outbox.withLock { box -> Bool in
            guard !box.closed, box.close == nil else { return false }
            if box.bytes + box.framedBytes + bytes.count > maxQueuedBytes {
                box.messages.removeAll()
                box.bytes = 0
                box.close = (1008, "send queue full")
                return true
            }
            box.messages.append(bytes)
            box.bytes += bytes.count
            return true
        }
        if queued { shard.wake(for: self) }
    }

    /// Sends a close frame with `code` and `reason` after what is queued, then ends the connection
    /// (after the peer's close, or 5 s). Idempotent; any thread.
    public func close(code: UInt16 = 1000, reason: String = "") {
        let changed = outbox.withLock { box -> Bool in
            guard !box.closed, box.close == nil else { return false }
            box.close = (code, reason)
            return true
        }
        if changed { shard.wake(for: self) }
    }
}
