import Dispatch
import Foundation
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallHTTP
import PhotoWallServices
import PhotoWallStorage
import PhotoWallWebSocket
import Synchronization

/// Parse LiveQuery (parse-server's `src/LiveQuery`: `RequestSchema.js`, `Client.js`,
/// `ParseLiveQueryServer.js`) at `ws(s)://host/<mount>` on the API's own port.
///
/// Every event is decided per viewer at event time by `ObjectService`'s read rules
/// (`ObjectService.isVisible`: ACL, friends-only walls, private users; `liveObject`: protected
/// fields, restricted views, signed file URLs and `include`d authors, as GET renders them), so a
/// subscription to `WallImage` with `where: {}` is the viewer's live friend feed. Sessions are checked
/// again before each event: a session that ended (logout, `DELETE /sessions`, user deletion, expiry)
/// gets error 209 and loses its subscriptions instead of an event.
public final class LiveQueryServer: Sendable {
    public struct Options: Sendable {
        /// Subscriptions one connection may hold.
        public var maxSubscriptionsPerClient = 100
        /// Pointer fields each class's events resolve, as `include` does (the wall: its authors).
        public var include: [String: [String]] = [:]
        /// Every this many seconds each client's sessions are checked again, so one that expired gets
        /// its 209 without waiting for an event (`photowall serve`: the ping interval).
        public var sessionCheckSeconds = 10
        public init() {}
    }

    let objects: ObjectService
    let users: UserService
    let config: ServerConfig
    let hub: WebSocketHub
    let options: Options
    let logger: Logger
    /// Connected clients by clientId.
    let clients = Mutex<[String: LiveClient]>([:])
    /// The serial queues the clients' own queues run on (one per core, clients spread round-robin): an
    /// event for 1,000 clients is then drained by a few threads in turn, not 1,000 work items each waking
    /// a thread of the global pool (the futex wake-ups and context switches that dominated the fan-out).
    let deliveryQueues: [DispatchQueue]
    let nextDeliveryQueue = Atomic<Int>(0)

    public init(objects: ObjectService, users: UserService, hub: WebSocketHub, options: Options = Options(), logger: Logger) {
        self.objects = objects; self.users = users; self.config = objects.config; self.hub = hub
        self.options = options; self.logger = logger
        deliveryQueues = (0..<max(2, ProcessInfo.processInfo.activeProcessorCount)).map { DispatchQueue(label: "livequery.delivery.\($0)") }
        objects.events.listen { [weak self] event in self?.dispatch(event) }
        scheduleSessionCheck()
    }

    /// Re-checks every client's sessions each `sessionCheckSeconds` (expiry is no event of its own).
    private func scheduleSessionCheck() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(options.sessionCheckSeconds)) { [weak self] in
            guard let self else { return }
            for c in clients.withLock({ Array($0.values) }) { c.enqueueSessionCheck() }
            scheduleSessionCheck()
        }
    }

    /// Adds `GET <mount>` (also `<mount>/`): a WebSocket upgrade to LiveQuery; without `Upgrade:
    /// websocket` it answers 404 as before. Register before the API's own routes.
    public func register(on router: inout Router) {
        router.add("GET", config.mountPath) { [self] head in
            guard WebSocketHandshake.isUpgradeRequest(head) else { return .refuse(HTTPError.notFound) }
            return hub.plan(for: head) { [self] connection in LiveClient(server: self, connection: connection) }
        }
    }

    /// Open LiveQuery clients (connected or not yet).
    public var clientCount: Int { clients.withLock { $0.count } }

    /// The shared queue a new client's own queue targets.
    func deliveryQueue() -> DispatchQueue {
        deliveryQueues[nextDeliveryQueue.add(1, ordering: .relaxed).oldValue % deliveryQueues.count]
    }

    func added(_ client: LiveClient) { clients.withLock { $0[client.clientId] = client } }
    func removed(_ client: LiveClient) { _ = clients.withLock { $0.removeValue(forKey: client.clientId) } }

    /// Hands an event to every client (each decides on its own queue; the writer never waits), with
    /// one `LiveFanout` they share for what depends only on the viewer.
    func dispatch(_ event: ObjectEvent) {
        let all = clients.withLock { Array($0.values) }
        let fanout = LiveFanout(event: event, server: self, viewers: all.count)
        for c in all { c.enqueue(fanout) }
    }

    /// Whether `key` is the master key (constant time).
    func isMasterKey(_ key: String) -> Bool {
        !config.masterKey.isEmpty && Crypto.constantTimeEquals(Array(key.utf8), Array(config.masterKey.utf8))
    }

    /// parse-server's `_validateKeys`: with client keys configured one must match; none configured: any.
    func clientKeysValid(_ sent: [String: String]) -> Bool {
        let configured = [config.restAPIKey, config.clientKey, config.javascriptKey].compactMap { $0 }
        return configured.isEmpty || sent.values.contains { configured.contains($0) }
    }
}
