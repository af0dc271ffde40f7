import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage
import Synchronization

/// One committed change on its way to every LiveQuery client: the per-event work shared by all of them.
///
/// Each client still decides the event for each of its subscriptions, at event time, by the rules every
/// read passes; what this keeps is the part of that work that depends only on **who** the viewer is, done
/// once per event per viewer instead of once per connection: the session check (`auth`) and whether the
/// viewer may see the object before and after the write (`ObjectService.isVisible`: ACL, the class's
/// read scope such as friends-only walls and private users). The object as GET renders it for a viewer
/// (`ObjectService.liveObject`: protected fields, restricted views, signed file URLs, `include`d
/// authors) is made once per group of viewers who see it alike: a rendering comes with the questions it
/// asked about its viewer (`RenderTrace`: the field view of each object, whether `include` shows each
/// target), and a viewer who answers them all alike gets the same bytes; anyone else gets a rendering
/// of their own. `include` targets are read once per event (`IncludeTargets`) and filtered per viewer.
/// A viewer is its session token (or anonymous, or the master key): one session always yields the same
/// `AuthContext`. Nothing here outlives the event: the next event asks again (through the session and
/// friend-list caches, which every logout and friend sync clear at once), so a logout, an unfriending or an
/// ACL change is seen by the next event.
/// Per subscription remain the `where` match, `watch` and the envelope.
final class LiveFanout: Sendable {
    let event: ObjectEvent
    let server: LiveQueryServer

    /// Who a subscription acts as, for the memos: the master key, anonymous, or one session token.
    enum Viewer: Hashable, Sendable {
        case master, anonymous, session(String)
    }

    /// Which of the event's objects a memo is about.
    enum Side: Hashable, Sendable { case current, original }

    struct RenderKey: Hashable, Sendable {
        var side: Side
        var keys: [String]?
    }

    /// One rendering and the answers it took (`RenderTrace`).
    struct Rendering {
        var trace: RenderTrace
        var bytes: [UInt8]
    }

    /// At most this many renderings are kept per side and `keys`; past it (viewers seeing the event in
    /// that many ways) each further group renders its own, so checking a viewer stays bounded.
    static let renderingsKept = 16

    struct Memo {
        var auths: [Viewer: Result<AuthContext, ParseError>] = [:]
        var visible: [Viewer: (current: Bool, original: Bool)] = [:]
        var rendered: [RenderKey: [Rendering]] = [:]

        /// Room for `viewers` entries, so filling the memos during a fan-out never regrows them.
        init(viewers: Int) {
            auths.reserveCapacity(viewers); visible.reserveCapacity(viewers)
        }
    }

    /// Filled by whichever client first needs an entry. Two clients may compute the same entry at once
    /// (the lock is not held while computing, so no client waits on another's database read); both get
    /// the same answer and one is kept.
    private let memo: Mutex<Memo>
    /// The event's `include` targets, read once for every viewer.
    let targets: IncludeTargets

    /// - Parameter viewers: how many clients the event goes to (the memos' initial capacity).
    init(event: ObjectEvent, server: LiveQueryServer, viewers: Int = 0) {
        self.event = event; self.server = server
        memo = Mutex(Memo(viewers: viewers))
        targets = server.objects.includeTargets()
    }

    static func viewer(token: String?, isMaster: Bool) -> Viewer {
        if isMaster { return .master }
        return token.map(Viewer.session) ?? .anonymous
    }

    /// The viewer's `AuthContext` with its session checked now (once per event per session).
    /// - Throws: 209 when the session ended or expired.
    func auth(_ viewer: Viewer) throws(ParseError) -> AuthContext {
        if let known = memo.withLock({ $0.auths[viewer] }) { return try known.get() }
        let result: Result<AuthContext, ParseError>
        switch viewer {
        case .master: result = .success(.master)
        case .anonymous: result = .success(.anonymous)
        case .session(let token):
            do throws(ParseError) { result = .success(try server.users.authenticate(sessionToken: token)) } catch { result = .failure(error) }
        }
        memo.withLock { $0.auths[viewer] = result }
        return try result.get()
    }

    /// Whether `viewer` may see the current and the original object (ACL and read scope, no `where`).
    func visibility(_ viewer: Viewer, current: StoredObject, original: StoredObject?, auth: AuthContext) throws(ParseError) -> (current: Bool, original: Bool) {
        if let known = memo.withLock({ $0.visible[viewer] }) { return known }
        let objects = server.objects
        let seen = (current: try objects.isVisible(current, auth: auth),
                    original: try original.map { (o: StoredObject) throws(ParseError) -> Bool in try objects.isVisible(o, auth: auth) } ?? false)
        memo.withLock { $0.visible[viewer] = seen }
        return seen
    }

    /// `o` as `auth` may read it, trimmed to `keys`, with `className` and `__type`, serialised: a kept
    /// rendering whose questions `auth` answers alike, else a new one.
    func rendered(_ o: StoredObject, side: Side, keys: [String]?, auth: AuthContext) throws(ParseError) -> [UInt8] {
        let key = RenderKey(side: side, keys: keys)
        let kept = memo.withLock { $0.rendered[key] ?? [] }
        for r in kept where try r.trace.holds(for: auth, in: server.objects) { return r.bytes }
        var (w, trace) = try server.objects.liveObject(o, include: server.options.include[o.className] ?? [], keys: keys, auth: auth,
                                                       targets: targets)
        w["className"] = .string(o.className)
        w["__type"] = "Object"
        let bytes = JSON.object(w).serialized
        memo.withLock {
            if $0.rendered[key, default: []].count < Self.renderingsKept { $0.rendered[key, default: []].append(Rendering(trace: trace, bytes: bytes)) }
        }
        return bytes
    }

    /// An event message, byte for byte what `JSON.object([...]).serialized` gives for
    /// `{clientId, installationId?, object, op, original?, requestId}` (keys in sorted order), from the
    /// already serialised objects.
    static func message(clientId: String, installationId: String?, object: [UInt8], op: String, original: [UInt8]?,
                        requestId: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(object.count + (original?.count ?? 0) + 160)
        out.append(contentsOf: #"{"clientId":"#.utf8)
        JSON.writeString(clientId, into: &out)
        if let installationId {
            out.append(contentsOf: #","installationId":"#.utf8)
            JSON.writeString(installationId, into: &out)
        }
        out.append(contentsOf: #","object":"#.utf8)
        out.append(contentsOf: object)
        out.append(contentsOf: #","op":"#.utf8)
        JSON.writeString(op, into: &out)
        if let original {
            out.append(contentsOf: #","original":"#.utf8)
            out.append(contentsOf: original)
        }
        out.append(contentsOf: #","requestId":"#.utf8)
        out.append(contentsOf: String(requestId).utf8)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
