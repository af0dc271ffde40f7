import Synchronization
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// A SQLite database in WAL mode: one writer connection and one reader connection per thread.
///
/// Writes are serialised through the writer's lock (SQLite allows one writer); reads run in
/// parallel, each thread on its own connection (kept in thread-local storage, so the read path
/// takes no lock), and see the last committed state. `synchronous=FULL` makes every acknowledged
/// commit durable across a `kill -9` or power loss.
/// - Source: https://sqlite.org/wal.html; GRDB's `DatabasePool`.
public final class SQLiteDatabase: Sendable {
    public let path: String
    private let writer: Mutex<SQLiteConnection>
    /// pthread key whose per-thread value is a retained `SQLiteConnection` for reading,
    /// released by `releaseThreadConnection` when the thread exits.
    private let readerKey: pthread_key_t

    /// Opens the database, switching it to WAL.
    /// - Throws: `SQLiteError` when the file can't be opened or is not a database.
    public init(path: String) throws {
        self.path = path
        let w = try SQLiteConnection(path: path)
        try w.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        writer = Mutex(w)
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, releaseThreadConnection) == 0, "pthread_key_create failed")
        readerKey = key
    }

    deinit {
        // Connections still held by live threads are released when those threads exit.
        pthread_key_delete(readerKey)
    }

    /// Runs `body` with the writer connection, serialised with every other writer.
    public func write<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { conn in try body(conn) }
    }

    /// `write(_:)` whose commits need not be durable when it returns: they run with
    /// `synchronous=NORMAL` (no `fsync` of the WAL; the database stays consistent, and a crash may
    /// lose them), and the next durable commit makes them durable too (the WAL is append-only). For
    /// state a crash makes moot anyway, such as a lease held by the process that crashed.
    /// - Parameter durable: true for an ordinary `write(_:)`.
    public func write<T: Sendable>(durable: Bool, _ body: (SQLiteConnection) throws -> T) throws -> T {
        guard !durable else { return try write(body) }
        return try writer.withLock { conn in
            try conn.execute("PRAGMA synchronous=NORMAL;")
            // Setting the flag back only changes the connection's setting (no I/O, no lock): it can't fail.
            defer { try? conn.execute("PRAGMA synchronous=FULL;") }
            return try body(conn)
        }
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`).
    public func writeTransaction<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { conn in try conn.transaction { try body(conn) } }
    }

    /// How much of the file a reader connection maps (`PRAGMA mmap_size`; SQLite caps it at its
    /// build's `SQLITE_MAX_MMAP_SIZE`, 2 GiB on Debian). Reads then come straight from the kernel's
    /// page cache instead of a `pread` and a copy into each connection's own 2 MiB page cache: an
    /// index probe touches a few pages, and with one reader per thread those small caches rarely hold
    /// them (the feed's 500-friend probe on a 1M-image wall: 10 ms → 1.5 ms). The mapped pages are
    /// the kernel's shared file pages (they count in RSS only once touched). The process owns its
    /// database file: nothing else truncates it under the mapping (SQLite's one caveat for mmap).
    /// - Source: https://sqlite.org/mmap.html
    public static let readerMmapBytes: Int64 = 1 << 40

    /// Runs `body` with this thread's reader connection. Each statement sees one committed
    /// snapshot; run `BEGIN`/`COMMIT` inside `body` when several statements must share one.
    public func read<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if let raw = pthread_getspecific(readerKey) {
            return try body(Unmanaged<SQLiteConnection>.fromOpaque(raw).takeUnretainedValue())
        }
        let conn = try SQLiteConnection(path: path)
        try conn.execute("PRAGMA query_only=ON; PRAGMA mmap_size=\(Self.readerMmapBytes);")
        // Retained for the thread's lifetime; released by `releaseThreadConnection`.
        pthread_setspecific(readerKey, Unmanaged.passRetained(conn).toOpaque())
        return try body(conn)
    }
}

/// pthread key destructor: releases a thread's reader connection when the thread exits.
private func releaseThreadConnection(_ raw: UnsafeMutableRawPointer?) {
    guard let raw else { return }
    Unmanaged<SQLiteConnection>.fromOpaque(raw).release()
}
