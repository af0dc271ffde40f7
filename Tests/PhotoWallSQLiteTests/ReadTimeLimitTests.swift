import Foundation
import Testing
import PhotoWallCore
import PhotoWallStorage
import PhotoWallSQL
import PhotoWallSQLite
import CSQLite

/// `readTimeLimit`: a read that runs longer is stopped (SQLITE_INTERRUPT, `ParseError` 124 through the
/// adapter), and the thread's reader connection is left as it was: the next read runs in full, outside
/// any transaction, and sees the latest commit.
@Suite struct ReadTimeLimitTests {
    /// A statement that runs for seconds without the limit: 30 million rows of a recursive CTE.
    static let slow = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000000) SELECT count(*) FROM n"

    static func temporaryPath() throws -> String {
        let dir = NSTemporaryDirectory() + "pw-limit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir + "/db.sqlite"
    }

    @Test func aReadPastTheLimitIsStoppedAndTheConnectionStaysUsable() throws {
        let path = try Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let db = try SQLiteDatabase(path: path, readTimeLimit: .milliseconds(30))
        try db.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);") }
        for snapshot in [false, true] {
            do {
                let n = try snapshot ? db.readSnapshot { try db.read { try $0.query(Self.slow) } } : db.read { try $0.query(Self.slow) }
                Issue.record("not stopped: \(n)")
            } catch let e as SQLiteError {
                #expect(e.isInterrupt, "\(e)")
            }
            // The limit is counted per read: the next one runs, outside any transaction, and sees a new commit.
            try db.write { try $0.run("UPDATE t SET x = x + 1") }
            let (inTransaction, x) = try db.read { ($0.isInTransaction, try $0.query("SELECT x FROM t").first?.first?.integer) }
            #expect(!inTransaction)
            #expect(x == (snapshot ? 3 : 2))
        }
        // Without a limit the same statement runs to its end.
        let unlimited = try SQLiteDatabase(path: path)
        #expect(try unlimited.read { try $0.query("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT count(*) FROM n") }
            .first?.first?.integer == 100_000)
    }

    /// Through the adapter, an unindexed `$regex` over many rows is answered 124, and a cheap query
    /// on the same adapter still is not.
    @Test func aSlowQueryIsAnsweredTimeout() throws {
        let path = try Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let db = try SQLiteAdapter(path: path, readTimeLimit: .milliseconds(5))
        let now = ParseDate.now()
        try db.bulkInsert((0..<20_000).map {
            StoredObject(className: "Thing", objectId: String(format: "t%09d", $0), createdAt: now, updatedAt: now,
                         fields: ["name": .string(String(repeating: "ab", count: 40) + "\($0)")], acl: nil)
        })
        do {
            let found = try db.find(StoredQuery(className: "Thing", predicate: .regex("name", pattern: "(a|b)*c", options: ""), readers: nil))
            Issue.record("not stopped: \(found.count) rows")
        } catch {
            #expect(error.code == .timeout, "\(error)")
            #expect(error.json["code"] == 124)
            #expect(error.status == 400)
        }
        let one = try db.find(StoredQuery(className: "Thing", predicate: .compare("objectId", .eq, .string("t000000007")), readers: nil))
        #expect(one.map(\.objectId) == ["t000000007"])
    }
}

/// `ReaderMapping`: a reader connection stops mapping the database file while most of its reads find
/// it changed (each would drop the mapping again), and maps it again once reads find it unchanged;
/// what the reads return is the latest commit either way.
@Suite struct ReaderMappingTests {
    static func mmapSize(_ db: SQLiteDatabase) throws -> Int64? {
        try db.read { try $0.query("PRAGMA mmap_size").first?.first?.integer }
    }

    @Test func aReaderUnmapsWhileWritesComeBetweenItsReadsAndMapsAgainWhenTheyStop() throws {
        let path = try ReadTimeLimitTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let db = try SQLiteDatabase(path: path)
        try db.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (0);") }
        // Reads with nothing written between them: the file stays mapped (SQLite reports its cap, > 0).
        for _ in 0..<10 { #expect(try db.read { try $0.query("SELECT x FROM t").first?.first?.integer } == 0) }
        let mapped = try Self.mmapSize(db)
        #expect((mapped ?? 0) > 0)
        // A write between every two reads: after a few such reads the reader maps nothing, and each read
        // still sees the write before it.
        for i in 1...12 {
            try db.write { try $0.run("UPDATE t SET x = ?", [.integer(Int64(i))]) }
            #expect(try db.read { try $0.query("SELECT x FROM t").first?.first?.integer } == Int64(i))
        }
        #expect(try Self.mmapSize(db) == 0)
        // Inside a snapshot the mapping is left as it is (it can't change within a read transaction).
        let inSnapshot = try db.readSnapshot { try Self.mmapSize(db) }
        #expect(inSnapshot == 0)
        // The writes stop: a few reads later the file is mapped again.
        for _ in 0..<12 { #expect(try db.read { try $0.query("SELECT x FROM t").first?.first?.integer } == 12) }
        #expect(try Self.mmapSize(db) == mapped)
    }
}

/// SQLite's memory statistics are off (`sqliteConfigured`): allocations inside SQLite take no global
/// mutex to count themselves, so `sqlite3_memory_used` stays 0 however much a connection allocates.
@Suite struct SQLiteSettingsTests {
    @Test func memoryStatisticsAreOff() throws {
        let path = try ReadTimeLimitTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let db = try SQLiteDatabase(path: path)
        try db.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t SELECT value FROM json_each('[1,2,3]');") }
        let values = (0..<5000).map { SQLValue.text("v\($0)") }
        let n = try db.read { try $0.query("SELECT count(*) FROM t WHERE x IN (\(Array(repeating: "?", count: values.count).joined(separator: ",")))", values) }
        #expect(n.first?.first?.integer == 0)
        #expect(sqlite3_memory_used() == 0)
    }
}
