import Foundation
import Synchronization
import Testing
import PhotoWallSQL

/// `SQLiteDatabase`'s writer thread: the writes queued while one runs commit together in one
/// transaction, each in its own savepoint, so one failing write is rolled back alone, and no write
/// is reported done unless its transaction committed.
@Suite struct WriteBatchTests {
    let db: SQLiteDatabase

    init() throws {
        db = try SQLiteDatabase(path: try ReadTimeLimitTests.temporaryPath())
        try db.write { try $0.execute("CREATE TABLE t(id INTEGER PRIMARY KEY)") }
    }

    /// The ids stored, as a reader sees them.
    func storedIds() throws -> [Int64] {
        try db.read { try $0.query("SELECT id FROM t ORDER BY id").compactMap { $0[0].integer } }
    }

    /// Holds the writer thread inside a write (inserting 0) while `writes` are queued behind it, one
    /// thread each, then lets it go. - Returns: each write's outcome, in the order of `writes`.
    func queuedBehindARunningWrite(_ writes: [@Sendable (SQLiteDatabase) throws -> Void]) throws -> [Result<Void, any Error>] {
        let started = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        let db = db
        let first = Thread {
            try? db.write { conn in
                try conn.run("INSERT INTO t(id) VALUES (0)")
                started.signal()
                gate.wait()
            }
        }
        first.start()
        started.wait()
        let outcomes = Mutex<[Int: Result<Void, any Error>]>([:])
        let group = DispatchGroup()
        for (i, write) in writes.enumerated() {
            // One at a time, so the queue keeps the order of `writes`.
            let queued = db.queuedWriteCount
            // A thread each (the dispatch pool adds a thread only about once a second while its threads wait).
            group.enter()
            Thread {
                let outcome = Result { try write(db) }
                outcomes.withLock { $0[i] = outcome }
                group.leave()
            }.start()
            while db.queuedWriteCount == queued { usleep(1_000) }
        }
        gate.signal()
        group.wait()
        return outcomes.withLock { o in writes.indices.map { o[$0]! } }
    }

    struct ChangedMyMind: Error {}

    static func insert(_ id: Int64) -> @Sendable (SQLiteDatabase) throws -> Void {
        { db in _ = try db.write { try $0.run("INSERT INTO t(id) VALUES (?)", [.integer(id)]) } }
    }

    @Test func writesQueuedBehindARunningOneCommitTogether() throws {
        let before = db.commitCount
        let outcomes = try queuedBehindARunningWrite((1...10).map { Self.insert($0) })
        #expect(outcomes.allSatisfy { (try? $0.get()) != nil })
        #expect(try storedIds() == Array(0...10))
        // The running write's commit, then one for the ten queued behind it (one each before the writer thread).
        #expect(db.commitCount == before + 2)
    }

    @Test func aFailingWriteIsRolledBackAloneAndTheOthersOfItsBatchCommit() throws {
        let outcomes = try queuedBehindARunningWrite([
            Self.insert(1),
            // Inserts 5, then fails on the duplicate 0: its 5 goes, nobody else's row does.
            { db in _ = try db.write { conn in
                try conn.run("INSERT INTO t(id) VALUES (5)")
                try conn.run("INSERT INTO t(id) VALUES (0)")
            } },
            // A transaction inside a write is a savepoint: its rollback leaves the write's first row.
            { db in _ = try db.write { conn in
                try conn.run("INSERT INTO t(id) VALUES (2)")
                _ = try? conn.transaction {
                    try conn.run("INSERT INTO t(id) VALUES (6)")
                    throw ChangedMyMind()
                }
            } },
            Self.insert(3),
        ])
        #expect((try? outcomes[0].get()) != nil)
        #expect(throws: SQLiteError.self) { try outcomes[1].get() }
        #expect((try? outcomes[2].get()) != nil)
        #expect((try? outcomes[3].get()) != nil)
        #expect(try storedIds() == [0, 1, 2, 3])
    }

    @Test func aWriteThatEndsTheWholeTransactionFailsTheEarlierWritesOfItsBatch() throws {
        let outcomes = try queuedBehindARunningWrite([
            Self.insert(1),
            // `OR ROLLBACK`: the constraint error rolls back the whole transaction, 1 with it.
            { db in _ = try db.write { try $0.run("INSERT OR ROLLBACK INTO t(id) VALUES (0)") } },
            Self.insert(2),
        ])
        // 1 was not stored, so its write must not report success.
        #expect(throws: SQLiteError.self) { try outcomes[0].get() }
        #expect(throws: SQLiteError.self) { try outcomes[1].get() }
        #expect((try? outcomes[2].get()) != nil)
        #expect(try storedIds() == [0, 2])
    }

    @Test func aWriteAloneRunsOutsideAnyTransaction() throws {
        _ = try db.write { try $0.run("INSERT INTO t(id) VALUES (1)") }
        // SQLite refuses a checkpoint inside a transaction; alone, it runs and empties the WAL.
        #expect(throws: SQLiteError.self) { try db.write { try $0.execute("PRAGMA wal_checkpoint(TRUNCATE)") } }
        let result = try db.writeAlone { try $0.query("PRAGMA wal_checkpoint(TRUNCATE)").first.map { $0.map(\.integer) } }
        #expect(result == [0, 0, 0])
        #expect(try storedIds() == [1])
    }
}
