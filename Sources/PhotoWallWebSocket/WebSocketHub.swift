internal import CWslay
import Dispatch
import Foundation
import PhotoWallCore
import PhotoWallHTTP
import Synchronization

/// WebSocket connections on libmicrohttpd's upgraded sockets, framed by wslay (RFC 6455: fragmentation,
/// masking, ping/pong and close), on poll(2) loop threads of their own: one per core
/// (`WebSocketShard`), each holding the connections dealt to it in turn, so a message sent to every
/// connection (a LiveQuery event to 1,000 viewers) is framed and written by all cores at once, not by
/// one thread behind the others.
///
/// Liveness: every `pingInterval` each connection gets a ping; one that has not answered the previous
/// ping by then is dropped. Caps: messages over `maxMessageBytes` close the connection with 1009
/// (wslay), queued output over `maxQueuedBytes` with 1008, and more than `maxConnectionsPerAddress`
/// open connections from one address answer the handshake with 429.
public final class WebSocketHub: Sendable {
    public struct Limits: Sendable {
        /// Largest message a client may send, in bytes (wslay_event_config_set_max_recv_msg_length).
        public var maxMessageBytes = 64 * 1024
        /// Output queued for one connection and not yet written, in bytes, before it is closed as a slow consumer.
        public var maxQueuedBytes = 1 << 20
        /// Open WebSocket connections from one peer address (within the HTTP engine's own per-address
        /// limit, which upgraded connections still count against).
        public var maxConnectionsPerAddress = 32
        /// Seconds between pings; a connection that misses one pong is dropped.
        public var pingIntervalSeconds = 10
        public init() {}
    }

    public let limits: Limits
    let logger: Logger
    /// Open connections per address (counted from the handshake to the close).
    let perAddress = Mutex<[String: Int]>([:])
    let stopping = Atomic<Bool>(false)
    /// The loops, each with its own thread, connections and wake-up pipe.
    let shards: [WebSocketShard]
    let nextShard = Atomic<Int>(0)

    /// - Parameter loops: loop threads; default one per core.
    public init(limits: Limits = Limits(), loops: Int = ProcessInfo.processInfo.activeProcessorCount, logger: Logger) {
        self.limits = limits
        self.logger = logger
        shards = (0..<max(1, loops)).map { _ in WebSocketShard() }
        for (i, shard) in shards.enumerated() {
            let loop = WebSocketLoop(hub: self, shard: shard)
            let thread = Thread { loop.run() }
            thread.name = "websocket-\(i)"
            thread.start()
        }
    }

    /// Open connections (all addresses).
    public var connectionCount: Int { perAddress.withLock { $0.values.reduce(0, +) } }

    /// The route plan for a WebSocket opening request: `101` and a new connection whose session
    /// `accept` makes, or the handshake's refusal (`WebSocketHandshake.check`), or 429 over the per-address cap.
    public func plan(for head: RequestHead, accept: @escaping @Sendable (WebSocketConnection) -> any WebSocketSession) -> RoutePlan {
        let headers: [(String, String)]
        switch WebSocketHandshake.check(head) {
        case .failure(let refusal): return .immediate(refusal.response)
        case .success(let h): headers = h
        }
        let address = head.remoteAddress
        let admitted = perAddress.withLock { counts -> Bool in
            guard counts[address, default: 0] < limits.maxConnectionsPerAddress else { return false }
            counts[address, default: 0] += 1
            return true
        }
        guard admitted, !stopping.load(ordering: .relaxed) else {
            if admitted { release(address: address) }
            return .immediate(HTTPError(status: 429, message: "Too many WebSocket connections from this address.").response)
        }
        let shard = shards[nextShard.add(1, ordering: .relaxed).oldValue % shards.count]
        return .upgrade(UpgradeRoute(headers: headers) { [self] upgraded in
            let connection = WebSocketConnection(remoteAddress: address, maxQueuedBytes: limits.maxQueuedBytes, shard: shard)
            shard.pending.withLock { $0.append((upgraded, connection, accept)) }
            shard.wake()
        } onAbandoned: { [self] in
            release(address: address)
        })
    }

    func release(address: String) {
        perAddress.withLock { counts in
            let n = counts[address, default: 1] - 1
            counts[address] = n > 0 ? n : nil
        }
    }

    /// Closes every connection with 1001 (going away): waits up to 3 s for the peers' closes, then drops
    /// the rest, and returns once the loop thread is done (at most about 5 s). Call once, before the HTTP
    /// server stops (`HTTPServer.beforeStop`).
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let deadline = DispatchTime.now() + 5
        for shard in shards { shard.wake() }
        for shard in shards { _ = shard.finished.wait(timeout: deadline) }
    }
}

/// One loop thread's share of the hub: the connections dealt to it, and how the rest of the process
/// reaches that thread (new sockets, output to flush, the wake-up pipe).
final class WebSocketShard: Sendable {
    /// Upgraded sockets waiting to be adopted by the loop thread.
    let pending = Mutex<[(UpgradedConnection, WebSocketConnection, @Sendable (WebSocketConnection) -> any WebSocketSession)]>([])
    /// Connections with new output or a close request since the loop last looked (so a pass flushes only
    /// those, not every connection).
    let dirty = Mutex<[ObjectIdentifier: WebSocketConnection]>([:])
    /// A wake-up byte is in the pipe and the loop has not drained it yet: further wakes need no write.
    let wakePending = Atomic<Bool>(false)
    /// The loop's wake-up pipe: [read end, write end], non-blocking.
    let wakePipe: (Int32, Int32)
    /// Signalled by the loop thread when it has closed its connections and returned.
    let finished = DispatchSemaphore(value: 0)

    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe failed")
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        wakePipe = (fds[0], fds[1])
    }

    /// Marks `connection` for the loop's next pass and wakes it.
    func wake(for connection: WebSocketConnection) {
        dirty.withLock { $0[ObjectIdentifier(connection)] = connection }
        wake()
    }

    /// Wakes the loop thread (new output, a close, a new connection); one pipe write per loop pass at most.
    func wake() {
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt8 = 1
        _ = write(wakePipe.1, &one, 1) // a full pipe already means "awake"
    }
}
