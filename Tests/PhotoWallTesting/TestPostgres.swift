import Foundation

/// A PostgreSQL server for the adapter and contract tests, named by `PHOTOWALL_TEST_DATABASE` (an
/// admin URL such as `postgres://postgres@127.0.0.1:PORT/postgres`, which `scripts/pg.sh start`
/// prints). Without it the PostgreSQL tests are skipped and say so (`skipNote`, for
/// `.enabled(if:_:)` or `Test.cancel` as `Comment(rawValue: TestPostgres.skipNote)`).
/// Databases are not dropped: the server is meant to be the throw-away one `scripts/pg.sh` starts
/// (its data folder is deleted by `scripts/pg.sh stop`).
public enum TestPostgres {
    public static var adminURL: String? { TestDatabase.postgresAdminURL }

    public static let skipNote = "SKIPPED: PostgreSQL not available (set PHOTOWALL_TEST_DATABASE=postgres://…, as `make test` does via scripts/pg.sh)"

    /// Creates a uniquely named database and returns its URL.
    /// - Throws: `TestServerError` when `PHOTOWALL_TEST_DATABASE` is unset or `psql` fails.
    public static func freshDatabase() throws -> String {
        guard let admin = adminURL else { throw TestServerError(description: "PHOTOWALL_TEST_DATABASE unset") }
        let name = "pw_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        _ = try TestDatabase.psql(admin, "CREATE DATABASE \"\(name)\"")
        return TestDatabase.url(admin, database: String(name))
    }

    /// Runs SQL (one or more statements) on the database at `url` through `psql`; returns the rows,
    /// one per line, columns separated by `|`.
    public static func sql(_ url: String, _ sql: String) throws -> String { try TestDatabase.psql(url, sql) }
}
