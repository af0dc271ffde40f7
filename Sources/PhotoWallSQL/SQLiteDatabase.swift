import PhotoWallCore
import Synchronization
internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A SQLite database in WAL mode: one writer thread with the writer connection, and one reader
/// connection per thread.
///
/// Writes run on the writer thread (`SQLiteWriter`), one at a time, the writes queued meanwhile
/// together in one transaction, each in its own savepoint (SQLite allows one writer); the calling
/// thread waits. Reads run in parallel, each thread on its own connection (kept in thread-local
/// storage, so the read path takes no lock), and see the last committed state.
///
/// Group commit: the writer commits with `synchronous=NORMAL` (the commit's WAL frames are written,
/// not synced) and `write(_:)` returns only once an `fdatasync` of the WAL that began after that
/// commit has finished (`WALGroupSync`). The sync runs on the calling threads, not the writer's, so
/// the batches that commit during one sync share the next: one `fdatasync` per group instead of one
/// per commit. Every value `write(_:)` returns is durable across a `kill -9` or power loss, as
/// with `synchronous=FULL`; the WAL is append-only, so a synced commit also makes every earlier one
/// durable. Unlike `FULL`, another thread's read may see a commit during its sync (before its
/// writer has been answered); a crash then loses it, and its writer was never told it succeeded.
/// - Source: https://sqlite.org/wal.html, https://sqlite.org/pragma.html#pragma_synchronous
///   ("WAL mode … NORMAL … no sync operations occur during most transactions"); GRDB's
///   `DatabasePool`; the group commit of PostgreSQL's `commit_delay` / MySQL's binlog.
public final class SQLiteDatabase: Sendable {
    public let path: String
    private let writer: SQLiteWriter
    private let walSync: WALGroupSync
    /// pthread key whose per-thread value is a retained `SQLiteConnection` for reading,
    /// released by `releaseThreadConnection` when the thread exits.
    private let readerKey: pthread_key_t
    /// Called after every write's transaction has ended (`afterEachWrite`).
    private let writeObservers: WriteObservers
    /// How long one `read` (or `readSnapshot`) may run, all its statements together; nil = no limit.
    /// Past it, the statement running fails with `SQLiteError` `isInterrupt` (SQLITE_INTERRUPT).
    public let readTimeLimit: Duration?

