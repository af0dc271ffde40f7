internal import CLibPQ
import Dispatch
import Foundation
import PhotoWallCore
import PhotoWallStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `ChangeNotifier` over PostgreSQL `LISTEN`/`NOTIFY`: every `photowall serve` on one database
/// reaches the others with no other server (no Redis).
///
/// - Sending: `publish` queues the payload; a serial queue runs `SELECT pg_notify(channel, message)`
///   on a pool connection (outside any transaction, so it goes out at once; the write it describes
///   has committed before `publish` is called). A message is `<instance> i <payload>` when it fits
///   NOTIFY's payload limit (8000 bytes, `maxInlineBytes` for the whole message), else the payload
///   goes into a row of `"_LIVE_EVENTS"` and the message is `<instance> r <id>`; receivers read the
///   row. Rows older than `spillRetention` (60 s by default) are swept by the sender, at most once
///   per `spillRetention`, after a send.
/// - Receiving: a dedicated thread holds its own libpq connection (not the pool's), runs `LISTEN`,
///   waits on `PQsocket` with `poll`, then `PQconsumeInput` and `PQnotifies`. Messages from this
///   instance (same instance id) are skipped: it delivered them locally already.
/// - When the listening connection drops, the thread reconnects with backoff (0.1 s doubling to
///   5 s) and listens again. **Notifications sent while it was disconnected are lost** (PostgreSQL
///   queues them only for sessions listening at commit time); a warning is logged on reconnect.
///   Live clients catch up through queries (the wall's feed cursor), as after their own reconnects.
/// - Source: PostgreSQL 15 manual, `NOTIFY` (payload < 8000 bytes, delivered at commit, in order per
///   sending session) and libpq §34.9 "Asynchronous Notification".
public final class PostgresChangeNotifier: ChangeNotifier {
    /// The largest message sent inline: NOTIFY's payload must be shorter than 8000 bytes.
    public static let maxInlineBytes = 7999
    /// How long a spilled payload row is kept for receivers to read, by default: 60 s.
    public static let spillRetentionSeconds: Int64 = 60
    /// How long this notifier keeps a spilled payload row (`"_LIVE_EVENTS"`) for receivers to read,
    /// in milliseconds; also the least time between two sweeps.
    public let spillRetentionMilliseconds: Int64

    public let channel: String
    /// This process's id in messages (random per start).
    public let instanceId: String
    private let conninfo: String
    private let pool: PostgresPool
    private let logger: Logger
    private let sender = DispatchQueue(label: "photowall.postgres.notify")
    private let stopped = Atomic<Bool>(false)
    private let lastSweep = Mutex<Int64>(0)

    /// - Parameters:
    ///   - channel: the `LISTEN` channel (an identifier; quoted here).
    ///   - instanceId: distinguishes this process's own messages (no spaces).
    ///   - spillRetention: how long a spilled payload row is kept (see `spillRetentionMilliseconds`).
    init(pool: PostgresPool, channel: String, instanceId: String, spillRetention: Duration, logger: Logger) {
        self.pool = pool; self.conninfo = pool.conninfo; self.channel = channel
        self.instanceId = instanceId; self.logger = logger
        let (seconds, attoseconds) = spillRetention.components
        self.spillRetentionMilliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    public func publish(_ payload: String) {
        guard !stopped.load(ordering: .relaxed) else { return }
        sender.async { [self] in
            do { try send(payload) } catch {
                logger.error("NOTIFY failed: \(error)", ["channel": channel])
            }
        }
    }

    private func send(_ payload: String) throws {
        let now = ParseDate.now().millisecondsSince1970
        try pool.withConnection { conn in
            var message = "\(instanceId) i \(payload)"
            if message.utf8.count > Self.maxInlineBytes {
                let row = try conn.query("INSERT INTO \"_LIVE_EVENTS\"(payload, \"createdAt\") VALUES ($1::text, $2::bigint) RETURNING id",
                                         [payload, String(now)])
                message = "\(instanceId) r \(row.first?[0] ?? "")"
            }
            try conn.query("SELECT pg_notify($1::text, $2::text)", [channel, message])
            let sweep = lastSweep.withLock { last -> Bool in
                guard now - last >= spillRetentionMilliseconds else { return false }
                last = now; return true
            }
            if sweep {
                try conn.query("DELETE FROM \"_LIVE_EVENTS\" WHERE \"createdAt\" < $1::bigint",
                               [String(now - spillRetentionMilliseconds)])
            }
        }
    }

    public func listen(_ handler: @escaping @Sendable (String) -> Void) {
        let thread = Thread { [self] in listenLoop(handler) }
        thread.name = "photowall-listen"
        thread.start()
    }

    public func stop() { stopped.store(true, ordering: .relaxed) }

    private func listenLoop(_ handler: @escaping @Sendable (String) -> Void) {
        var backoff = 0.1
        var everListened = false
        while !stopped.load(ordering: .relaxed) {
            guard let conn = PQconnectdb(conninfo) else { Thread.sleep(forTimeInterval: backoff); continue }
            defer { PQfinish(conn) }
            let quoted = "\"" + channel.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            var ok = PQstatus(conn) == CONNECTION_OK
            if ok, let r = PQexec(conn, "LISTEN \(quoted)") {
                ok = PQresultStatus(r) == PGRES_COMMAND_OK
                PQclear(r)
            } else { ok = false }
            guard ok else {
                logger.warning("cannot LISTEN on PostgreSQL: \(String(cString: PQerrorMessage(conn)).trimmingTrailingWhitespace()); retrying in \(backoff) s")
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 5)
                continue
            }
            if everListened {
                logger.warning("LISTEN connection re-established: changes made on other instances while it was down were not delivered here",
                               ["channel": channel])
            }
            everListened = true
            backoff = 0.1
            receive(conn, handler)
        }
    }

