internal import CSQLite
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// A value bound to or read from SQLite.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var text: String? { if case .text(let s) = self { return s }; return nil }
    public var blob: [UInt8]? { if case .blob(let b) = self { return b }; return nil }
    public var integer: Int64? {
        switch self {
        case .integer(let i): return i
        case .real(let d): return Int64(d)
        default: return nil
        }
    }
}

/// One result row as SQLite holds it, valid only during the `forEachRawRow` callback that hands it out.
public struct SQLiteRow {
    let stmt: SQLiteStatementHandle

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }

    /// The column's text as UTF-8 bytes (SQLite's buffer, no copy); nil for NULL.
    public func text(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard let p = sqlite3_column_text(stmt, column) else { return nil }
        return UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, column)))
    }
}

/// A failed SQLite call. `sql` is kept for logs; bound arguments never are.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE` = 2067, `SQLITE_BUSY` = 5, …).
    public var code: Int32
    public var message: String
    public var sql: String?
    public var description: String { "SQLite error \(code): \(message)" + (sql.map { " in \($0)" } ?? "") }
    public var isUniqueConstraint: Bool { code == 2067 || code == 1555 }
    /// The statement was stopped: its connection's time limit ran out (`withTimeLimit`), `SQLITE_INTERRUPT`.
    public var isInterrupt: Bool { code & 0xff == 9 }
}

public typealias SQLiteHandle = OpaquePointer
public typealias SQLiteStatementHandle = OpaquePointer

private let SQLITE_TRANSIENT_PTR = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// SQLite's process-wide settings, made once before the first connection opens (a global is
/// initialised once, on first use, by whichever thread gets there first): memory statistics off.
/// With them on, every allocation inside SQLite takes one global mutex to count itself; a read with
/// a long `IN` list (a wall's read scope for a viewer with 5,000 friends binds 5,001 values, each
/// copied into an allocation) had the server's threads queueing on it: 31 % of the CPU in futex
/// lock and wake and `sqlite3StatusUp`. PhotoWall reads none of those statistics.
/// - Source: https://sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigmemstatus,
///   https://sqlite.org/compile.html#default_memstatus
let sqliteConfigured: Bool = photowall_sqlite3_disable_memstatus() == SQLITE_OK

/// One SQLite connection with a cache of prepared statements.
///
/// Use from one thread at a time. `SQLiteDatabase` uses its writer on its writer thread alone and gives
/// each thread its own reader (thread-local), so no connection is ever used by two threads at once,
/// which is what makes the `@unchecked Sendable` below safe.
public final class SQLiteConnection: @unchecked Sendable {
    public let rawHandle: SQLiteHandle
    private var cache: [String: SQLiteStatementHandle] = [:]
    private let regexpCache = RegexpCache()
    /// `CLOCK_MONOTONIC` nanoseconds at which the running statement is stopped, 0 = never; read by the
    /// progress handler (`photowallProgressHandler`, installed by the first `withTimeLimit`).
    private let interruptAt = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
    private var progressHandlerInstalled = false
    /// As a thread's reader (`SQLiteDatabase.read`): whether it maps the file, and why.
    var readerMapping = ReaderMapping()

