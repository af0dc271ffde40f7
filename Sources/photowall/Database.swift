import PhotoWallCore
import PhotoWallPostgres
import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallWall

/// Every store one database gives, for the one place that opens it (`serve`, `seed-demo`); each
/// service then gets only the stores it uses.
typealias Database = ObjectStore & FileRecordStore & UploadRecordStore & FriendGraphStore & FeedStore & BulkLoading

enum DatabaseOpener {
    /// The wall's feed (`WallSchema.feedProjection`): the adapters know no class names of their own.
    static let feedProjection = WallSchema.feedProjection

    /// How long `serve`'s in-process caches keep what they read with SQLite (sessions, users, friend lists,
    /// rows by objectId), in seconds: the bound for writes by another process, which they don't see.
    static let sqliteCacheSeconds: Double = 5

    /// `postgres://…` / `postgresql://…` from `url`, else SQLite at `<dataDir>/photowall.sqlite`.
    /// - Parameter timeLimit: how long a query may run before it fails with 124 (nil: no limit): on SQLite
    ///   one read with all its statements, on PostgreSQL one statement (`statement_timeout`).
    /// - Parameter rowCacheSeconds: SQLite only (`SQLiteAdapter`'s rows by objectId); 0 keeps none.
    /// - Throws: `UsageError` for another URL scheme; `ParseError` when the database can't be opened.
    static func open(url: String?, dataDir: String, timeLimit: Duration? = nil, rowCacheSeconds: Double = 0,
                     logger: Logger) throws -> any Database {
        if let url, !url.isEmpty {
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw UsageError(description: "unsupported --database '\(url.prefix(while: { $0 != ":" }))': use postgres://USER@HOST:PORT/DB")
            }
            return try PostgresAdapter(url: url, feedProjection: feedProjection, statementTimeLimit: timeLimit, logger: logger)
        }
        return try SQLiteAdapter(path: dataDir + "/photowall.sqlite", feedProjection: feedProjection,
                                 readTimeLimit: timeLimit, rowCacheSeconds: rowCacheSeconds, logger: logger)
    }
}
