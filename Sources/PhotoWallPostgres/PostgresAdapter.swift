import PhotoWallCore
import PhotoWallStorage
import Synchronization

/// The PostgreSQL database, through libpq: selected with `--database postgres://…`.
///
/// Same layout and semantics as `SQLiteAdapter`, in PostgreSQL types: each class is a table
/// `"c_<Class>"("objectId" text PRIMARY KEY, "createdAt" bigint, "updatedAt" bigint, doc jsonb,
/// acl jsonb, rperm text[], wperm text[])` (times in milliseconds since 1970; `rperm`/`wperm` are
/// the ACL's readers and writers, NULL = public, filtered with `&&`). Hot fields get expression
/// indexes `((doc->>'userFBId'), "createdAt")` that `PostgresQueryCompiler` emits verbatim.
/// `"_SCHEMA"` keeps field types, `"_FILES"` file metadata, `"_UPLOADS"` tus state, and
/// `"_FRIENDS"`/`"_FRIEND_SYNC"` the friend graph, and `"_MIGRATIONS"` the applied schema version.
///
/// Writes that add fields lock the class's `"_SCHEMA"` row (`FOR UPDATE`) inside the write
/// transaction, so a type mismatch (111) is checked atomically even across several PhotoWall
/// processes, and fields added by a transaction that rolls back are never cached. DDL runs under
/// a transaction-level advisory lock. Updates are `SELECT … FOR UPDATE` then `UPDATE`.
///
/// Connections come from a bounded `PostgresPool`; each runs with
/// `plan_cache_mode = force_custom_plan` so prepared statements are planned with their actual
/// `$in` values (generic plans pick the per-author index badly: social-and-uploads.md §5.4).
/// String order follows byte order (`COLLATE "C"`), as in SQLite.
/// - Source: parse-server `PostgresStorageAdapter.js` (JSONB documents, `_rperm`/`_wperm` arrays,
///   23505 → `DUPLICATE_VALUE`).
public final class PostgresAdapter: DatabaseAdapter, FriendGraphStore {
    let pool: PostgresPool
    let schemas = ReadMostly<[String: ClassSchema]>([:])
    /// The last `suggestedFeedThreshold()` and when it was computed.
    let thresholdCache = Mutex<(ContinuousClock.Instant, Int)?>(nil)
    let logger: Logger

    /// Key of the advisory lock that serialises DDL and migrations across processes.
    static let ddlLockKey = 0x5057_4444  // "PWDD"

    /// Connects (opening one connection to check the URL) and runs migrations.
    /// - Parameters:
    ///   - url: `postgres://user[:password]@host[:port]/dbname[?sslmode=…]` or a libpq key/value string.
    ///   - maxConnections: upper bound of the pool (1…).
    /// - Throws: `ParseError` 100 when the server can't be reached, 1 when migrations fail (cause: `PostgresError`).
    public init(url: String, maxConnections: Int = 10, logger: Logger = Logger(label: "postgres")) throws(ParseError) {
        self.logger = logger
        pool = PostgresPool(conninfo: url, maxConnections: maxConnections,
                            setup: "SET plan_cache_mode = force_custom_plan; SET client_min_messages = warning")
        do {
            try pool.withConnection { _ in }
        } catch let e as PostgresError {
            throw ParseError(.connectionFailed, "cannot connect to PostgreSQL", cause: e)
        } catch {
            throw ParseError(.connectionFailed, "cannot connect to PostgreSQL", cause: error)
        }
        try migrate()
    }

