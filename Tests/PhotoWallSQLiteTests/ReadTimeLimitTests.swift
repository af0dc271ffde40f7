import Foundation
import Testing
import PhotoWallCore
import PhotoWallStorage
import PhotoWallSQL
import PhotoWallSQLite

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
            _ = try db.write { try $0.run("UPDATE t SET x = x + 1") }
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