    /// Opens the database, switching it to WAL.
    /// - Throws: `SQLiteError` when the file can't be opened or is not a database.
    /// - Parameter readTimeLimit: how long one `read` may run (nil: no limit), so that a costly query
    ///   (an unindexed `$regex` over a big table, say) can't hold a thread and a core for long.
    /// - Parameter syncFile: the call that makes the WAL durable (`fdatasync`); tests pass one that
    ///   records what was committed when each sync began.
    public init(path: String, readTimeLimit: Duration? = nil,
                syncFile: @escaping @Sendable (Int32) -> Int32 = { syncFileData($0) }) throws {
        self.path = path
        self.readTimeLimit = readTimeLimit
        let w = try SQLiteConnection(path: path)
        try w.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        walSync = WALGroupSync(walPath: path + "-wal", syncFile: syncFile)
        let observers = WriteObservers()
        writeObservers = observers
        writer = SQLiteWriter(connection: w, walSync: walSync, ended: { observers.callAll() })
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, releaseThreadConnection) == 0, "pthread_key_create failed")
        readerKey = key
    }

    deinit {
        writer.stop()
        // Connections still held by live threads are released when those threads exit.
        pthread_key_delete(readerKey)
    }

    /// Runs `body` with the writer connection on the writer thread, inside a savepoint of a
    /// transaction it may share with the writes queued beside it, and returns once that transaction
    /// has committed and is durable (a WAL sync shared with the writers that committed meanwhile).
    /// When `body` throws, its changes are rolled back (the others' are not) and the error rethrown.
    /// `body` must not end the transaction itself (`COMMIT`, `ROLLBACK`, `BEGIN`); `conn.transaction`
    /// inside it is a savepoint. It must not write through this database again (that would wait for itself).
    /// - Throws: what `body` throws; what ended its transaction after `body` returned (a failed
    ///   `COMMIT`, or another write's error that rolled the whole transaction back: the change is not
    ///   stored); `SQLiteError` (`SQLITE_IOERR_FSYNC`) when the sync fails, in which case the commit
    ///   may or may not survive a crash, and the caller must not acknowledge it.
    public func write<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try write(durable: true, body)
    }

    /// `write(_:)`; with `durable: false` it returns without waiting for the WAL sync: the database
    /// stays consistent, a crash may lose the commit, and the next durable commit makes it durable
    /// too (the WAL is append-only). For state a crash makes moot anyway, such as a lease held by
    /// the process that crashed.
    /// - Parameter durable: true for an ordinary `write(_:)`.
    public func write<T: Sendable>(durable: Bool, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try perform(alone: false, durable: durable, body)
    }

    /// Runs `body` with the writer connection outside any transaction, after the writes queued before
    /// it and before those queued after: for statements SQLite refuses inside a transaction
    /// (`PRAGMA wal_checkpoint`, `VACUUM`). Each statement commits on its own; durable when it returns.
    /// - Throws: what `body` throws; `SQLiteError` (`SQLITE_IOERR_FSYNC`) as `write(_:)`.
    public func writeAlone<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try perform(alone: true, durable: true, body)
    }

    /// Runs `body` in one write transaction, durable when it returns (`write(_:)`: the transaction is
    /// the savepoint `write` runs it in).
    public func writeTransaction<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try write { conn in try body(conn) }
    }

    /// Calls `observer` each time writes through this database (`write`, `writeAlone`,
    /// `writeTransaction`) have ended: on the writer thread, right after their transaction's `COMMIT`
    /// (or `ROLLBACK`), before their callers resume. Every write of the process's database goes through
    /// the writer thread (its connection is reachable no other way), so a cache of what reads found can
    /// forget it here and never outlive a change made in this process. Writes by another process are
    /// not seen. `observer` must be quick and must not write through this database.
    public func afterEachWrite(_ observer: @escaping @Sendable () -> Void) {
        writeObservers.add(observer)
    }

    /// Commits made so far (a batch of writes is one), for tests and statistics.
    public var commitCount: UInt64 { walSync.committedSoFar }

    /// Writes waiting for the writer thread (not yet in a batch), for tests and statistics.
    public var queuedWriteCount: Int { writer.queuedCount }

    private func perform<T: Sendable>(alone: Bool, durable: Bool, _ body: (SQLiteConnection) throws -> T) throws -> T {
        var outcome: Result<T, any Error>?
        // `body` runs on the writer thread while this thread waits in `perform`; the writer releases
        // it before this thread resumes, so it does not outlive the call.
        let commit = try withoutActuallyEscaping(body) { body in
            try writer.perform(WriteJob(alone: alone) { conn in
                do {
                    outcome = .success(try body(conn))
                    return nil
                } catch {
                    outcome = .failure(error)
                    return error
                }
            })
        }
        guard let outcome else { throw SQLiteError(code: SQLITE_MISUSE, message: "the write did not run", sql: nil) }
        let value = try outcome.get()
        if durable { try walSync.waitUntilDurable(commit) }
        return value
    }

    /// How much of the file a reader connection maps (`PRAGMA mmap_size`; SQLite caps it at its
    /// build's `SQLITE_MAX_MMAP_SIZE`, 2 GiB on Debian) while the database is mostly read. Reads then come
    /// straight from the kernel's page cache instead of a `pread` and a copy into each connection's own
    /// 2 MiB page cache: an index probe touches a few pages, and with one reader per thread those small
    /// caches rarely hold them (the feed's 500-friend probe on a 1M-image wall: 10 ms → 1.5 ms). The
    /// mapped pages are the kernel's shared file pages (they count in RSS only once touched). The
    /// process owns its database file: nothing else truncates it under the mapping (SQLite's one
    /// caveat for mmap). While the database changes between most reads, a reader maps nothing
    /// (`ReaderMapping`).
    /// - Source: https://sqlite.org/mmap.html
    public static let readerMmapBytes: Int64 = 1 << 40

    /// Runs `body` with this thread's reader connection. Each statement sees one committed
    /// snapshot; run `BEGIN`/`COMMIT` inside `body` when several statements must share one.
    /// - Throws: what `body` throws; `SQLiteError` with `isInterrupt` once `readTimeLimit` (counted from
    ///   the outermost `read` on this thread) has run out.
    public func read<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let conn: SQLiteConnection
        if let raw = pthread_getspecific(readerKey) {
            conn = Unmanaged<SQLiteConnection>.fromOpaque(raw).takeUnretainedValue()
        } else {
            conn = try SQLiteConnection(path: path)
            try conn.execute("PRAGMA query_only=ON; PRAGMA mmap_size=\(Self.readerMmapBytes);")
            // Retained for the thread's lifetime; released by `releaseThreadConnection`.
            pthread_setspecific(readerKey, Unmanaged.passRetained(conn).toOpaque())
        }
        if !conn.isInTransaction { try conn.readerMapping.adapt(conn) }
        guard let readTimeLimit else { return try body(conn) }
        return try conn.withTimeLimit(readTimeLimit) { try body(conn) }
    }

    /// Runs `body` inside one read transaction on this thread's reader connection: every statement
    /// run through `read` on this thread until `body` returns (however deeply nested, by whichever
    /// store) sees the same committed snapshot, and the read lock is taken and released once
    /// instead of once per statement. Nested calls join the transaction already open.
    /// - Throws: what `body` throws; `SQLiteError` when the transaction can't begin.
    /// - Source: https://sqlite.org/lang_transaction.html (a deferred transaction's first read
    ///   starts the snapshot), https://sqlite.org/isolation.html.
    public func readSnapshot<T: Sendable>(_ body: () throws -> T) throws -> T {
        try read { conn in
            if conn.isInTransaction { return try body() }
            try conn.control("BEGIN")
            do {
                let value = try body()
                try conn.control("COMMIT")
                return value
            } catch {
                // Not stopped by the time limit that may have stopped `body`: the transaction must end.
                conn.withoutTimeLimit { try? conn.control("ROLLBACK") }
                throw error
            }
        }
    }
}

