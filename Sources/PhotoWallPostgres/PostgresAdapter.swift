import PhotoWallCore
import PhotoWallStorage
import Synchronization

/// The PostgreSQL database, through libpq: selected with `--database postgres://…`.
///
/// Same layout and semantics as `SQLiteAdapter`, in PostgreSQL types: each class is a table
/// `"c_<Class>"("objectId" text PRIMARY KEY, "createdAt" bigint, "updatedAt" bigint, doc jsonb,
/// acl jsonb, rperm text[], wperm text[])` (times in milliseconds since 1970; `rperm`/`wperm` are
/// the ACL's readers and writers, NULL = public, filtered with `&&`). Hot fields get expression
/// indexes `((doc->>'fbId'), "createdAt")` that `PostgresQueryCompiler` emits verbatim.
/// `"_SCHEMA"` keeps field types, `"_FILES"` file metadata, `"_UPLOADS"` tus state, and
/// `"_FRIENDS"`/`"_FRIEND_SYNC"` the friend graph, and `"_MIGRATIONS"` the applied schema version.
/// One store per concern, each in its own file: objects, file records, upload records, the
/// friend graph, the feed (for the classes named by `feedProjection`) and bulk loading. The adapter
/// knows no class of the app.
///
/// Writes that add fields lock the class's `"_SCHEMA"` row (`FOR UPDATE`) inside the write
/// transaction, so a type mismatch (111) is checked atomically even across several PhotoWall
/// processes, and fields added by a transaction that rolls back are never cached. DDL runs under
/// a transaction-level advisory lock. Updates are `SELECT … FOR UPDATE` then `UPDATE`.
///
/// Connections come from a bounded `PostgresPool`; each runs with
/// `plan_cache_mode = force_custom_plan` so prepared statements are planned with their actual
/// `$in` values (generic plans pick the per-author index badly: social-and-uploads.md §5.4).
/// String order follows byte order (`COLLATE "C"`), as in SQLite.
/// - Source: parse-server `PostgresStorageAdapter.js` (JSONB documents, `_rperm`/`_wperm` arrays,
///   23505 → `DUPLICATE_VALUE`).
public final class PostgresAdapter: Sendable {
    let pool: PostgresPool
    /// The classes the feed store projects; nil: none (the feed is empty). Must be the same each
    /// time a database is opened (the image table gets its feed column when it is created).
    public let feedProjection: FeedProjection?
    let schemas = ReadMostly<[String: ClassSchema]>([:])
    /// The image class's planner statistics the feed reads (`feedStatistics()`) and when they were read.
    let feedStatisticsCache = Mutex<(ContinuousClock.Instant, FeedStatistics)?>(nil)
    let logger: Logger

    /// Key of the advisory lock that serialises DDL and migrations across processes.
    static let ddlLockKey = 0x5057_4444  // "PWDD"

    /// Takes the DDL lock (`ddlLockKey`) for the rest of `conn`'s transaction, which from here runs
    /// without the statement time limit: waiting for another process's migration, or building an index
    /// on a big table, may take long, and must not be cut half-way.
    static func takeDDLLock(_ conn: PostgresConnection) throws {
        try conn.execute("SET LOCAL statement_timeout = 0")
        try conn.query("SELECT pg_advisory_xact_lock(\(ddlLockKey))")
    }

    /// Connects (opening one connection to check the URL) and runs migrations.
    /// - Parameters:
    ///   - url: `postgres://user[:password]@host[:port]/dbname[?sslmode=…]` or a libpq key/value string.
    ///   - maxConnections: upper bound of the pool (1…).
    ///   - feedProjection: what `FeedStore` serves (nil: nothing).
    ///   - statementTimeLimit: how long one statement may run (PostgreSQL's `statement_timeout`, set on
    ///     each connection); past it the statement is cancelled and the call fails with `ParseError` 124.
    ///     DDL and migrations run without it (`takeDDLLock`). nil: no limit.
    /// - Throws: `ParseError` 100 when the server can't be reached, 1 when migrations fail (cause: `PostgresError`).
    public init(url: String, maxConnections: Int = 10, feedProjection: FeedProjection? = nil,
                statementTimeLimit: Duration? = nil, logger: Logger = Logger(label: "postgres")) throws(ParseError) {
        self.logger = logger
        self.feedProjection = feedProjection
        var setup = "SET plan_cache_mode = force_custom_plan; SET client_min_messages = warning"
        if let statementTimeLimit {
            let (seconds, attoseconds) = statementTimeLimit.components
            setup += "; SET statement_timeout = \(max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))"
        }
        pool = PostgresPool(conninfo: url, maxConnections: maxConnections, setup: setup)
        do {
            try pool.withConnection { _ in }
        } catch let e as PostgresError {
            throw ParseError(.connectionFailed, "cannot connect to PostgreSQL", cause: e)
        } catch {
            throw ParseError(.connectionFailed, "cannot connect to PostgreSQL", cause: error)
        }
        try migrate()
    }

    static func table(_ className: String) -> String {
        // Class names the API accepts never hold a `"` (`ObjectNames.isValidClassName`); doubling one is the safety net, off the hot path.
        className.utf8.contains(UInt8(ascii: "\"")) ? "\"c_\(className.replacingOccurrences(of: "\"", with: "\"\""))\"" : "\"c_\(className)\""
    }

    // MARK: errors at the boundary

    /// Runs `body`, translating failures into Parse errors (SQLSTATE 23505 → 137, see `PostgresError.parseError`).
    func guarded<T>(_ body: () throws -> T) throws(ParseError) -> T {
        do {
            return try body()
        } catch let e as ParseError {
            throw e
        } catch let e as PostgresError {
            let p = e.parseError
            if p.code == .internalServerError { logger.error("postgres: \(e)") }
            throw p
        } catch {
            throw ParseError(.internalServerError, "Internal server error.", cause: error)
        }
    }

    /// One write transaction. Schema changes it makes are recorded in `changes` and reach the cache
    /// only after `COMMIT`, so a rolled-back transaction leaves no field behind.
    func writeTransaction<T>(_ body: (PostgresConnection, inout [String: ClassSchema]) throws -> T) throws(ParseError) -> T {
        try guarded {
            // A connection of its own, never a pinned reader's (`readingOneSnapshot`): its writes commit on their own.
            try pool.withConnection(pinned: false) { conn in
                var changes: [String: ClassSchema] = [:]
                let value = try conn.transaction { try body(conn, &changes) }
                if !changes.isEmpty {
                    let committed = changes
                    schemas.write { for (k, v) in committed { $0[k] = v } }
                }
                return value
            }
        }
    }
}
