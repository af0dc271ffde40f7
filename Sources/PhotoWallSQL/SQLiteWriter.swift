import Dispatch
import PhotoWallCore
internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// The writer of a `SQLiteDatabase`: one thread that owns the writer connection and runs every write
/// handed to it, the writes queued meanwhile together in one transaction (a batch).
///
/// Each write runs inside its own savepoint within the batch's `BEGIN IMMEDIATE … COMMIT` (a batch
/// of one needs none): a write that throws is rolled back to its savepoint alone, and the others of
/// its batch go on. One `COMMIT` then covers the batch, and `WALGroupSync` numbers it once.
///
/// Why: with one thread per request taking a lock around its own transaction, 64 clients' comments
/// and uploads kept the lock busy two thirds of the time (each commit writes every page it touched
/// to the WAL, and the index pages a burst of inserts shares were written once per insert), the
/// waiting threads queued behind it in turn (a lock hand-over and a wake-up per write), and the
/// SQLite auto-checkpoint ran inside whichever commit crossed its threshold while the others waited.
/// A batch writes a shared page once, hands over nothing, and crosses the checkpoint threshold less
/// often.
///
/// A write that fails in a way that ends the whole transaction (SQLite rolls back on some I/O and
/// full-disk errors, and on an `OR ROLLBACK` conflict) fails every write of its batch that ran
/// before it: their changes are gone too. A failed `COMMIT` fails every write of the batch. No
/// write is ever reported done unless its batch committed.
/// - Source: https://sqlite.org/lang_savepoint.html, https://sqlite.org/lang_transaction.html
///   ("Response To Errors Within A Transaction").
///
/// `@unchecked Sendable`: `pending` and `stopping` are read and written only with `lock` held; the
/// connection only by the writer thread (and by `SQLiteDatabase.init` before the thread starts).
final class SQLiteWriter: @unchecked Sendable {
    /// The most writes one transaction takes; later ones wait for the next.
    static let maxBatch = 64

    private let connection: SQLiteConnection
    private let walSync: WALGroupSync
    /// Guards `pending` and `stopping`; signalled when a job is queued or at `stop`.
    private let lock = ConditionLock()
    private var pending: [WriteJob] = []
    private var stopping = false
    private var thread = pthread_t()

    /// Called on the writer thread each time a batch's transaction (or a job run alone) has ended, before
    /// its jobs' callers are woken (`SQLiteDatabase.afterEachWrite`).
    private let ended: @Sendable () -> Void

    /// Starts the writer thread (`sqlite-writer`) on `connection`, which nothing else may use after.
    init(connection: SQLiteConnection, walSync: WALGroupSync, ended: @escaping @Sendable () -> Void) {
        self.connection = connection
        self.walSync = walSync
        self.ended = ended
        // The thread holds a +1 on the writer until its loop ends (`sqliteWriterMain`).
        let context = Unmanaged.passRetained(self).toOpaque()
        precondition(pthread_create(&thread, nil, sqliteWriterMain, context) == 0, "pthread_create failed")
    }

    /// Writes queued and not yet taken by the writer thread.
    var queuedCount: Int { lock.withLock { pending.count } }

    /// Runs `job` on the writer thread and waits until its batch has ended.
    /// - Returns: the commit number of its batch (for `WALGroupSync.waitUntilDurable`), or 0 when the
    ///   job's own body threw (what it threw is the job's to report).
    /// - Throws: the error that ended its batch after its body returned (a failed `COMMIT`, or a later
    ///   write's error that rolled back the whole transaction); `SQLiteError` `SQLITE_MISUSE` once the
    ///   database is closing.
    func perform(_ job: WriteJob) throws -> UInt64 {
        let accepted = lock.withLock {
            guard !stopping else { return false }
            pending.append(job)
            lock.signal()
            return true
        }
        guard accepted else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closing", sql: nil) }
        // Keeps the caller's worker slot (not `WorkerPool.blocking`): the writer's work is this machine's
        // CPU, and a slot given back would only queue more writes behind it. The WAL's sync is waited
        // for in `waitUntilDurable`, which gives the slot back.
        job.finished.wait()
        if let failure = job.failure { throw failure }
        return job.commit
    }

