import Foundation
import Testing
import PhotoWallSQL
import CSQLite

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
            _ = try db.write { try $0.run("UPDATE t SET x = ?", [.integer(Int64(i))]) }
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
