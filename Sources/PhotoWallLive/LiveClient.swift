import Dispatch
import Foundation
import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage
import PhotoWallWebSocket
import Synchronization

/// One LiveQuery connection: its `connect` credentials and subscriptions. Messages and events are
/// handled in order on the client's own serial queue (they read sessions and objects), never on the
/// WebSocket loop or a writer's thread; that queue runs on one of the server's `deliveryQueues`.
final class LiveClient: WebSocketSession {
    struct Subscription {
        var className: String
        var predicate: PhotoWallStorage.Predicate
        var keys: [String]?
        var watch: [String]?
        var sessionToken: String?
    }

    struct State {
        var connected = false
        var isMaster = false
        var sessionToken: String?
        var installationId: String?
        var subscriptions: [Int: Subscription] = [:]
    }

    let clientId = UUID().uuidString.lowercased()
    let server: LiveQueryServer
    let connection: WebSocketConnection
    let queue: DispatchQueue
    /// Touched only on `queue`; a Mutex to satisfy Sendable.
    let state = Mutex(State())

    init(server: LiveQueryServer, connection: WebSocketConnection) {
        self.server = server
        self.connection = connection
        self.queue = DispatchQueue(label: "livequery.client", target: server.deliveryQueue())
        server.added(self)
    }

    // MARK: WebSocketSession

    func received(text: String) {
        queue.async { [self] in handle(text) }
    }

    func closed() {
        server.removed(self)
        queue.async { [self] in state.withLock { $0 = State() } }
    }

    func enqueue(_ fanout: LiveFanout) {
        queue.async { [self] in deliver(fanout) }
    }

    /// Ends (209) what used a session that is no longer valid, e.g. expired.
    func enqueueSessionCheck() {
        queue.async { [self] in
            let s = state.withLock { $0 }
            guard s.connected, !s.isMaster else { return }
            let tokens = Set(([s.sessionToken] + s.subscriptions.values.map(\.sessionToken)).compactMap { $0 })
            let ended = tokens.filter { (try? server.users.authenticate(sessionToken: $0)) == nil }
            if !ended.isEmpty { endSessions(s, ended: { $0.map(ended.contains) ?? false }) }
        }
    }

    // MARK: requests

    func handle(_ text: String) {
        let request: LiveQueryRequest
        do {
            request = try LiveQueryRequest.parse(text)
        } catch {
            pushError(code: 1, error.message, reconnect: true, requestId: nil)
            return
        }
        switch request {
        case .connect(let appId, let masterKey, let clientKeys, let token, let installationId):
            connect(appId: appId, masterKey: masterKey, clientKeys: clientKeys, token: token, installationId: installationId)
        case .subscribe(let requestId, let query, let token, let isUpdate):
            subscribe(requestId: requestId, query: query, token: token, isUpdate: isUpdate)
        case .unsubscribe(let requestId):
            unsubscribe(requestId: requestId)
        }
    }

    func connect(appId: String, masterKey: String?, clientKeys: [String: String], token: String?, installationId: String?) {
        let isMaster = masterKey.map(server.isMasterKey) ?? false
        guard appId == server.config.appId, masterKey == nil || isMaster, isMaster || server.clientKeysValid(clientKeys) else {
            pushError(code: 4, "Key in request is not valid", reconnect: true, requestId: nil)
            return
        }
        if let token {
            do { _ = try server.users.authenticate(sessionToken: token) } catch {
                pushError(code: 209, "Invalid session token", reconnect: false, requestId: nil)
                return
            }
        }
        state.withLock {
            $0.connected = true; $0.isMaster = isMaster; $0.sessionToken = token; $0.installationId = installationId
            $0.subscriptions = [:]
        }
        push(["op": "connected", "clientId": .string(clientId)], installationId: installationId)
    }