    /// Runs the writes queued so far, then ends the thread (waiting for it). Call once.
    func stop() {
        lock.withLock {
            stopping = true
            lock.signal()
        }
        if pthread_equal(pthread_self(), thread) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// The writer thread's loop: a batch at a time until `stop`.
    fileprivate func run() {
        while let batch = nextBatch() {
            if batch.count == 1, batch[0].alone {
                runAlone(batch[0])
            } else {
                runBatch(batch)
            }
        }
    }

    /// The next batch: the longest run of queued jobs (up to `maxBatch`) that want a transaction, or
    /// one job that must run alone. Waits while nothing is queued. - Returns: nil once stopping with
    /// nothing left.
    private func nextBatch() -> [WriteJob]? {
        lock.withLock {
            while pending.isEmpty {
                if stopping { return nil }
                lock.wait()
            }
            if pending[0].alone { return [pending.removeFirst()] }
            let count = min(Self.maxBatch, pending.firstIndex(where: \.alone) ?? pending.count)
            let batch = Array(pending[0..<count])
            pending.removeFirst(count)
            return batch
        }
    }

    private func runAlone(_ job: WriteJob) {
        let thrown = job.runBody(connection)
        ended()
        finish(job, commit: thrown == nil ? walSync.committed() : 0)
    }

    private func runBatch(_ jobs: [WriteJob]) {
        // A write that is its batch's only one needs no savepoint (a failure rolls the transaction back),
        // which spares SQLite copying each page it changes into the savepoint's journal: a bulk load's
        // one big write changes many.
        let savepoints = jobs.count > 1
        // Jobs whose changes are in the open transaction, waiting for its COMMIT.
        var members: [WriteJob] = []
        var open = false
        for job in jobs {
            // Set when the body threw: the job reports its own error.
            var threwItself = false
            let run = { [connection] () throws in
                if let thrown = job.runBody(connection) {
                    threwItself = true
                    throw thrown
                }
            }
            do {
                if !open {
                    try connection.control("BEGIN IMMEDIATE")
                    open = true
                }
                if savepoints { try connection.savepoint(run) } else { try run() }
                members.append(job)
            } catch {
                if !savepoints, connection.isInTransaction { try? connection.control("ROLLBACK") }
                if !connection.isInTransaction {
                    // The transaction is gone: the earlier members' changes went with it, and the next
                    // job begins anew.
                    open = false
                    for m in members { finish(m, failure: error) }
                    members = []
                }
                finish(job, failure: threwItself ? nil : error)
            }
        }
        // `ended()` before the jobs' callers resume, whether the batch committed or not.
        guard open else { return ended() }
        do {
            try connection.control("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.control("ROLLBACK") }
            ended()
            for m in members { finish(m, failure: error) }
            return
        }
        ended()
        let commit = walSync.committed()
        for m in members { finish(m, commit: commit) }
    }

    /// Ends `job`'s wait. The job's body is released here, before its caller resumes (the caller's
    /// closure must not outlive its call).
    private func finish(_ job: WriteJob, commit: UInt64 = 0, failure: (any Error)? = nil) {
        job.commit = commit
        job.failure = failure
        job.release()
        job.finished.signal()
    }
}

/// The writer thread's entry (a global function: pthread calls it with the writer as context).
private func sqliteWriterMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let writer = Unmanaged<SQLiteWriter>.fromOpaque(context).takeRetainedValue()
    setCurrentThreadName("sqlite-writer")
    writer.run()
    return nil
}

/// One write waiting for the writer thread: its body, and how its batch ended.
///
/// `@unchecked Sendable`: the caller creates it and waits on `finished`; the writer thread runs and
/// releases `body`, then sets `commit` and `failure` before signalling `finished`, and the caller
/// reads them only after its wait (the semaphore orders the two threads' accesses).
final class WriteJob: @unchecked Sendable {
    /// Runs outside any transaction, alone (for statements SQLite refuses inside one).
    let alone: Bool
    /// Runs the caller's body; returns what it threw, or nil.
    private var body: ((SQLiteConnection) -> (any Error)?)?
    var commit: UInt64 = 0
    var failure: (any Error)?
    let finished = DispatchSemaphore(value: 0)

    init(alone: Bool, body: @escaping (SQLiteConnection) -> (any Error)?) {
        self.alone = alone
        self.body = body
    }

    /// Runs the body on the writer's connection. - Returns: what it threw, or nil.
    func runBody(_ connection: SQLiteConnection) -> (any Error)? {
        body?(connection)
    }

    func release() { body = nil }
}
