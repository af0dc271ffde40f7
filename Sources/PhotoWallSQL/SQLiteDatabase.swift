import Synchronization
import PhotoWallCore

/// A SQLite database in WAL mode: one writer connection and a pool of reader connections.
///
/// Writes are serialised through the writer's lock (SQLite allows one writer); reads run in parallel
/// on their own connections and see the last committed state. `synchronous=FULL` makes every
/// acknowledged commit durable across a `kill -9` or power loss.
/// - Source: https://sqlite.org/wal.html; GRDB's `DatabasePool`.
public final class SQLiteDatabase: Sendable {
    public let path: String
    private let writer: Mutex<SQLiteConnection>
    private let readers = Mutex<[SQLiteConnection]>([])

    /// Opens the database, switching it to WAL.
    /// - Throws: `SQLiteError` when the file can't be opened or is not a database.
    public init(path: String) throws {
        self.path = path
        let w = try SQLiteConnection(path: path)
        try w.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        writer = Mutex(w)
    }

    /// Runs `body` with the writer connection, serialised with every other writer.
    public func write<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { conn in try body(conn) }
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`).
    public func writeTransaction<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { conn in try conn.transaction { try body(conn) } }
    }

    /// Runs `body` with a reader connection inside a read transaction (a consistent snapshot).
    public func read<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let conn = try readers.withLock { $0.popLast() } ?? openReader()
        defer { readers.withLock { $0.append(conn) } }
        try conn.execute("BEGIN")
        defer { try? conn.execute("COMMIT") }
        return try body(conn)
    }

    private func openReader() throws -> SQLiteConnection {
        let c = try SQLiteConnection(path: path)
        try c.execute("PRAGMA query_only=ON;")
        return c
    }
}
