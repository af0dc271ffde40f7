import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage
import Synchronization

/// The default database: one SQLite file in WAL mode.
///
/// Each class is a table `c_<Class>(objectId TEXT PRIMARY KEY, createdAt INTEGER, updatedAt INTEGER,
/// doc TEXT, acl TEXT, rperm TEXT, wperm TEXT)`: `doc` holds the fields as JSON, times are
/// milliseconds since 1970, and `rperm`/`wperm` are JSON arrays of ACL entries (NULL = public)
/// used to filter rows. Hot fields get expression indexes (`json_extract(doc,'$.fbId')`).
/// `_SCHEMA` keeps each class's field types, `_FILES` file metadata, `_UPLOADS` tus state,
/// `_FRIENDS`/`_FRIEND_SYNC` the friend graph and `_FEED` the feed projection.
///
/// One store per concern, each in its own file: objects (`ObjectStore`), file records, upload
/// records, the friend graph, the feed (`FeedStore`, for the classes named by `feedProjection`) and
/// bulk loading. The adapter knows no class of the app.
public final class SQLiteAdapter: Sendable {
    let db: SQLiteDatabase
    let schemas = ReadMostly<[String: ClassSchema]>([:])
    let logger: Logger
    /// The classes the feed store projects; nil: none (the feed is empty). Must be the same each
    /// time a database is opened, since the feed table is kept up to date on writes.
    public let feedProjection: FeedProjection?
    /// Rows found by reads of one object by objectId (`CachedRow`); off when `rowCacheSeconds` is 0.
    let rowsById: ExpiringCache<CachedRow.Key, CachedRow>
    /// The feed threshold and when it was computed (`suggestedFeedThreshold`).
    let thresholdCache = Mutex<(ContinuousClock.Instant, Int)?>(nil)

    /// Opens or creates the database file at `path` and runs migrations.
    /// - Parameter feedProjection: what `FeedStore` serves (nil: nothing).
    /// - Parameter readTimeLimit: how long one read of any store may run (a query, a feed page with all
    ///   its statements); past it the read fails with `ParseError` 124. nil: no limit.
    /// - Parameter rowCacheSeconds: how long a row read by its objectId is kept in memory (`CachedRow`:
    ///   forgotten after every write of this process, at the latest after this many seconds for writes
    ///   by another process); 0, the default, keeps none.
    /// - Throws: `ParseError` 1 when the file can't be opened or migrated.
    public init(path: String, feedProjection: FeedProjection? = nil, readTimeLimit: Duration? = nil,
                rowCacheSeconds: Double = 0, logger: Logger = Logger(label: "sqlite")) throws(ParseError) {
        self.logger = logger
        self.feedProjection = feedProjection
        do {
            db = try SQLiteDatabase(path: path, readTimeLimit: readTimeLimit)
        } catch {
            throw ParseError(.internalServerError, "Internal server error.", cause: error)
        }
        let rows = ExpiringCache<CachedRow.Key, CachedRow>(ttlSeconds: rowCacheSeconds, capacity: CachedRow.capacity)
        rowsById = rows
        if rows.isEnabled { db.afterEachWrite { rows.invalidate() } }
        try migrate()
    }

    /// Replaces the cached schemas with what the database holds.
    func reloadSchemas(_ conn: SQLiteConnection) throws {
        var loaded: [String: ClassSchema] = [:]
        for row in try conn.query("SELECT className, fields FROM _SCHEMA") {
            guard let name = row[0].text, let text = row[1].text, let json = try? JSON.parse(text) else { continue }
            var fields: [String: FieldType] = [:]
            for (k, v) in json.objectValue ?? [:] { fields[k] = FieldType(json: v) }
            loaded[name] = ClassSchema(className: name, fields: fields)
        }
        let snapshot = loaded
        schemas.write { $0 = snapshot }
    }

    /// One write transaction (`SQLiteDatabase.write`: a savepoint of a batch). On failure the schema
    /// cache is reloaded from what is stored, so fields added by the rolled-back writes are forgotten
    /// (also when the batch's `COMMIT` failed after `body` returned).
    func writeTransaction<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        do {
            return try db.write { conn in try body(conn) }
        } catch {
            _ = try? db.write { conn in try self.reloadSchemas(conn) }
            throw error
        }
    }

    // MARK: errors at the boundary

    /// Runs `body`, translating SQLite failures into Parse errors (unique index → 137, a read stopped
    /// by the read time limit → 124).
    func guarded<T>(_ body: () throws -> T) throws(ParseError) -> T {
        do {
            return try body()
        } catch let e as ParseError {
            throw e
        } catch let e as SQLiteError where e.isUniqueConstraint {
            throw ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided", cause: e)
        } catch let e as SQLiteError where e.isInterrupt {
            let limit = db.readTimeLimit.map { " (\($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) ms)" } ?? ""
            throw ParseError(.timeout, "The query took longer than the server allows\(limit) and was stopped.", cause: e)
        } catch {
            throw ParseError(.internalServerError, "Internal server error.", cause: error)
        }
    }

    static func table(_ className: String) -> String { "\"c_\(className)\"" }

    /// `?,?,…,?`: `count` parameter marks for an `IN (…)` list, written at once (a wall's read scope
    /// lists every friend's wall id, thousands for some viewers); empty for 0.
    static func placeholders(_ count: Int) -> String {
        guard count > 0 else { return "" }
        var marks = String(repeating: "?,", count: count)
        marks.removeLast()
        return marks
    }
}
