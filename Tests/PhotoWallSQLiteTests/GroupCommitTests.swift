import Foundation
import Synchronization
import Testing
import PhotoWallSQL

/// `SQLiteDatabase`'s group commit: a write returns only after a sync of the WAL that began after
/// its commit, and a failed sync is never reported as success. The sync call is the real
/// `fdatasync`, wrapped to record what was committed when each sync began.
@Suite struct GroupCommitTests {
    let dir: String

    init() throws {
        dir = NSTemporaryDirectory() + "pw-groupcommit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    /// The ids committed to `t` as a fresh connection sees them.
    static func committedIds(_ conn: SQLiteConnection) -> Set<Int64> {
        Set(((try? conn.query("SELECT id FROM t")) ?? []).compactMap { $0[0].integer })
    }

    @Test func everyWriteReturnsAfterASyncThatBeganAfterItsCommit() throws {
        let path = dir + "/db.sqlite"
        // Ids visible to another connection when a sync began: those syncs cover them.
        let covered = Mutex<Set<Int64>>([])
        let syncs = Atomic<Int>(0)
        let observer = Mutex<SQLiteConnection?>(nil)
        let db = try SQLiteDatabase(path: path) { fd in
            let seen = observer.withLock { conn -> Set<Int64> in
                if conn == nil { conn = try? SQLiteConnection(path: path, readOnly: true) }
                return conn.map(Self.committedIds) ?? []
            }
            covered.withLock { $0.formUnion(seen) }
            syncs.add(1, ordering: .relaxed)
            return fdatasync(fd)
        }
        _ = try db.write { conn in try conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let uncovered = Mutex<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<25 {
                let id = Int64(thread * 100 + i)
                do {
                    _ = try db.write { conn in try conn.run("INSERT INTO t(id) VALUES (?)", [.integer(id)]) }
                } catch {
                    uncovered.withLock { $0.append(-id) }
                    continue
                }
                if !covered.withLock({ $0.contains(id) }) { uncovered.withLock { $0.append(id) } }
            }
        }
        #expect(uncovered.withLock { $0 } == [])
        #expect(covered.withLock { $0.count } == 200)
        // One sync per group: at most one per write (the schema write included), never more.
        #expect(syncs.load(ordering: .relaxed) <= 201)
        // A transaction through writeTransaction is covered the same way.
        _ = try db.writeTransaction { conn in try conn.run("INSERT INTO t(id) VALUES (999)") }
        #expect(covered.withLock { $0.contains(999) })
    }

    @Test func aFailedSyncFailsThatWriteAndEveryLaterOne() throws {
        let failing = Atomic<Bool>(false)
        let db = try SQLiteDatabase(path: dir + "/db.sqlite") { fd in
            if failing.load(ordering: .relaxed) {
                errno = EIO
                return -1
            }
            return fdatasync(fd)
        }
        _ = try db.write { conn in try conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        _ = try db.write { conn in try conn.run("INSERT INTO t(id) VALUES (1)") }
        failing.store(true, ordering: .relaxed)
        let first = #expect(throws: SQLiteError.self) { try db.write { conn in try conn.run("INSERT INTO t(id) VALUES (2)") } }
        #expect(first?.code == 4874)
        failing.store(false, ordering: .relaxed)
        // The sync works again, but the WAL may have lost commit 2, and SQLite would drop every frame
        // after a lost one: nothing more is reported durable.
        let later = #expect(throws: SQLiteError.self) { try db.write { conn in try conn.run("INSERT INTO t(id) VALUES (3)") } }
        #expect(later?.code == 4874)
        // A write that need not be durable still goes through.
        #expect(try db.write(durable: false) { conn in try conn.run("INSERT INTO t(id) VALUES (4)") } == 1)
    }
}