    static func table(_ className: String) -> String { "\"c_\(className.replacingOccurrences(of: "\"", with: "\"\""))\"" }

    // MARK: errors at the boundary

    /// Runs `body`, translating failures into Parse errors (SQLSTATE 23505 → 137, see `PostgresError.parseError`).
    func guarded<T>(_ body: () throws -> T) throws(ParseError) -> T {
        do {
            return try body()
        } catch let e as ParseError {
            throw e
        } catch let e as PostgresError {
            let p = e.parseError
            if p.code == .internalServerError { logger.error("postgres: \(e)") }
            throw p
        } catch {
            throw ParseError(.internalServerError, "Internal server error.", cause: error)
        }
    }

    /// One write transaction. Schema changes it makes are recorded in `changes` and reach the cache
    /// only after `COMMIT`, so a rolled-back transaction leaves no field behind.
    func writeTransaction<T>(_ body: (PostgresConnection, inout [String: ClassSchema]) throws -> T) throws(ParseError) -> T {
        try guarded {
            try pool.withConnection { conn in
                var changes: [String: ClassSchema] = [:]
                let value = try conn.transaction { try body(conn, &changes) }
                if !changes.isEmpty {
                    let committed = changes
                    schemas.write { for (k, v) in committed { $0[k] = v } }
                }
                return value
            }
        }
    }

    // MARK: migrations

    static let migrations: [String] = [
        """
        CREATE TABLE IF NOT EXISTS "_SCHEMA" ("className" text PRIMARY KEY, fields jsonb NOT NULL);
        CREATE TABLE IF NOT EXISTS "_FILES" (name text PRIMARY KEY, "contentType" text NOT NULL,
            "byteCount" bigint NOT NULL, sha256 text NOT NULL, "createdAt" bigint NOT NULL);
        """,
        """
        CREATE TABLE IF NOT EXISTS "_UPLOADS" (id text PRIMARY KEY, owner text NOT NULL, length bigint,
            "offset" bigint NOT NULL, "fileName" text NOT NULL, "contentType" text NOT NULL, metadata jsonb NOT NULL,
            "createdAt" bigint NOT NULL, "expiresAt" bigint NOT NULL, "completedName" text);
        CREATE INDEX IF NOT EXISTS "i_UPLOADS_expiresAt" ON "_UPLOADS"("expiresAt") WHERE "completedName" IS NULL;
        """,
        """
        CREATE TABLE IF NOT EXISTS "_FRIENDS" ("userFBId" text NOT NULL, "friendFBId" text NOT NULL,
            PRIMARY KEY ("userFBId", "friendFBId"));
        CREATE TABLE IF NOT EXISTS "_FRIEND_SYNC" ("userFBId" text PRIMARY KEY, "syncedAt" bigint NOT NULL);
        """,
        """
        ALTER TABLE "_UPLOADS" ADD COLUMN IF NOT EXISTS "partState" text NOT NULL DEFAULT '',
            ADD COLUMN IF NOT EXISTS "digestState" text, ADD COLUMN IF NOT EXISTS writer text,
            ADD COLUMN IF NOT EXISTS "writerSeenAt" bigint;
        """,
        // The feed projection (see `feedProjection`) on a WallImage table made before it.
        """
        DO $$ BEGIN
          IF to_regclass('"c_WallImage"') IS NOT NULL THEN
            ALTER TABLE "c_WallImage" ADD COLUMN IF NOT EXISTS "feedAuthor" text GENERATED ALWAYS AS (doc->>'userFBId') STORED;
            CREATE INDEX IF NOT EXISTS "i_WallImage_feedAuthor" ON "c_WallImage"("feedAuthor", "createdAt" DESC, "objectId" DESC);
            CREATE INDEX IF NOT EXISTS "i_WallImage_feedTime" ON "c_WallImage"("createdAt" DESC, "objectId" DESC) INCLUDE ("feedAuthor");
          END IF;
        END $$;
        """,
        // The client's own file name, and an image type it declared that the bytes contradicted.
        """
        ALTER TABLE "_FILES" ADD COLUMN IF NOT EXISTS "originalName" text, ADD COLUMN IF NOT EXISTS "declaredType" text;
        """,
        // File owners (the uploader's _User objectId; NULL for master-key uploads and older files).
        """
        ALTER TABLE "_FILES" ADD COLUMN IF NOT EXISTS owner text;
        CREATE INDEX IF NOT EXISTS "i_FILES_owner" ON "_FILES"(owner) WHERE owner IS NOT NULL;
        ALTER TABLE "_FILES" ADD COLUMN IF NOT EXISTS unclaimed boolean NOT NULL DEFAULT false;
        CREATE INDEX IF NOT EXISTS "i_FILES_unclaimed" ON "_FILES"("createdAt") WHERE unclaimed;
        """,
        // A user's files by content (`files(ownedBy:sha256:)`, the upload's duplicate check).
        """
        CREATE INDEX IF NOT EXISTS "i_FILES_owner_sha256" ON "_FILES"(owner, sha256) WHERE owner IS NOT NULL;
        """,
    ]

    /// The friend feed's own columns on `WallImage`: the author (`userFBId`) as a stored generated
    /// column, so both feed forms run as index-only scans — `("feedAuthor", "createdAt", "objectId")`
    /// per author, `("createdAt", "objectId") INCLUDE ("feedAuthor")` newest first — where an
    /// expression index on `doc->>'userFBId'` would fetch every row from the heap (PostgreSQL
    /// plans index-only scans only when every column a query needs is in the index: docs §11.9).
    static let feedProjection = """
        ALTER TABLE "c_WallImage" ADD COLUMN IF NOT EXISTS "feedAuthor" text GENERATED ALWAYS AS (doc->>'userFBId') STORED;
        CREATE INDEX IF NOT EXISTS "i_WallImage_feedAuthor" ON "c_WallImage"("feedAuthor", "createdAt" DESC, "objectId" DESC);
        CREATE INDEX IF NOT EXISTS "i_WallImage_feedTime" ON "c_WallImage"("createdAt" DESC, "objectId" DESC) INCLUDE ("feedAuthor");
        """

    func migrate() throws(ParseError) {
        try guarded {
            try pool.withConnection { conn in
                try conn.transaction {
                    try conn.query("SELECT pg_advisory_xact_lock(\(Self.ddlLockKey))")
                    try conn.execute("CREATE TABLE IF NOT EXISTS \"_MIGRATIONS\" (version integer PRIMARY KEY, \"appliedAt\" timestamptz NOT NULL DEFAULT now())")
                    let version = Int(try conn.query("SELECT coalesce(max(version), 0) FROM \"_MIGRATIONS\"").first?[0] ?? "0") ?? 0
                    for (i, sql) in Self.migrations.enumerated() where i >= version {
                        try conn.execute(sql)
                        try conn.query("INSERT INTO \"_MIGRATIONS\"(version) VALUES ($1::integer)", [String(i + 1)])
                    }
                }
                try reloadSchemas(conn)
            }
        }
    }

    static func decodeSchema(_ name: String, _ text: String?) -> ClassSchema {
        var fields: [String: FieldType] = [:]
        if let text, let json = try? JSON.parse(text) {
            for (k, v) in json.objectValue ?? [:] { fields[k] = FieldType(json: v) }
        }
        return ClassSchema(className: name, fields: fields)
    }

    func reloadSchemas(_ conn: PostgresConnection) throws {
        var loaded: [String: ClassSchema] = [:]
        for row in try conn.query("SELECT \"className\", fields::text FROM \"_SCHEMA\"").rows {
            guard let name = row[0] else { continue }
            loaded[name] = Self.decodeSchema(name, row[1])
        }
        let snapshot = loaded
        schemas.write { $0 = snapshot }
    }

    // MARK: schema

    /// The cached schema; on a miss, the database is asked (another process may have created the class).
    public func schema(of className: String) throws(ParseError) -> ClassSchema? {
        if let s = schemas.read({ $0[className] }) { return s }
        let row = try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT fields::text FROM \"_SCHEMA\" WHERE \"className\" = $1::text", [className]).first
            }
        }
        guard let row else { return nil }
        let s = Self.decodeSchema(className, row[0])
        schemas.write { $0[className] = s }
        return s
    }

    public func ensureClass(_ className: String, fields: [String: FieldType], indexedFields: [String],
                            uniqueFields: [String]) throws(ParseError) {
        try writeTransaction { conn, changes in
            try conn.query("SELECT pg_advisory_xact_lock(\(Self.ddlLockKey))")
            var schema = try self.lockedSchema(conn, className, createIfMissing: true)
            var changed = false
            for (k, v) in fields where schema.fields[k] == nil { schema.fields[k] = v; changed = true }
            if changed { try self.saveSchema(conn, schema) }
            changes[className] = schema
            for f in indexedFields { try self.createIndex(conn, schema, field: f, unique: false) }
            for f in uniqueFields { try self.createIndex(conn, schema, field: f, unique: true) }
        }
    }

    /// Reads the class's schema row `FOR UPDATE`, creating the table and the row when asked.
    /// - Returns: the schema as committed; the row stays locked until the transaction ends.
    /// - Throws: 101 when the class is missing and `createIfMissing` is false.
    func lockedSchema(_ conn: PostgresConnection, _ className: String, createIfMissing: Bool) throws -> ClassSchema {
        let select = "SELECT fields::text FROM \"_SCHEMA\" WHERE \"className\" = $1::text FOR UPDATE"
        if let row = try conn.query(select, [className]).first { return Self.decodeSchema(className, row[0]) }
        guard createIfMissing else { throw ParseError.objectNotFound() }
        try conn.query("SELECT pg_advisory_xact_lock(\(Self.ddlLockKey))")
        let t = Self.table(className)
        try conn.execute("""
            CREATE TABLE IF NOT EXISTS \(t) ("objectId" text PRIMARY KEY, "createdAt" bigint NOT NULL,
                "updatedAt" bigint NOT NULL, doc jsonb NOT NULL, acl jsonb, rperm text[], wperm text[]);
            CREATE INDEX IF NOT EXISTS "i_\(className)_createdAt" ON \(t)("createdAt", "objectId");
            CREATE INDEX IF NOT EXISTS "i_\(className)_updatedAt" ON \(t)("updatedAt");
            """)
        if className == "WallImage" { try conn.execute(Self.feedProjection) }
        try conn.query("INSERT INTO \"_SCHEMA\"(\"className\", fields) VALUES ($1::text, '{}'::jsonb) ON CONFLICT DO NOTHING", [className])
        if let row = try conn.query(select, [className]).first { return Self.decodeSchema(className, row[0]) }
        return ClassSchema(className: className, fields: [:])
    }

    /// An expression index on a field: `PostgresQueryCompiler.indexExpression`, then `"createdAt"`
    /// for non-unique ones (feeds filter on the field and order by time).
    func createIndex(_ conn: PostgresConnection, _ schema: ClassSchema, field: String, unique: Bool) throws {
        let safe = field.replacingOccurrences(of: ".", with: "_")
        let expr = PostgresQueryCompiler.indexExpression(field, schema: schema)
        _ = try PostgresQueryCompiler(schema: schema).column(field)  // validates the path
        try conn.execute("""
            CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS "i_\(schema.className)_\(safe)" ON \(Self.table(schema.className)) (\(expr)\(unique ? "" : ", \"createdAt\""))
            """)
    }

    func saveSchema(_ conn: PostgresConnection, _ schema: ClassSchema) throws {
        var o: [String: JSON] = [:]
        for (k, v) in schema.fields { o[k] = v.json }
        try conn.query("UPDATE \"_SCHEMA\" SET fields = $2::jsonb WHERE \"className\" = $1::text", [schema.className, JSON.object(o).text])
    }

    /// Type-checks `fields` against the schema inside the current write transaction, creating the
    /// class and adding new fields (under the schema row's lock).
    /// - Throws: `ParseError` 111 on a mismatch.
    func checkSchema(_ conn: PostgresConnection, _ className: String, _ fields: [String: JSON],
                     _ changes: inout [String: ClassSchema]) throws {
        if let cached = changes[className] ?? schemas.read({ $0[className] }),
           try cached.additions(for: fields).isEmpty {
            return  // every field already known with this type: types never change, so no lock needed
        }
        var schema = try lockedSchema(conn, className, createIfMissing: true)
        let add = try schema.additions(for: fields)
        if !add.isEmpty {
            for (k, v) in add { schema.fields[k] = v }
            try saveSchema(conn, schema)
        }
        changes[className] = schema
    }

    // MARK: objects

    static let columns = "\"objectId\", \"createdAt\", \"updatedAt\", doc::text, acl::text"

    static func encodeRow(_ o: StoredObject) -> [String?] {
        [o.objectId, String(o.createdAt.millisecondsSince1970), String(o.updatedAt.millisecondsSince1970),
         JSON.object(o.fields).text, o.acl.map { $0.json.text },
         o.acl.map { PostgresQueryCompiler.textArrayLiteral($0.readers) },
         o.acl.map { PostgresQueryCompiler.textArrayLiteral($0.writers) }]
    }

    static func decodeRow(_ className: String, _ row: [String?]) throws -> StoredObject {
        let doc = try JSON.parse(row[3] ?? "{}")
        var acl: ACL?
        if let a = row[4] { acl = try ACL(json: try JSON.parse(a)) }
        return StoredObject(className: className, objectId: row[0] ?? "",
                            createdAt: ParseDate(millisecondsSince1970: Int64(row[1] ?? "0") ?? 0),
                            updatedAt: ParseDate(millisecondsSince1970: Int64(row[2] ?? "0") ?? 0),
                            fields: doc.objectValue ?? [:], acl: acl)
    }

    public func insert(_ object: StoredObject) throws(ParseError) {
        try writeTransaction { conn, changes in
            try self.checkSchema(conn, object.className, object.fields, &changes)
            try conn.query("""
                INSERT INTO \(Self.table(object.className))("objectId", "createdAt", "updatedAt", doc, acl, rperm, wperm)
                VALUES ($1::text, $2::bigint, $3::bigint, $4::jsonb, $5::jsonb, $6::text[], $7::text[])
                """, Self.encodeRow(object))
        }
    }

    /// The schema to compile `predicate`/`order` with. When they name a top-level field the cache
    /// doesn't know, the class's row is read again: another PhotoWall process may have added it,
    /// and its type decides how it compares.
    func schema(for className: String, _ predicate: Predicate, _ order: [SortKey]) throws(ParseError) -> ClassSchema? {
        guard let cached = try schema(of: className) else { return nil }
        var paths = order.map(\.path)
        Self.collectPaths(predicate, into: &paths)
        let builtins: Set<String> = ["objectId", "createdAt", "updatedAt"]
        let unknown = paths.contains { p in
            let top = p.split(separator: ".").first.map(String.init) ?? p
            // `_`-prefixed internal fields are never in the schema (`ClassSchema.additions` skips them).
            return !builtins.contains(top) && !top.hasPrefix("_") && cached.fields[top] == nil
        }
        guard unknown else { return cached }
        let row = try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT fields::text FROM \"_SCHEMA\" WHERE \"className\" = $1::text", [className]).first
            }
        }
        guard let row else { return cached }
        let fresh = Self.decodeSchema(className, row[0])
        if fresh.fields.count > cached.fields.count { schemas.write { $0[className] = fresh } }
        return fresh
    }

    static func collectPaths(_ p: Predicate, into paths: inout [String]) {
        switch p {
        case .all: break
        case .and(let ps), .or(let ps), .nor(let ps): for x in ps { collectPaths(x, into: &paths) }
        case .compare(let path, _, _), .inList(let path, _, _), .exists(let path, _), .regex(let path, _, _), .containsAll(let path, _):
            paths.append(path)
        }
    }

    public func find(_ query: StoredQuery) throws(ParseError) -> [StoredObject] {
        guard let schema = try schema(for: query.className, query.predicate, query.order) else { return [] }
        let compiled = try PostgresQueryCompiler(schema: schema).select(query, columns: Self.columns)
        return try guarded {
            try pool.withConnection { conn in
                try conn.query(compiled.sql, compiled.params).rows.map { try Self.decodeRow(query.className, $0) }
            }
        }
    }

    public func count(_ query: StoredQuery) throws(ParseError) -> Int {
        guard let schema = try schema(for: query.className, query.predicate, []) else { return 0 }
        var q = query
        q.limit = nil; q.skip = 0; q.order = []
        let compiled = try PostgresQueryCompiler(schema: schema).select(q, columns: "count(*)")
        return try guarded {
            try pool.withConnection { conn in Int(try conn.query(compiled.sql, compiled.params).first?[0] ?? "0") ?? 0 }
        }
    }

    /// `EXPLAIN` of the statement `find` would run (diagnostics and the index tests).
    /// - Returns: the plan, one line per row.
    public func explain(_ query: StoredQuery) throws(ParseError) -> String {
        guard let schema = try schema(of: query.className) else { return "" }
        let compiled = try PostgresQueryCompiler(schema: schema).select(query, columns: Self.columns)
        return try guarded {
            try pool.withConnection { conn in
                try conn.query("EXPLAIN " + compiled.sql, compiled.params).rows.map { $0.first.flatMap { $0 } ?? "" }.joined(separator: "\n")
            }
        }
    }

    public func update(className: String, objectId: String, writers: PermissionSet,
                       _ transform: (inout StoredObject) throws(ParseError) -> Void) throws(ParseError) -> StoredObject {
        guard try schema(of: className) != nil else { throw ParseError.objectNotFound() }
        let t = Self.table(className)
        var params = PostgresQueryCompiler.Params()
        let id = params.add(objectId, cast: "text")
        let acl = PostgresQueryCompiler.permissionFilter(column: "wperm", writers, &params)
        let select = "SELECT \(Self.columns) FROM \(t) WHERE \"objectId\" = \(id) AND \(acl) FOR UPDATE"
        return try writeTransaction { conn, changes in
            guard let row = try conn.query(select, params.values).first else { throw ParseError.objectNotFound() }
            var object = try Self.decodeRow(className, row)
            do { try transform(&object) } catch let e as ParseError { throw e }
            try self.checkSchema(conn, className, object.fields, &changes)
            let v = Self.encodeRow(object)
            try conn.query("""
                UPDATE \(t) SET "updatedAt" = $1::bigint, doc = $2::jsonb, acl = $3::jsonb, rperm = $4::text[], wperm = $5::text[]
                WHERE "objectId" = $6::text
                """, [v[2], v[3], v[4], v[5], v[6], objectId])
            return object
        }
    }

    public func delete(className: String, objectId: String, writers: PermissionSet) throws(ParseError) {
        guard try schema(of: className) != nil else { throw ParseError.objectNotFound() }
        var params = PostgresQueryCompiler.Params()
        let id = params.add(objectId, cast: "text")
        let acl = PostgresQueryCompiler.permissionFilter(column: "wperm", writers, &params)
        let sql = "DELETE FROM \(Self.table(className)) WHERE \"objectId\" = \(id) AND \(acl)"
        let changed = try guarded { try pool.withConnection { conn in try conn.query(sql, params.values).affected } }
        if changed == 0 { throw ParseError.objectNotFound() }
    }

    public func deleteAll(className: String, predicate: Predicate) throws(ParseError) -> Int {
        guard let schema = try schema(for: className, predicate, []) else { return 0 }
        let compiled = try PostgresQueryCompiler(schema: schema).whereClause(predicate)
        let sql = "DELETE FROM \(Self.table(className)) WHERE \(compiled.sql)"
        return try guarded { try pool.withConnection { conn in try conn.query(sql, compiled.params).affected } }
    }
}