    /// Opens (creating if needed) the database at `path`.
    /// - Throws: `SQLiteError` when the file cannot be opened.
    public init(path: String, readOnly: Bool = false) throws {
        _ = sqliteConfigured
        var db: SQLiteHandle?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let msg = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: msg, sql: nil)
        }
        rawHandle = db
        interruptAt.initialize(to: 0)
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 10_000)
        registerRegexp(cache: regexpCache)
    }

    deinit {
        for stmt in cache.values { sqlite3_finalize(stmt) }
        sqlite3_close_v2(rawHandle)
        interruptAt.deallocate()
    }

    /// Runs `body`, stopping any statement of this connection still running `limit` after the call
    /// began: that statement then fails with `SQLiteError` 9 (`SQLITE_INTERRUPT`, `isInterrupt`), and
    /// so does every later one until `body` returns. Within a call already limited, `body` just runs
    /// under the outer limit. SQLite checks the clock every 1,000 virtual-machine instructions (a few
    /// microseconds); one call of a user function (`regexp`) is not cut short.
    /// - Source: https://sqlite.org/c3ref/progress_handler.html
    public func withTimeLimit<T>(_ limit: Duration, _ body: () throws -> T) rethrows -> T {
        guard interruptAt.pointee == 0 else { return try body() }
        if !progressHandlerInstalled {
            sqlite3_progress_handler(rawHandle, 1000, photowallProgressHandler, UnsafeMutableRawPointer(interruptAt))
            progressHandlerInstalled = true
        }
        let (seconds, attoseconds) = limit.components
        let nanoseconds = UInt64(clamping: seconds) &* 1_000_000_000 &+ UInt64(clamping: attoseconds / 1_000_000_000)
        interruptAt.pointee = max(1, monotonicNanoseconds() &+ nanoseconds)
        defer { interruptAt.pointee = 0 }
        return try body()
    }

    /// Runs `body` with no time limit, even within `withTimeLimit` (for a `ROLLBACK` after the limit
    /// ran out: it must not be stopped too).
    public func withoutTimeLimit<T>(_ body: () throws -> T) rethrows -> T {
        let saved = interruptAt.pointee
        interruptAt.pointee = 0
        defer { interruptAt.pointee = saved }
        return try body()
    }

    func error(_ rc: Int32, _ sql: String?) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(rawHandle), message: String(cString: sqlite3_errmsg(rawHandle)), sql: sql)
    }

    /// Runs one or more statements without arguments (schema, pragmas).
    public func execute(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(rawHandle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? "error"
            sqlite3_free(err)
            throw SQLiteError(code: sqlite3_extended_errcode(rawHandle), message: msg, sql: sql)
        }
    }

    /// Runs one transaction-control statement without arguments (`BEGIN`, `COMMIT`, `ROLLBACK`,
    /// `SAVEPOINT`, `RELEASE`) from the prepared-statement cache. `execute` (`sqlite3_exec`) parses its
    /// text on every call: for the `BEGIN` and `COMMIT` around each read snapshot that was 2.5% of a
    /// feed page's CPU, and the writer runs two to four such statements per write.
    /// - Throws: `SQLiteError` as the statement fails (e.g. `SQLITE_BUSY`, or an I/O error on `COMMIT`).
    func control(_ sql: String) throws {
        try step(sql, []) { _ in false }
    }

    private func statement(_ sql: String) throws -> SQLiteStatementHandle {
        if let s = cache[sql] { return s }
        var stmt: SQLiteStatementHandle?
        let rc = sqlite3_prepare_v3(rawHandle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql) }
        if cache.count > 512 {
            for s in cache.values { sqlite3_finalize(s) }
            cache.removeAll()
        }
        cache[sql] = stmt
        return stmt
    }

    private func bind(_ stmt: SQLiteStatementHandle, _ args: [SQLValue]) {
        for (i, a) in args.enumerated() {
            let idx = Int32(i + 1)
            switch a {
            case .null: sqlite3_bind_null(stmt, idx)
            case .integer(let v): sqlite3_bind_int64(stmt, idx, v)
            case .real(let v): sqlite3_bind_double(stmt, idx, v)
            case .text(let s): sqlite3_bind_text(stmt, idx, s, -1, SQLITE_TRANSIENT_PTR)
            case .blob(let b): b.withUnsafeBytes { _ = sqlite3_bind_blob(stmt, idx, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT_PTR) }
            }
        }
    }

    /// Runs a statement, calling `row` for each result row with the column values.
    /// - Throws: `SQLiteError`; rethrows what `row` throws.
    public func forEachRow(_ sql: String, _ args: [SQLValue] = [], _ row: ([SQLValue]) throws -> Void) throws {
        try forEachRow(sql, args, until: { try row($0); return false })
    }

    /// Runs a statement, calling `row` for each result row as SQLite holds it (no copy): for reading
    /// columns straight into a response.
    /// - Throws: `SQLiteError`; rethrows what `row` throws.
    public func forEachRawRow(_ sql: String, _ args: [SQLValue] = [], _ row: (SQLiteRow) throws -> Void) throws {
        try forEachRawRow(sql, args, until: { try row($0); return false })
    }

    /// Like `forEachRawRow`, stopping (without reading further) once `stop` returns true.
    public func forEachRawRow(_ sql: String, _ args: [SQLValue] = [], until stop: (SQLiteRow) throws -> Bool) throws {
        try step(sql, args) { stmt in try stop(SQLiteRow(stmt: stmt)) }
    }

    /// Prepares (from the cache), binds and steps `sql`, calling `row` on each result row until it
    /// returns true; the statement is reset after.
    private func step(_ sql: String, _ args: [SQLValue], _ row: (SQLiteStatementHandle) throws -> Bool) throws {
        let stmt = try statement(sql)
        defer { sqlite3_reset(stmt); sqlite3_clear_bindings(stmt) }
        bind(stmt, args)
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw error(rc, sql) }
            if try row(stmt) { break }
        }
    }

    /// Like `forEachRow`, stopping (without reading further) once `stop` returns true.
    public func forEachRow(_ sql: String, _ args: [SQLValue] = [], until stop: ([SQLValue]) throws -> Bool) throws {
        try step(sql, args) { stmt in
            let n = sqlite3_column_count(stmt)
            var values: [SQLValue] = []
            values.reserveCapacity(Int(n))
            for c in 0..<n {
                switch sqlite3_column_type(stmt, c) {
                case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(stmt, c)))
                case SQLITE_FLOAT: values.append(.real(sqlite3_column_double(stmt, c)))
                case SQLITE_TEXT: values.append(.text(String(cString: sqlite3_column_text(stmt, c))))
                case SQLITE_BLOB:
                    let len = Int(sqlite3_column_bytes(stmt, c))
                    if let p = sqlite3_column_blob(stmt, c), len > 0 {
                        values.append(.blob(Array(UnsafeRawBufferPointer(start: p, count: len))))
                    } else { values.append(.blob([])) }
                default: values.append(.null)
                }
            }
            return try stop(values)
        }
    }

    /// All result rows.
    public func query(_ sql: String, _ args: [SQLValue] = []) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try forEachRow(sql, args) { rows.append($0) }
        return rows
    }

    /// Runs a statement that returns no rows. - Returns: the number of rows changed.
    @discardableResult
    public func run(_ sql: String, _ args: [SQLValue] = []) throws -> Int {
        try forEachRow(sql, args) { _ in }
        return Int(sqlite3_changes(rawHandle))
    }

    /// Whether a transaction is open on this connection (SQLite is out of autocommit mode).
    public var isInTransaction: Bool { sqlite3_get_autocommit(rawHandle) == 0 }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws; inside a transaction
    /// already open (every `SQLiteDatabase.write` is), inside a savepoint instead (`savepoint(_:)`).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try savepoint(body) }
        try control("BEGIN IMMEDIATE")
        do {
            let r = try body()
            try control("COMMIT")
            return r
        } catch {
            try? control("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` inside `SAVEPOINT … RELEASE` (nested in the open transaction, or starting one),
    /// rolling back to the savepoint if it throws; the enclosing transaction goes on.
    /// - Source: https://sqlite.org/lang_savepoint.html
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        try control("SAVEPOINT photowall_nested")
        do {
            let r = try body()
            try control("RELEASE photowall_nested")
            return r
        } catch {
            // An error that ended the whole transaction left no savepoint to return to.
            if isInTransaction {
                try? control("ROLLBACK TO photowall_nested")
                try? control("RELEASE photowall_nested")
            }
            throw error
        }
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// SQLite's progress handler (a global function: C calls it with the connection's `interruptAt`
/// as context, on the thread stepping the statement): non-zero stops the statement with `SQLITE_INTERRUPT`.
private func photowallProgressHandler(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let at = context?.assumingMemoryBound(to: UInt64.self).pointee, at != 0 else { return 0 }
    return monotonicNanoseconds() >= at ? 1 : 0
}