/// Whether a reader connection maps the database file, decided from how often it changes between
/// the connection's reads.
///
/// In WAL mode a read transaction that finds the database changed since the connection's last one
/// drops the connection's page cache and, with mmap on, unmaps the whole mapping (the pager's
/// `sqlite3OsUnfetch(fd, 0, 0)`); the next pages are faulted in again and the next change unmaps them
/// again, each `munmap` with a TLB shootdown on every core. Under steady writes (the 64-client mix
/// of comments and uploads) that was 11% of the server's CPU (munmap 5%, page faults 6%), more than
/// the `pread`s that replace it; on a database that stays unchanged the mapping is kept and wins.
/// So each reader keeps a score of its recent reads that found a change (one up per read that did,
/// one down per read that didn't, between 0 and `scoreLimit`): at `unmapAt` it stops mapping
/// (`PRAGMA mmap_size=0`), at `mapAt` it maps again. The change is seen through SQLite's data version
/// (`SQLITE_FCNTL_DATA_VERSION`, which counts the changes the connection's reads found, by this process or
/// another), read before each read that starts a transaction, so one read late. Only what a read
/// costs depends on it: both ways read the same committed pages.
/// - Source: https://sqlite.org/mmap.html, https://sqlite.org/c3ref/c_fcntl_begin_atomic_write.html
///   (SQLITE_FCNTL_DATA_VERSION).
struct ReaderMapping {
    static let scoreLimit = 8
    static let unmapAt = 6
    static let mapAt = 1
    /// The connection's data version at its previous read.
    private var lastVersion: UInt32 = 0
    private var score = 0
    /// Whether the connection maps the file (`SQLiteDatabase.readerMmapBytes`) or not (0).
    private(set) var mapped = true

