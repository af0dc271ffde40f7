internal import CLibPQ
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// A raw libpq connection (`PGconn *`).
typealias PGConnHandle = OpaquePointer

/// Rows of one result in text format, copied out of the `PGresult` (which is cleared at once).
/// A nil cell is SQL NULL.
public struct PostgresRows: Sendable {
    public var rows: [[String?]]
    /// `PQcmdTuples`: rows inserted, updated or deleted (0 for other statements).
    public var affected: Int
    public var first: [String?]? { rows.first }
}

/// One libpq connection with a cache of server-side prepared statements.
///
/// Parameters are sent in text format and typed in the SQL (`$1::jsonb`, `$2::bigint`). Each
/// distinct SQL text is prepared once per connection (`PQprepare`, named `s<n>`) and run with
/// `PQexecPrepared`.
///
/// `@unchecked Sendable`: a connection is only used by the thread that checked it out of
/// `PostgresPool` (whose `Mutex` hands each connection to one borrower at a time), so its
/// mutable statement cache is never touched concurrently.
/// - Source: PostgreSQL 15 manual §34.3 (libpq command execution).
public final class PostgresConnection: @unchecked Sendable {
    let rawHandle: PGConnHandle
    private var statements: [String: String] = [:]
    /// Prepared statements kept per connection before they are all deallocated.
    static let maxPreparedStatements = 512
    /// True after a failure that may have left the session unusable; the pool drops it.
    private(set) var isBroken = false
    /// Where each round trip to the server is counted (the pool's); nil: not counted.
    let counter: RoundTripCounter?
    /// The statement `sendWithoutWaiting` sent whose answer is still unread, if any.
    private var unanswered: String?
    /// Answers read only when the next command came (`sendWithoutWaiting`), for diagnostics and tests.
    private(set) var deferredAnswers = 0