    func subscribe(requestId: Int, query: LiveQueryRequest.Query, token: String?, isUpdate: Bool) {
        let s = state.withLock { $0 }
        guard s.connected else {
            pushError(code: 2, "Can not find this client, make sure you connect to server before subscribing", reconnect: true, requestId: nil)
            return
        }
        if !isUpdate, s.subscriptions[requestId] == nil, s.subscriptions.count >= server.options.maxSubscriptionsPerClient {
            pushError(code: 1, "Too many subscriptions on this connection (at most \(server.options.maxSubscriptionsPerClient)).",
                      reconnect: false, requestId: requestId)
            return
        }
        let effectiveToken = token ?? s.sessionToken
        do throws(ParseError) {
            let auth = try authContext(token: effectiveToken, isMaster: s.isMaster)
            let predicate = try server.objects.livePredicate(className: query.className, whereJSON: query.whereJSON,
                                                             keys: query.keys, watch: query.watch, auth: auth)
            let sub = Subscription(className: query.className, predicate: predicate, keys: query.keys, watch: query.watch,
                                   sessionToken: token)
            state.withLock { $0.subscriptions[requestId] = sub }
            push(["op": "subscribed", "clientId": .string(clientId), "requestId": .number(Double(requestId))], installationId: s.installationId)
        } catch {
            pushError(code: error.code.rawValue, error.code == .invalidSessionToken ? "Invalid session token" : error.message,
                      reconnect: false, requestId: requestId)
        }
    }

    func unsubscribe(requestId: Int) {
        let s = state.withLock { $0 }
        guard s.connected else {
            pushError(code: 2, "Can not find this client, make sure you connect to server before unsubscribing", reconnect: true, requestId: nil)
            return
        }
        guard state.withLock({ $0.subscriptions.removeValue(forKey: requestId) }) != nil else {
            pushError(code: 2, "Cannot find subscription with clientId \(clientId) subscriptionId \(requestId). Make sure you subscribe to live query server before unsubscribing.",
                      reconnect: true, requestId: requestId)
            return
        }
        push(["op": "unsubscribed", "clientId": .string(clientId), "requestId": .number(Double(requestId))], installationId: s.installationId)
    }

    /// The viewer a subscription acts as, with its session checked now.
    /// - Throws: 209 when the session ended or expired.
    func authContext(token: String?, isMaster: Bool) throws(ParseError) -> AuthContext {
        if isMaster { return .master }
        guard let token else { return .anonymous }
        return try server.users.authenticate(sessionToken: token)
    }

    // MARK: events

    /// Decides `fanout`'s event for each of this client's subscriptions (see `LiveFanout` for what is
    /// shared between clients), in `requestId` order.
    func deliver(_ fanout: LiveFanout) {
        let event = fanout.event
        let s = state.withLock { $0 }
        guard s.connected else { return }
        if case .sessionsEnded(let userId, let token) = event {
            endSessions(s, ended: { t in t == token || (token == nil && !self.stillValid(t, userId: userId)) })
            return
        }
        if case .deleted(let o) = event, o.className == "_Session", let token = o.fields["sessionToken"]?.stringValue {
            endSessions(s, ended: { $0 == token })
        }
        let className: String
        switch event {
        case .saved(_, let current): className = current.className
        case .deleted(let o): className = o.className
        case .sessionsEnded: return
        }
        var ended: Set<String> = []
        for (requestId, sub) in s.subscriptions.sorted(by: { $0.key < $1.key }) where sub.className == className {
            let token = sub.sessionToken ?? s.sessionToken
            if let token, ended.contains(token) { continue }
            let viewer = LiveFanout.viewer(token: token, isMaster: s.isMaster)
            let auth: AuthContext
            do {
                auth = try fanout.auth(viewer)
            } catch {
                if let token { ended.insert(token) }
                endSessions(s, ended: { $0 == token })
                continue
            }
            do {
                try deliver(fanout, to: sub, requestId: requestId, viewer: viewer, auth: auth, installationId: s.installationId)
            } catch {
                server.logger.warning("live event not delivered", ["clientId": clientId, "cause": "\(error)"])
            }
        }
    }

    func stillValid(_ token: String?, userId: String) -> Bool {
        guard let token else { return true }
        return (try? server.users.authenticate(sessionToken: token)) != nil
    }

