import Foundation
import Testing
import PhotoWallCore
import PhotoWallPostgres
import PhotoWallTesting

/// A PostgreSQL server for tests, named by `PHOTOWALL_TEST_DATABASE` (an admin URL such as
/// `postgres://postgres@127.0.0.1:PORT/postgres`, which `scripts/pg.sh start` prints).
/// Without it every test here is skipped, and says so.
/// Databases are not dropped: the server is meant to be the throw-away one `scripts/pg.sh` starts
/// (its data folder is deleted by `scripts/pg.sh stop`).
enum TestPostgres {
    static let adminURL: String? = {
        guard let url = ProcessInfo.processInfo.environment["PHOTOWALL_TEST_DATABASE"], url.hasPrefix("postgres") else { return nil }
        return url
    }()

    static let skipNote: Comment = "SKIPPED: PostgreSQL not available (set PHOTOWALL_TEST_DATABASE=postgres://…, as `make test` does via scripts/pg.sh)"

    /// Creates a uniquely named database and returns its URL.
    static func freshDatabase() throws -> String {
        guard let admin = adminURL else { throw PostgresError(sqlState: "", message: "PHOTOWALL_TEST_DATABASE unset", sql: nil) }
        let name = "pw_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        let conn = try PostgresConnection(conninfo: admin)
        try conn.execute("CREATE DATABASE \"\(name)\"")
        return TestDatabase.url(admin, database: String(name))
    }
}
