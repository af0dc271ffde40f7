import Foundation
import Synchronization
import Testing
import PhotoWallCore
import PhotoWallPostgres
import PhotoWallStorage
import PhotoWallTesting

/// `PostgresChangeNotifier`: two notifiers on one database stand for two instances.
@Suite(.enabled(if: TestPostgres.adminURL != nil, Comment(rawValue: TestPostgres.skipNote)))
struct PostgresChangeNotifierTests {
    final class Inbox: Sendable {
        let messages = Mutex<[String]>([])
        /// The messages other than pings, once `count` of them arrived (deadline 10 s, not a timing assertion).
        func wait(for count: Int) -> [String] {
            let end = ContinuousClock.now + .seconds(10)
            var m: [String] = []
            while ContinuousClock.now < end {
                m = messages.withLock { $0 }.filter { !$0.hasPrefix("ping") }
                if m.count >= count { return m }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return m
        }
    }

    @Test func deliversToOthersInOrderSkipsItsOwnAndSpillsLargePayloads() throws {
        let db = try PostgresAdapter(url: try TestPostgres.freshDatabase(), maxConnections: 4)
        let a = db.changeNotifier(channel: "test_changes", instanceId: "A")
        let b = db.changeNotifier(channel: "test_changes", instanceId: "B")
        defer { a.stop(); b.stop() }
        let atA = Inbox(), atB = Inbox()
        a.listen { m in atA.messages.withLock { $0.append(m) } }
        b.listen { m in atB.messages.withLock { $0.append(m) } }
        // Both listen before anything is sent: a first round trip from each proves it.
        var ready = false
        for attempt in 0..<100 where !ready {
            b.publish("ping \(attempt)"); a.publish("ping \(attempt)")
            ready = !atA.messages.withLock { $0.isEmpty } && !atB.messages.withLock { $0.isEmpty }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(ready)

        let big = String(repeating: "é", count: 6000)  // 12,000 bytes: more than NOTIFY carries
        a.publish("one"); a.publish(big); a.publish("three")
        b.publish("end")
        #expect(atB.wait(for: 3) == ["one", big, "three"])
        // A hears only B's message: never its own.
        #expect(atA.wait(for: 1) == ["end"])
    }

    @Test func listenerReconnectsAfterItsConnectionIsKilled() throws {
        let url = try TestPostgres.freshDatabase()
        let db = try PostgresAdapter(url: url, maxConnections: 4)
        let a = db.changeNotifier(channel: "test_changes", instanceId: "A")
        let b = db.changeNotifier(channel: "test_changes", instanceId: "B")
        defer { a.stop(); b.stop() }
        let atB = Inbox()
        b.listen { m in atB.messages.withLock { $0.append(m) } }
        func reaches(_ tag: String) -> Bool {
            for attempt in 0..<100 {
                a.publish("\(tag) \(attempt)")
                Thread.sleep(forTimeInterval: 0.1)
                if atB.messages.withLock({ $0.contains { $0.hasPrefix(tag) } }) { return true }
            }
            return false
        }
        #expect(reaches("before"))
        // The server ends B's listening session (as a PostgreSQL restart or a dropped link would).
        let admin = try PostgresConnection(conninfo: url)
        let killed = try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()
            """)
        #expect(killed.rows.count == 1)
        #expect(reaches("after"))
    }

    /// The payloads of the spilled-event rows, oldest first.
    static func spilled(_ admin: PostgresConnection) throws -> [String] {
        try admin.query("SELECT payload FROM \"_LIVE_EVENTS\" ORDER BY id").rows.map { $0[0] ?? "" }
    }

    /// Makes `b` hear `a` (a first round trip proves it listens), as the first test does.
    static func connect(_ a: PostgresChangeNotifier, to b: PostgresChangeNotifier, _ atB: Inbox) -> Bool {
        for attempt in 0..<100 {
            a.publish("ping \(attempt)")
            Thread.sleep(forTimeInterval: 0.1)
            if !atB.messages.withLock({ $0.isEmpty }) { return true }
        }
        return false
    }

    /// The default retention is 60 s: a send sweeps the spilled rows older than that and keeps the
    /// younger ones (rows written with back-dated times, so nothing waits a minute).
    @Test func aSendSweepsSpilledEventsOlderThanSixtySeconds() throws {
        let url = try TestPostgres.freshDatabase()
        let db = try PostgresAdapter(url: url, maxConnections: 4)
        let a = db.changeNotifier(channel: "test_changes", instanceId: "A")
        let b = db.changeNotifier(channel: "test_changes", instanceId: "B")
        defer { a.stop(); b.stop() }
        #expect(a.spillRetentionMilliseconds == 60_000)
        let admin = try PostgresConnection(conninfo: url)
        let now = ParseDate.now().millisecondsSince1970
        for (payload, age) in [("old 61 s", 61_000), ("old 10 min", 600_000), ("young 55 s", 55_000), ("young 1 s", 1_000)] as [(String, Int64)] {
            _ = try admin.query("INSERT INTO \"_LIVE_EVENTS\"(payload, \"createdAt\") VALUES ($1::text, $2::bigint)", [payload, String(now - age)])
        }
        let atB = Inbox()
        b.listen { m in atB.messages.withLock { $0.append(m) } }
        #expect(Self.connect(a, to: b, atB))  // the first send swept: none has run before in this process
        // The sender's queue is serial, so once B hears "done" the sends before it (and their sweeps) are over.
        a.publish("done")
        #expect(atB.wait(for: 1) == ["done"])
        #expect(try Self.spilled(admin) == ["young 55 s", "young 1 s"])
    }

    /// With a shorter retention (1 s), a spilled event is read by the other instance, is still there
    /// within the retention, and the first send after the retention has passed removes it while the
    /// event it spills itself stays.
    @Test func spilledEventsOutlivingTheRetentionAreSweptByTheNextSend() throws {
        let url = try TestPostgres.freshDatabase()
        let db = try PostgresAdapter(url: url, maxConnections: 4)
        let a = db.changeNotifier(channel: "test_changes", instanceId: "A", spillRetention: .seconds(1))
        let b = db.changeNotifier(channel: "test_changes", instanceId: "B")
        defer { a.stop(); b.stop() }
        #expect(a.spillRetentionMilliseconds == 1_000)
        let admin = try PostgresConnection(conninfo: url)
        let atB = Inbox()
        b.listen { m in atB.messages.withLock { $0.append(m) } }
        #expect(Self.connect(a, to: b, atB))  // this first send also made the first sweep (of nothing)

        let first = "first " + String(repeating: "x", count: 9000)  // more than NOTIFY carries: spilled
        a.publish(first)
        #expect(atB.wait(for: 1) == [first])
        #expect(try Self.spilled(admin) == [first])  // within the retention: kept (no sweep yet either)

        Thread.sleep(forTimeInterval: 1.2)  // the row is now older than the retention (a lower bound, not a measure)
        let second = "second " + String(repeating: "y", count: 9000)
        a.publish(second)
        #expect(atB.wait(for: 2) == [first, second])
        a.publish("done")
        #expect(atB.wait(for: 3) == [first, second, "done"])
        #expect(try Self.spilled(admin) == [second])
    }
}