    /// Connects with a libpq connection string or URI (`postgres://user@host:port/db?...`).
    /// - Parameter counter: counts this connection's round trips (`PostgresPool.roundTrips`).
    /// - Throws: `PostgresError` (no SQLSTATE) when the server can't be reached or refuses.
    init(conninfo: String, counter: RoundTripCounter?) throws(PostgresError) {
        self.counter = counter
        guard let conn = WorkerPool.blocking({ PQconnectdb(conninfo) }) else {
            throw PostgresError(sqlState: "", message: "libpq could not allocate a connection", sql: nil)
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(conn)).trimmingTrailingWhitespace()
            PQfinish(conn)
            throw PostgresError(sqlState: "", message: message, sql: nil)
        }
        rawHandle = conn
    }

    /// Connects with a libpq connection string or URI (`postgres://user@host:port/db?...`).
    /// - Throws: `PostgresError` (no SQLSTATE) when the server can't be reached or refuses.
    public convenience init(conninfo: String) throws(PostgresError) { try self.init(conninfo: conninfo, counter: nil) }

    deinit { PQfinish(rawHandle) }

    /// Runs one or more statements without parameters (DDL, `BEGIN`, `SET`), via `PQexec`.
    /// - Throws: `PostgresError` with the server's SQLSTATE.
    @discardableResult
    public func execute(_ sql: String) throws(PostgresError) -> PostgresRows {
        try readUnanswered()
        counter?.add()
        let result = WorkerPool.blocking { PQexec(rawHandle, sql) }
        return try consume(result, sql: sql)
    }

    /// Runs one statement with text parameters through a per-connection prepared statement.
    /// - Parameters:
    ///   - sql: a single statement with `$1…$n` placeholders (cast them in the SQL when the type
    ///     can't be inferred, e.g. `$1::jsonb`).
    ///   - params: one value per placeholder; nil binds SQL NULL.
    /// - Returns: the rows (text format) and the affected-row count.
    /// - Throws: `PostgresError` carrying `sql` but not `params`.
    @discardableResult
    public func query(_ sql: String, _ params: [String?] = []) throws(PostgresError) -> PostgresRows {
        try readUnanswered()
        let name = try prepared(sql, parameterCount: params.count)
        // PQexecPrepared wants `const char * const *`: keep the C strings alive for the call
        // (notes §7: `[UnsafePointer<CChar>?]`, strdup'ed and freed afterwards).
        let cStrings: [UnsafeMutablePointer<CChar>?] = params.map { $0.flatMap { strdup($0) } }
        defer { for p in cStrings { free(p) } }
        let pointers: [UnsafePointer<CChar>?] = cStrings.map { $0.map { UnsafePointer($0) } }
        counter?.add()
        // A round trip: a `WorkerPool.blocking` region, as every wait on the server here.
        let result = pointers.withUnsafeBufferPointer { buf in
            WorkerPool.blocking { PQexecPrepared(rawHandle, name, Int32(params.count), buf.baseAddress, nil, nil, 0) }
        }
        return try consume(result, sql: sql)
    }

    /// Sends `sql` (statements without parameters) and returns without waiting for the answer, which
    /// the next command on this connection reads first (and throws, should it be an error). For a
    /// statement whose outcome the caller needn't wait for: the `COMMIT` of a read-only transaction,
    /// whose round trip then overlaps the caller's own work instead of delaying it.
    /// - Throws: `PostgresError` when the statement can't be sent (the connection is then broken),
    ///   or the error of an earlier unanswered statement.
    public func sendWithoutWaiting(_ sql: String) throws(PostgresError) {
        try readUnanswered()
        counter?.add()
        guard PQsendQuery(rawHandle, sql) == 1 else {
            isBroken = true
            throw PostgresError(sqlState: "", message: String(cString: PQerrorMessage(rawHandle)).trimmingTrailingWhitespace(), sql: sql)
        }
        unanswered = sql
    }

    /// Reads (and checks) the answer of the statement `sendWithoutWaiting` sent, if any.
    private func readUnanswered() throws(PostgresError) {
        guard let sql = unanswered else { return }
        unanswered = nil
        deferredAnswers += 1
        var failure: PostgresError?
        while let result = WorkerPool.blocking({ PQgetResult(rawHandle) }) {
            do { _ = try consume(result, sql: sql) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT`, or `ROLLBACK` when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if !isBroken { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    private func prepared(_ sql: String, parameterCount: Int) throws(PostgresError) -> String {
        if let name = statements[sql] { return name }
        try readUnanswered()
        if statements.count >= Self.maxPreparedStatements {
            // Many query shapes (one per `$in` length and predicate tree): start over rather than grow without bound.
            try execute("DEALLOCATE ALL")
            statements.removeAll()
        }
        let name = "s\(statements.count)"
        counter?.add()
        let result = WorkerPool.blocking { PQprepare(rawHandle, name, sql, Int32(parameterCount), nil) }
        _ = try consume(result, sql: sql)
        statements[sql] = name
        return name
    }

    /// Copies a result out and clears it, or turns its error into `PostgresError`.
    private func consume(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresRows {
        guard let result else {
            isBroken = true
            throw PostgresError(sqlState: "", message: String(cString: PQerrorMessage(rawHandle)).trimmingTrailingWhitespace(), sql: sql)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            break
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let message = primary ?? String(cString: PQresultErrorMessage(result)).trimmingTrailingWhitespace()
            let error = PostgresError(sqlState: state, message: message, sql: sql)
            if error.isConnectionFailure || PQstatus(rawHandle) != CONNECTION_OK { isBroken = true }
            throw error
        }
        let rowCount = Int(PQntuples(result)), columnCount = Int(PQnfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for r in 0..<Int32(rowCount) {
            var row: [String?] = []
            row.reserveCapacity(columnCount)
            for c in 0..<Int32(columnCount) {
                if PQgetisnull(result, r, c) == 1 { row.append(nil) } else { row.append(String(cString: PQgetvalue(result, r, c))) }
            }
            rows.append(row)
        }
        let affected = PQcmdTuples(result).map { Int(String(cString: $0)) ?? 0 } ?? 0
        return PostgresRows(rows: rows, affected: affected)
    }
}

extension String {
    func trimmingTrailingWhitespace() -> String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
