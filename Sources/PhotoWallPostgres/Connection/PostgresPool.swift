import PhotoWallCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A bounded pool of `PostgresConnection`s.
///
/// At most `maxConnections` exist; a borrower that finds none idle and the pool full waits (on a
/// condition variable) until one is returned. Connections that failed at the connection level are
/// closed instead of returned, so the next borrower opens a fresh one.
///
/// Example:
/// ```swift
/// let pool = PostgresPool(conninfo: "postgres://postgres@127.0.0.1:5432/photowall", maxConnections: 8)
/// let n = try pool.withConnection { conn in try conn.query("SELECT 1").rows.count }
/// ```
public final class PostgresPool: Sendable {
    struct State {
        var idle: [PostgresConnection] = []
        var open = 0
    }

    public let conninfo: String
    public let maxConnections: Int
    private let state = Mutex(State())
    /// Statements sent to the server by this pool's connections (each `execute`, `PQprepare` and
    /// `PQexecPrepared` is one round trip), for diagnostics and tests.
    let counter = RoundTripCounter()
    /// Round trips to the server so far (see `counter`).
    public var roundTrips: Int { counter.value.load(ordering: .relaxed) }
    /// Signalled whenever a connection is returned or a slot frees up. Paired with `waitLock`.
    private let available = PoolSignal()

    /// - Parameters:
    ///   - conninfo: a libpq URI or key/value string.
    ///   - maxConnections: 1…; the upper bound of open connections.
    ///   - setup: statements run once on each new connection (e.g. `SET plan_cache_mode = …`).
    public init(conninfo: String, maxConnections: Int, setup: String? = nil) {
        precondition(maxConnections >= 1)
        self.conninfo = conninfo
        self.maxConnections = maxConnections
        self.setup = setup
    }

    let setup: String?

    /// Borrows a connection for the duration of `body`: the one `withPinnedConnection` holds for this
    /// pool on this thread when there is one (and `pinned` is true), else one from the pool.
    /// - Parameter pinned: false always takes a connection of its own (a write transaction that must
    ///   not run inside a pinned read's transaction).
    /// - Throws: what `body` throws; `PostgresError` when a new connection can't be opened.
    public func withConnection<T>(pinned: Bool = true, _ body: (PostgresConnection) throws -> T) throws -> T {
        if pinned, let p = Self.pinned, p.pool == ObjectIdentifier(self) { return try body(p.connection) }
        let conn = try checkOut()
        defer { checkIn(conn) }
        return try body(conn)
    }

    /// Borrows one connection for the whole of `body`, and hands that same connection to every
    /// `withConnection` of this pool that `body` makes on this thread (one checkout, one session,
    /// e.g. one transaction for several reads). Nested calls reuse the outer pin.
    /// - Parameter body: gets the connection; runs synchronously on this thread.
    /// - Throws: what `body` throws; `PostgresError` when a new connection can't be opened.
    public func withPinnedConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if let p = Self.pinned, p.pool == ObjectIdentifier(self) { return try body(p.connection) }
        let conn = try checkOut()
        defer { checkIn(conn) }
        return try Self.$pinned.withValue(Pin(pool: ObjectIdentifier(self), connection: conn)) { try body(conn) }
    }

    /// True when this thread is inside `withPinnedConnection` of this pool.
    public var isPinned: Bool { Self.pinned?.pool == ObjectIdentifier(self) }

    /// The connection `withPinnedConnection` lends on this thread, with the pool it belongs to.
    struct Pin: Sendable {
        let pool: ObjectIdentifier
        let connection: PostgresConnection
    }
    @TaskLocal static var pinned: Pin?

    private enum Grant: Sendable { case reuse(PostgresConnection), openNew }

    private func checkOut() throws -> PostgresConnection {
        while true {
            let grant: Grant? = state.withLock { s in
                if let c = s.idle.popLast() { return .reuse(c) }
                if s.open < maxConnections { s.open += 1; return .openNew }
                return nil
            }
            switch grant {
            case .reuse(let c)?: return c
            case .openNew?:
                do {
                    let c = try PostgresConnection(conninfo: conninfo, counter: counter)
                    if let setup { try c.execute(setup) }
                    return c
                } catch {
                    state.withLock { $0.open -= 1 }
                    available.signal()
                    throw error
                }
            case nil:
                WorkerPool.blocking { available.wait { self.state.withLock { $0.idle.isEmpty && $0.open >= self.maxConnections } } }
            }
        }
    }

    private func checkIn(_ conn: PostgresConnection) {
        state.withLock { s in
            if conn.isBroken { s.open -= 1 } else { s.idle.append(conn) }
        }
        available.signal()
    }
}

/// A count of round trips to the server, shared by a pool's connections.
final class RoundTripCounter: Sendable {
    let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
}

/// A pthread condition variable with its own mutex, for blocking waits that `Mutex` can't do.
///
/// `@unchecked Sendable`: the pthread objects are only used through `pthread_*` calls, which are
/// thread-safe by contract; the pointers themselves never change after `init`.
final class PoolSignal: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond); pthread_mutex_destroy(mutex)
        cond.deallocate(); mutex.deallocate()
    }

    /// Waits while `stillBlocked()` is true (checked under the mutex; re-checked after each wake-up
    /// and at least every 100 ms, so a signal sent between the check and the wait is never lost for long).
    func wait(while stillBlocked: () -> Bool) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while stillBlocked() {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            var deadline = now
            deadline.tv_nsec += 100_000_000
            if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
            pthread_cond_timedwait(cond, mutex, &deadline)
        }
    }

    func signal() {
        pthread_mutex_lock(mutex)
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }
}
