import Foundation
import Testing
import PhotoWallCore
@testable import PhotoWallPostgres
import PhotoWallTesting

/// `statementTimeLimit`: a statement that runs longer is cancelled by PostgreSQL (`statement_timeout`)
/// and answered 124; DDL and migrations, under the DDL lock, are not cut.
@Suite(.enabled(if: TestPostgres.adminURL != nil, Comment(rawValue: TestPostgres.skipNote)))
struct StatementTimeLimitTests {
    @Test func aStatementPastTheLimitIsAnswered124AndDDLIsNotCut() throws {
        let url = try TestPostgres.freshDatabase()
        let db = try PostgresAdapter(url: url, maxConnections: 2, statementTimeLimit: .milliseconds(200))
        do {
            _ = try db.guarded { try db.pool.withConnection { conn in try conn.query("SELECT pg_sleep(3)") } }
            Issue.record("not stopped")
        } catch {
            #expect(error.code == .timeout, "\(error)")
            #expect(error.json["code"] == 124)
        }
        // The connection is still usable, and a statement inside the limit runs.
        #expect(try db.guarded { try db.pool.withConnection { conn in try conn.query("SELECT 7").first?[0] } } == "7")
        // Under the DDL lock the limit is lifted for the rest of the transaction only.
        try db.pool.withConnection { conn in
            try conn.transaction {
                try PostgresAdapter.takeDDLLock(conn)
                try conn.query("SELECT pg_sleep(0.5)")
            }
            #expect(try conn.query("SHOW statement_timeout").first?[0] == "200ms")
        }
    }
}