    /// Error 209 and the end of every subscription acting with a session that `ended`; when the
    /// connection's own session ended, the client is disconnected from LiveQuery (it must connect again).
    func endSessions(_ s: State, ended: (String?) -> Bool) {
        let connectionEnded = s.sessionToken != nil && ended(s.sessionToken)
        let doomed = s.subscriptions.filter { id, sub in
            let t = sub.sessionToken ?? s.sessionToken
            return t != nil && ended(t)
        }
        guard connectionEnded || !doomed.isEmpty else { return }
        state.withLock { st in
            for id in doomed.keys { st.subscriptions[id] = nil }
            if connectionEnded { st = State() }
        }
        if connectionEnded || doomed.keys.contains(where: { s.subscriptions[$0]?.sessionToken == nil }) {
            pushError(code: 209, "Invalid session token", reconnect: false, requestId: nil)
        }
        for (id, sub) in doomed.sorted(by: { $0.key < $1.key }) where sub.sessionToken != nil {
            pushError(code: 209, "Invalid session token", reconnect: false, requestId: id)
        }
    }

    /// parse-server's `_onAfterSave` / `_onAfterDelete` decision for one subscription and viewer.
    func deliver(_ fanout: LiveFanout, to sub: Subscription, requestId: Int, viewer: LiveFanout.Viewer, auth: AuthContext,
                 installationId: String?) throws(ParseError) {
        let message: [UInt8]
        switch fanout.event {
        case .deleted(let o):
            guard try fanout.visibility(viewer, current: o, original: nil, auth: auth).current, sub.predicate.matches(o) else { return }
            message = LiveFanout.message(clientId: clientId, installationId: installationId,
                                         object: try fanout.rendered(o, side: .current, keys: sub.keys, auth: auth),
                                         op: "delete", original: nil, requestId: requestId)
        case .saved(let original, let current):
            let seen = try fanout.visibility(viewer, current: current, original: original, auth: auth)
            let currMatched = seen.current && sub.predicate.matches(current)
            let origMatched = seen.original && (original.map(sub.predicate.matches) ?? false)
            let op: String
            switch (origMatched, currMatched) {
            case (true, true): op = "update"
            case (true, false): op = "leave"
            case (false, true): op = original == nil ? "create" : "enter"
            case (false, false): return
            }
            if op == "update", let watch = sub.watch, let original {
                guard watch.contains(where: { Self.fieldValue($0, original) != Self.fieldValue($0, current) }) else { return }
            }
            // What the viewer can't read (now, on leave; before, on enter) goes out as its identity only,
            // so an ACL change discloses nothing the viewer couldn't GET.
            let object = seen.current ? try fanout.rendered(current, side: .current, keys: sub.keys, auth: auth)
                                      : JSON.object(Self.identity(current)).serialized
            var originalBytes: [UInt8]?
            if let original, op != "create" {
                originalBytes = seen.original ? try fanout.rendered(original, side: .original, keys: sub.keys, auth: auth)
                                              : JSON.object(Self.identity(original)).serialized
            }
            message = LiveFanout.message(clientId: clientId, installationId: installationId, object: object, op: op,
                                         original: originalBytes, requestId: requestId)
        case .sessionsEnded:
            return
        }
        connection.send(utf8: message)
    }

    static func identity(_ o: StoredObject) -> [String: JSON] {
        ["__type": "Object", "className": .string(o.className), "objectId": .string(o.objectId)]
    }

    static func fieldValue(_ field: String, _ o: StoredObject) -> JSON? {
        switch field {
        case "objectId": return .string(o.objectId)
        case "createdAt": return o.createdAt.json
        case "updatedAt": return o.updatedAt.json
        case "ACL": return o.acl?.json
        default: return o.fields[field]
        }
    }

    // MARK: output

    func push(_ message: [String: JSON], installationId: String?) {
        var m = message
        if let installationId { m["installationId"] = .string(installationId) }
        connection.send(utf8: JSON.object(m).serialized)
    }

    func pushError(code: Int, _ message: String, reconnect: Bool, requestId: Int?) {
        push(["op": "error", "code": .number(Double(code)), "error": .string(message), "reconnect": .bool(reconnect),
              "requestId": requestId.map { .number(Double($0)) } ?? .null], installationId: nil)
    }
}