    /// Called before a read that starts a transaction on `conn` (outside any): counts whether the
    /// previous read found a change, and switches the mapping when the score crosses its limit.
    /// - Throws: `SQLiteError` when the pragma fails.
    mutating func adapt(_ conn: SQLiteConnection) throws {
        var version: UInt32 = 0
        guard sqlite3_file_control(conn.rawHandle, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else { return }
        let changed = version != lastVersion
        lastVersion = version
        score = changed ? min(score + 1, Self.scoreLimit) : max(score - 1, 0)
        if mapped, score >= Self.unmapAt {
            try conn.execute("PRAGMA mmap_size=0")
            mapped = false
        } else if !mapped, score <= Self.mapAt {
            try conn.execute("PRAGMA mmap_size=\(SQLiteDatabase.readerMmapBytes)")
            mapped = true
        }
    }
}

/// pthread key destructor: releases a thread's reader connection when the thread exits.
private func releaseThreadConnection(_ raw: UnsafeMutableRawPointer?) {
    guard let raw else { return }
    Unmanaged<SQLiteConnection>.fromOpaque(raw).release()
}

/// The group commit of `SQLiteDatabase`: numbers the writer's commits and makes them durable with
/// one `fdatasync` of the WAL per group.
///
/// A writer that needs commit `n` durable waits while another thread syncs; when no sync is running
/// it becomes the one that syncs, covering every commit numbered so far (all of whose WAL frames
/// were written before their numbers were taken, on the writer thread). The WAL is reopened when
/// its file is replaced (it stays while the writer connection is open, so in practice never).
///
/// `@unchecked Sendable`: `committedCount`, `syncedCount`, `failed` and `syncing` are read and
/// written only with `lock` held; `fd` only by the one thread that set `syncing` (the hand-over goes
/// through `lock`).
final class WALGroupSync: @unchecked Sendable {
    private let walPath: String
    private let syncFile: @Sendable (Int32) -> Int32
    /// Guards the counts and flags; broadcast when a sync ends.
    private let lock = ConditionLock()
    private var committedCount: UInt64 = 0
    private var syncedCount: UInt64 = 0
    /// Set once a sync fails: no commit is reported durable after that. A failed `fdatasync` may leave
    /// the unwritten pages marked clean (so a retry proves nothing), and a lost WAL frame makes SQLite
    /// drop every later one at recovery (the frame checksums are chained), as PostgreSQL's PANIC on
    /// a failed fsync assumes. Writes then fail until the process restarts.
    private var failed = false
    private var syncing = false
    private var fd: Int32 = -1

    init(walPath: String, syncFile: @escaping @Sendable (Int32) -> Int32) {
        self.walPath = walPath
        self.syncFile = syncFile
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Commits numbered so far.
    var committedSoFar: UInt64 { lock.withLock { committedCount } }

    /// Numbers a commit just made (call on the writer thread, after the commit).
    /// - Returns: the number to pass to `waitUntilDurable`.
    func committed() -> UInt64 {
        lock.withLock {
            committedCount += 1
            return committedCount
        }
    }

    /// Returns once an `fdatasync` of the WAL that began after commit `commit` has succeeded.
    /// - Throws: `SQLiteError` 4874 (`SQLITE_IOERR_FSYNC`) once any sync of the WAL has failed.
    /// The wait and the sync are a `WorkerPool.blocking` region.
    func waitUntilDurable(_ commit: UInt64) throws {
        try WorkerPool.blocking { () throws in try waitUntilDurableBlocking(commit) }
    }

    private func waitUntilDurableBlocking(_ commit: UInt64) throws {
        try lock.withLock {
            while syncedCount < commit {
                guard !failed else {
                    throw SQLiteError(code: 4874, message: "fdatasync of the WAL failed", sql: nil)
                }
                if syncing {
                    lock.wait()
                    continue
                }
                syncing = true
                let target = committedCount
                let failure = lock.withoutLock { syncWAL() }
                syncing = false
                if failure == 0 { syncedCount = max(syncedCount, target) } else { failed = true }
                lock.broadcast()
            }
        }
    }

    /// Syncs the WAL file, opening it (again, if it was replaced) first. A missing WAL holds no
    /// commit (SQLite removes it only after checkpointing it into the synced database).
    /// - Returns: 0, or the errno of the failed call.
    private func syncWAL() -> Int32 {
        var onDisk = stat()
        guard stat(walPath, &onDisk) == 0 else { return Glibc.errno == ENOENT ? 0 : Glibc.errno }
        var open = stat()
        if fd >= 0, fstat(fd, &open) != 0 || open.st_ino != onDisk.st_ino || open.st_dev != onDisk.st_dev {
            close(fd)
            fd = -1
        }
        if fd < 0 {
            fd = Glibc.open(walPath, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { return Glibc.errno }
        }
        return syncFile(fd) == 0 ? 0 : Glibc.errno
    }
}

/// The observers `SQLiteDatabase.afterEachWrite` adds, called by the writer thread.
final class WriteObservers: Sendable {
    private let list = Mutex<[@Sendable () -> Void]>([])

    func add(_ observer: @escaping @Sendable () -> Void) { list.withLock { $0.append(observer) } }

    func callAll() {
        for observer in list.withLock({ $0 }) { observer() }
    }
}
