import PhotoWallCore
import PhotoWallStorage

/// A short-lived cache of resolved sessions: session token → the `AuthContext` it stands for, so a
/// request with a session token does not read `_Session` and `_User` each time.
///
/// `UserService.authenticate(sessionToken:)` is the only reader, and every route resolves sessions
/// through it (JSON routes, batch, functions, files, tus). Every write to `_Session` or `_User` in
/// this process invalidates at once: `ObjectService`'s store reports each one (see
/// `SessionInvalidatingStore`), so logout, `DELETE /sessions/:id`, a password change, user changes and
/// user deletion are seen by the next request. An entry also ends with its session's `expiresAt`.
///
/// Bound: an entry lives at most `ttlSeconds` (PhotoWall uses 5 s with SQLite); each entry's lifetime is
/// drawn between half of it and all of it, so sessions cached in one burst (a LiveQuery event re-checks
/// every viewer's session at once) don't all end, and get read again, in the same instant: the re-reads
/// spread over many events instead of delaying one event's fan-out by a thousand database reads. A write made by
/// another process on the same database (a second server on a shared database) is not seen here until
/// the entry ends, so PhotoWall does not cache on PostgreSQL (`ttlSeconds` 0), where several
/// instances may share one database.
///
/// A look-up that misses and reads the database stores its result only when no invalidation happened
/// since it began (`generation`), so a lookup racing a logout never puts the ended session back.
public final class SessionCache: Sendable {
    /// How long an entry may be served, in seconds; 0 turns the cache off.
    public var ttlSeconds: Double { entries.ttlSeconds }
    /// At most this many entries; when full, the cache is emptied (entries are cheap to rebuild).
    public var capacity: Int { entries.capacity }

    struct Entry: Sendable {
        var auth: AuthContext
        var sessionObjectId: String
        /// The session's `expiresAt`, if it has one.
        var expiresAt: ParseDate?
    }

    /// By session token (lifetimes, the generation rule and the bound: `ExpiringCache`).
    private let entries: ExpiringCache<String, Entry>

    /// - Parameters:
    ///   - ttlSeconds: ≥ 0; 0 (the default) caches nothing.
    ///   - capacity: ≥ 1.
    public init(ttlSeconds: Double = 0, capacity: Int = 100_000) {
        entries = ExpiringCache(ttlSeconds: ttlSeconds, capacity: capacity)
    }

    public var isEnabled: Bool { entries.isEnabled }

    /// The cached session of `token`, when it is fresh and its session has not expired.
    func lookup(_ token: String) -> AuthContext? {
        guard let e = entries.lookup(token) else { return nil }
        if let exp = e.expiresAt, exp < ParseDate.now() { return nil }
        return e.auth
    }

    /// The current generation, taken before reading the database on a miss.
    func generation() -> UInt64 { entries.generation() }

    /// Caches `auth` for `token` unless an invalidation happened since `generation` was taken.
    func store(_ token: String, _ auth: AuthContext, sessionObjectId: String, expiresAt: ParseDate?, generation: UInt64) {
        entries.store(token, Entry(auth: auth, sessionObjectId: sessionObjectId, expiresAt: expiresAt), generation: generation)
    }

    /// Forgets what a write to `className` may have changed: the session `objectId` of `_Session`, the
    /// user `objectId` of `_User` (all their sessions), everything when `objectId` is nil (a predicate
    /// delete). Writes to other classes change nothing here.
    public func invalidate(className: String, objectId: String?) {
        guard className == "_Session" || className == "_User" else { return }
        guard let objectId else { return entries.invalidate() }
        if className == "_Session" {
            entries.invalidate { $1.sessionObjectId == objectId }
        } else {
            entries.invalidate { $1.auth.userId == objectId }
        }
    }
}