    /// Waits for notifications until the connection fails or `stop()`.
    private func receive(_ conn: OpaquePointer, _ handler: @escaping @Sendable (String) -> Void) {
        let socket = PQsocket(conn)
        while !stopped.load(ordering: .relaxed) {
            var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let n = poll(&fds, 1, 500)  // wakes twice a second to notice `stop()`
            if n < 0 && errno != EINTR { return }
            if n <= 0 { continue }
            guard PQconsumeInput(conn) == 1 else {
                logger.warning("LISTEN connection lost: \(String(cString: PQerrorMessage(conn)).trimmingTrailingWhitespace())")
                return
            }
            while let note = PQnotifies(conn) {
                let extra = String(cString: note.pointee.extra)
                PQfreemem(note)
                if let payload = payload(of: extra) { handler(payload) }
            }
            if PQstatus(conn) != CONNECTION_OK { return }
        }
    }

    /// The payload of another instance's message (nil for this instance's own, or a spilled row
    /// already swept).
    private func payload(of message: String) -> String? {
        let parts = message.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] != instanceId else { return nil }
        if parts[1] == "i" { return String(parts[2]) }
        guard parts[1] == "r" else { return nil }
        do {
            let rows = try pool.withConnection { conn in
                try conn.query("SELECT payload FROM \"_LIVE_EVENTS\" WHERE id = $1::bigint", [String(parts[2])])
            }
            guard let text = rows.first?[0] else {
                logger.warning("live event \(parts[2]) was swept before it was read")
                return nil
            }
            return text
        } catch {
            logger.error("reading live event \(parts[2]) failed: \(error)")
            return nil
        }
    }
}

extension PostgresAdapter {
    /// A `LISTEN`/`NOTIFY` notifier on this database (`PostgresChangeNotifier`), sending on the
    /// adapter's pool and listening on a connection of its own once `listen` is called.
    /// - Parameters:
    ///   - channel: the channel every instance of one deployment uses.
    ///   - instanceId: this process's id (default: a random UUID).
    ///   - spillRetention: how long a payload too large for NOTIFY stays in `"_LIVE_EVENTS"` for the
    ///     receivers to read (default `PostgresChangeNotifier.spillRetentionSeconds`, 60 s); rows older
    ///     are deleted by the sender, at most once per this time. Receivers read a row within
    ///     milliseconds of its NOTIFY, so only tests shorten it.
    public func changeNotifier(channel: String = "photowall_changes", instanceId: String = UUID().uuidString,
                               spillRetention: Duration = .seconds(PostgresChangeNotifier.spillRetentionSeconds)) -> PostgresChangeNotifier {
        PostgresChangeNotifier(pool: pool, channel: channel, instanceId: instanceId, spillRetention: spillRetention, logger: logger)
    }
}
