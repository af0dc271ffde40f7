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
}
