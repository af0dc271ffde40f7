import PhotoWallCore
import PhotoWallSQL
import Synchronization

/// The default database: one SQLite file in WAL mode.
///
/// Each class is a table `c_<Class>(objectId TEXT PRIMARY KEY, createdAt INTEGER, updatedAt INTEGER,
/// doc TEXT, acl TEXT, rperm TEXT, wperm TEXT)`: `doc` holds the fields as JSON, times are
/// milliseconds since 1970, and `rperm`/`wperm` are JSON arrays of ACL entries (NULL = public)
/// used to filter rows. Hot fields get expression indexes (`json_extract(doc,'$.userFBId')`).
/// `_SCHEMA` keeps each class's field types; `_FILES` keeps file metadata.
public final class SQLiteAdapter: DatabaseAdapter, FriendGraphStore, FeedStore {
    let db: SQLiteDatabase
    let schemas = ReadMostly<[String: ClassSchema]>([:])
    let logger: Logger

    /// Opens or creates the database file at `path` and runs migrations.
    /// - Throws: `ParseError` 1 when the file can't be opened or migrated.
    public init(path: String, logger: Logger = Logger(label: "sqlite")) throws(ParseError) {
        self.logger = logger
        do {
            db = try SQLiteDatabase(path: path)
        } catch {
            throw ParseError(.internalServerError, "Internal server error.", cause: error)
        }
        try migrate()
    }

    static let migrations: [String] = [
        """
        CREATE TABLE IF NOT EXISTS _SCHEMA (className TEXT PRIMARY KEY, fields TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS _FILES (name TEXT PRIMARY KEY, contentType TEXT NOT NULL,
            byteCount INTEGER NOT NULL, sha256 TEXT NOT NULL, createdAt INTEGER NOT NULL);
        """,
        """
        CREATE TABLE IF NOT EXISTS _UPLOADS (id TEXT PRIMARY KEY, owner TEXT NOT NULL, length INTEGER,
            offset INTEGER NOT NULL, fileName TEXT NOT NULL, contentType TEXT NOT NULL, metadata TEXT NOT NULL,
            createdAt INTEGER NOT NULL, expiresAt INTEGER NOT NULL, completedName TEXT);
        CREATE INDEX IF NOT EXISTS i_UPLOADS_expiresAt ON _UPLOADS(expiresAt) WHERE completedName IS NULL;
        """,
        """
        CREATE TABLE IF NOT EXISTS _FRIENDS (userFBId TEXT NOT NULL, friendFBId TEXT NOT NULL,
            PRIMARY KEY (userFBId, friendFBId)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS _FRIEND_SYNC (userFBId TEXT PRIMARY KEY, syncedAt INTEGER NOT NULL);
        """,
        """
        CREATE TABLE IF NOT EXISTS _WALL_FEED (objectId TEXT PRIMARY KEY, createdAt INTEGER NOT NULL, userFBId TEXT) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS i_WALL_FEED_author ON _WALL_FEED(userFBId, createdAt, objectId);
        CREATE INDEX IF NOT EXISTS i_WALL_FEED_time ON _WALL_FEED(createdAt, objectId, userFBId);
        """,
        """
        ALTER TABLE _UPLOADS ADD COLUMN partState TEXT NOT NULL DEFAULT '';
        ALTER TABLE _UPLOADS ADD COLUMN digestState BLOB;
        ALTER TABLE _UPLOADS ADD COLUMN writer TEXT;
        ALTER TABLE _UPLOADS ADD COLUMN writerSeenAt INTEGER;
        """,
        // The client's own file name, and an image type it declared that the bytes contradicted.
        """
        ALTER TABLE _FILES ADD COLUMN originalName TEXT;
        ALTER TABLE _FILES ADD COLUMN declaredType TEXT;
        """,
        // File owners (the uploader's _User objectId; NULL for master-key uploads and older files).
        """
        ALTER TABLE _FILES ADD COLUMN owner TEXT;
        CREATE INDEX IF NOT EXISTS i_FILES_owner ON _FILES(owner) WHERE owner IS NOT NULL;
        ALTER TABLE _FILES ADD COLUMN unclaimed INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX IF NOT EXISTS i_FILES_unclaimed ON _FILES(createdAt) WHERE unclaimed = 1;
        """,
        // A user's files by content (`files(ownedBy:sha256:)`, the upload's duplicate check).
        """
        CREATE INDEX IF NOT EXISTS i_FILES_owner_sha256 ON _FILES(owner, sha256) WHERE owner IS NOT NULL;
        """,
    ]

    func migrate() throws(ParseError) {
        try guarded {
            try db.write { conn in
                let version = try conn.query("PRAGMA user_version").first?.first?.integer ?? 0
                for (i, sql) in Self.migrations.enumerated() where i >= Int(version) {
                    try conn.transaction {
                        try conn.execute(sql)
                        if i == 3, try !conn.query("SELECT 1 FROM sqlite_master WHERE name = 'c_WallImage'").isEmpty {
                            // Databases from before the feed table: fill it from the existing images.
                            try conn.execute("INSERT OR IGNORE INTO _WALL_FEED SELECT objectId, createdAt, json_extract(doc,'$.userFBId') FROM \"c_WallImage\"")
                        }
                        try conn.execute("PRAGMA user_version = \(i + 1)")
                    }
                }
                try self.reloadSchemas(conn)
            }
        }
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

    /// One write transaction. On failure the schema cache is reloaded, so fields added by the
    /// rolled-back transaction are forgotten.
    func writeTransaction<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try db.write { conn in
            do {
                return try conn.transaction { try body(conn) }
            } catch {
                try? reloadSchemas(conn)
                throw error
            }
        }
    }

    // MARK: errors at the boundary

    /// Runs `body`, translating SQLite failures into Parse errors (unique index → 137).
    func guarded<T>(_ body: () throws -> T) throws(ParseError) -> T {
        do {
            return try body()
        } catch let e as ParseError {
            throw e
        } catch let e as SQLiteError where e.isUniqueConstraint {
            throw ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided", cause: e)
        } catch {
            throw ParseError(.internalServerError, "Internal server error.", cause: error)
        }
    }

    static func table(_ className: String) -> String { "\"c_\(className)\"" }

    // MARK: schema

    public func schema(of className: String) throws(ParseError) -> ClassSchema? {
        schemas.read { $0[className] }
    }

    public func ensureClass(_ className: String, fields: [String: FieldType], indexedFields: [String],
                            uniqueFields: [String]) throws(ParseError) {
        try guarded {
            try writeTransaction { conn in
                do {
                    _ = try self.createTableIfNeeded(conn, className)
                    var schema = self.schemas.read { $0[className] } ?? ClassSchema(className: className, fields: [:])
                    for (k, v) in fields where schema.fields[k] == nil { schema.fields[k] = v }
                    try self.saveSchema(conn, schema)
                    for f in indexedFields { try self.createIndex(conn, className, field: f, unique: false) }
                    for f in uniqueFields { try self.createIndex(conn, className, field: f, unique: true) }
                }
            }
        }
    }

    /// Creates the class table with its built-in indexes. - Returns: whether it was created.
    func createTableIfNeeded(_ conn: SQLiteConnection, _ className: String) throws -> Bool {
        if schemas.read({ $0[className] }) != nil { return false }
        let t = Self.table(className)
        try conn.execute("""
            CREATE TABLE IF NOT EXISTS \(t) (objectId TEXT PRIMARY KEY, createdAt INTEGER NOT NULL,
                updatedAt INTEGER NOT NULL, doc TEXT NOT NULL, acl TEXT, rperm TEXT, wperm TEXT);
            CREATE INDEX IF NOT EXISTS "i_\(className)_createdAt" ON \(t)(createdAt, objectId);
            CREATE INDEX IF NOT EXISTS "i_\(className)_updatedAt" ON \(t)(updatedAt);
            """)
        try saveSchema(conn, ClassSchema(className: className, fields: [:]))
        return true
    }

    /// An expression index on a field. Dotted paths index into objects (`authData.facebook.id`).
    func createIndex(_ conn: SQLiteConnection, _ className: String, field: String, unique: Bool) throws {
        let safe = field.replacingOccurrences(of: ".", with: "_")
        let expr = SQLiteQueryCompiler.jsonPath(field)
        try conn.execute("""
            CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS "i_\(className)_\(safe)" ON \(Self.table(className))(\(expr)\(unique ? "" : ", createdAt"));
            """)
    }

    func saveSchema(_ conn: SQLiteConnection, _ schema: ClassSchema) throws {
        var o: [String: JSON] = [:]
        for (k, v) in schema.fields { o[k] = v.json }
        try conn.run("INSERT INTO _SCHEMA(className, fields) VALUES(?, ?) ON CONFLICT(className) DO UPDATE SET fields = excluded.fields",
                     [.text(schema.className), .text(JSON.object(o).text)])
        schemas.write { $0[schema.className] = schema }
    }

    /// Type-checks `fields`, creating the class and adding new fields inside the current write transaction.
    func checkSchema(_ conn: SQLiteConnection, _ className: String, _ fields: [String: JSON]) throws {
        _ = try createTableIfNeeded(conn, className)
        var schema = schemas.read { $0[className] } ?? ClassSchema(className: className, fields: [:])
        let add = try schema.additions(for: fields)
        if !add.isEmpty {
            for (k, v) in add { schema.fields[k] = v }
            try saveSchema(conn, schema)
        }
    }

    // MARK: the feed projection

    /// `_WALL_FEED` mirrors (`objectId`, `createdAt`, `userFBId`) of every `WallImage` with covering
    /// indexes for both feed strategies (SQLite 3.40 can't cover from an index on a JSON expression,
    /// so a probe would otherwise read each image's whole row). Kept in the same transaction as the image.
    func project(_ conn: SQLiteConnection, _ o: StoredObject) throws {
        guard o.className == "WallImage" else { return }
        try conn.run("INSERT INTO _WALL_FEED(objectId, createdAt, userFBId) VALUES (?,?,?) ON CONFLICT(objectId) DO UPDATE SET userFBId = excluded.userFBId",
                     [.text(o.objectId), .integer(o.createdAt.millisecondsSince1970), o.fields["userFBId"]?.stringValue.map { .text($0) } ?? .null])
    }

    // MARK: objects

    static func encodeRow(_ o: StoredObject) -> [SQLValue] {
        let readers = o.acl.map { JSON.array($0.readers.map { .string($0) }).text }
        let writers = o.acl.map { JSON.array($0.writers.map { .string($0) }).text }
        return [.text(o.objectId), .integer(o.createdAt.millisecondsSince1970), .integer(o.updatedAt.millisecondsSince1970),
                .text(JSON.object(o.fields).text), o.acl.map { .text($0.json.text) } ?? .null,
                readers.map { .text($0) } ?? .null, writers.map { .text($0) } ?? .null]
    }

    static let columns = "objectId, createdAt, updatedAt, doc, acl"

    static func decodeRow(_ className: String, _ row: [SQLValue]) throws -> StoredObject {
        let doc = try JSON.parse(row[3].text ?? "{}")
        var acl: ACL?
        if let a = row[4].text { acl = try ACL(json: try JSON.parse(a)) }
        return StoredObject(className: className, objectId: row[0].text ?? "",
                            createdAt: ParseDate(millisecondsSince1970: row[1].integer ?? 0),
                            updatedAt: ParseDate(millisecondsSince1970: row[2].integer ?? 0),
                            fields: doc.objectValue ?? [:], acl: acl)
    }

    public func insert(_ object: StoredObject) throws(ParseError) {
        try guarded {
            try writeTransaction { conn in
                do {
                    try self.checkSchema(conn, object.className, object.fields)
                    try conn.run("INSERT INTO \(Self.table(object.className))(objectId, createdAt, updatedAt, doc, acl, rperm, wperm) VALUES (?,?,?,?,?,?,?)",
                                 Self.encodeRow(object))
                    try self.project(conn, object)
                }
            }
        }
    }

    public func find(_ query: StoredQuery) throws(ParseError) -> [StoredObject] {
        guard let schema = try schema(of: query.className) else { return [] }
        let compiled = try SQLiteQueryCompiler(schema: schema).select(query, columns: Self.columns)
        return try guarded {
            try db.read { conn in
                var out: [StoredObject] = []
                try conn.forEachRow(compiled.sql, compiled.args) { out.append(try Self.decodeRow(query.className, $0)) }
                return out
            }
        }
    }

    public func count(_ query: StoredQuery) throws(ParseError) -> Int {
        guard let schema = try schema(of: query.className) else { return 0 }
        var q = query
        q.limit = nil; q.skip = 0; q.order = []
        let compiled = try SQLiteQueryCompiler(schema: schema).select(q, columns: "count(*)")
        return try guarded {
            try db.read { conn in Int(try conn.query(compiled.sql, compiled.args).first?.first?.integer ?? 0) }
        }
    }

    public func update(className: String, objectId: String, writers: PermissionSet,
                       _ transform: (inout StoredObject) throws(ParseError) -> Void) throws(ParseError) -> StoredObject {
        guard try schema(of: className) != nil else { throw ParseError.objectNotFound() }
        let t = Self.table(className)
        let (aclSQL, aclArgs) = SQLiteQueryCompiler.permissionFilter(column: "wperm", writers)
        return try guarded {
            try writeTransaction { conn in
                do {
                    guard let row = try conn.query("SELECT \(Self.columns) FROM \(t) WHERE objectId = ? AND \(aclSQL)",
                                                   [.text(objectId)] + aclArgs).first else {
                        throw ParseError.objectNotFound()
                    }
                    var object = try Self.decodeRow(className, row)
                    do { try transform(&object) } catch let e as ParseError { throw e }
                    try self.checkSchema(conn, className, object.fields)
                    let values = Self.encodeRow(object)
                    try conn.run("UPDATE \(t) SET updatedAt = ?, doc = ?, acl = ?, rperm = ?, wperm = ? WHERE objectId = ?",
                                 [values[2], values[3], values[4], values[5], values[6], .text(objectId)])
                    try self.project(conn, object)
                    return object
                }
            }
        }
    }

    public func delete(className: String, objectId: String, writers: PermissionSet) throws(ParseError) {
        guard try schema(of: className) != nil else { throw ParseError.objectNotFound() }
        let (aclSQL, aclArgs) = SQLiteQueryCompiler.permissionFilter(column: "wperm", writers)
        let changed = try guarded {
            try writeTransaction { conn in
                let n = try conn.run("DELETE FROM \(Self.table(className)) WHERE objectId = ? AND \(aclSQL)", [.text(objectId)] + aclArgs)
                if n > 0, className == "WallImage" { try conn.run("DELETE FROM _WALL_FEED WHERE objectId = ?", [.text(objectId)]) }
                return n
            }
        }
        if changed == 0 { throw ParseError.objectNotFound() }
    }

    public func deleteAll(className: String, predicate: Predicate) throws(ParseError) -> Int {
        guard let schema = try schema(of: className) else { return 0 }
        let compiled = try SQLiteQueryCompiler(schema: schema).whereClause(predicate)
        return try guarded {
            try writeTransaction { conn in
                let n = try conn.run("DELETE FROM \(Self.table(className)) WHERE \(compiled.sql)", compiled.args)
                if n > 0, className == "WallImage" {
                    try conn.run("DELETE FROM _WALL_FEED WHERE objectId NOT IN (SELECT objectId FROM \"c_WallImage\")")
                }
                return n
            }
        }
    }

    // MARK: files

    public func insertFile(_ r: FileRecord) throws(ParseError) {
        _ = try guarded {
            try db.write { conn in
                try conn.run("INSERT INTO _FILES(name, contentType, byteCount, sha256, createdAt, originalName, declaredType, owner, unclaimed) VALUES (?,?,?,?,?,?,?,?,?)",
                             [.text(r.name), .text(r.contentType), .integer(r.byteCount), .text(r.sha256), .integer(r.createdAt.millisecondsSince1970),
                              r.originalName.map { .text($0) } ?? .null, r.declaredType.map { .text($0) } ?? .null,
                              r.owner.map { .text($0) } ?? .null, .integer(r.unclaimed ? 1 : 0)])
            }
        }
    }

    public func file(named name: String) throws(ParseError) -> FileRecord? {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT name, contentType, byteCount, sha256, createdAt, originalName, declaredType, owner, unclaimed FROM _FILES WHERE name = ?",
                               [.text(name)]).first.map {
                    FileRecord(name: $0[0].text ?? "", contentType: $0[1].text ?? "application/octet-stream", byteCount: $0[2].integer ?? 0,
                               sha256: $0[3].text ?? "", createdAt: ParseDate(millisecondsSince1970: $0[4].integer ?? 0),
                               originalName: $0[5].text, declaredType: $0[6].text, owner: $0[7].text, unclaimed: $0[8].integer == 1)
                }
            }
        }
    }

    public func deleteFile(named name: String) throws(ParseError) -> Bool {
        try guarded { try db.write { conn in try conn.run("DELETE FROM _FILES WHERE name = ?", [.text(name)]) } } > 0
    }

    public func fileNames(ownedBy owner: String, limit: Int) throws(ParseError) -> [String] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT name FROM _FILES WHERE owner = ? ORDER BY createdAt LIMIT ?", [.text(owner), .integer(Int64(limit))])
                    .compactMap { $0[0].text }
            }
        }
    }

    public func files(ownedBy owner: String, sha256 digests: [String]) throws(ParseError) -> [FileRecord] {
        guard !digests.isEmpty else { return [] }
        return try guarded {
            try db.read { conn in
                try conn.query("SELECT name, contentType, byteCount, sha256, createdAt, originalName, declaredType, owner, unclaimed FROM _FILES "
                               + "WHERE owner = ? AND sha256 IN (\(digests.map { _ in "?" }.joined(separator: ",")))",
                               [.text(owner)] + digests.map { .text($0) }).map {
                    FileRecord(name: $0[0].text ?? "", contentType: $0[1].text ?? "application/octet-stream", byteCount: $0[2].integer ?? 0,
                               sha256: $0[3].text ?? "", createdAt: ParseDate(millisecondsSince1970: $0[4].integer ?? 0),
                               originalName: $0[5].text, declaredType: $0[6].text, owner: $0[7].text, unclaimed: $0[8].integer == 1)
                }
            }
        }
    }

    public func unclaimedFileNames(before date: ParseDate, limit: Int) throws(ParseError) -> [String] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT name FROM _FILES WHERE unclaimed = 1 AND createdAt < ? ORDER BY createdAt LIMIT ?",
                               [.integer(date.millisecondsSince1970), .integer(Int64(limit))]).compactMap { $0[0].text }
            }
        }
    }

    public func claimFiles(named names: [String]) throws(ParseError) {
        guard !names.isEmpty else { return }
        _ = try guarded {
            try db.write { conn in
                try conn.run("UPDATE _FILES SET unclaimed = 0 WHERE name IN (\(names.map { _ in "?" }.joined(separator: ",")))", names.map { .text($0) })
            }
        }
    }

    // MARK: uploads

    static let uploadColumns = "id, owner, length, offset, fileName, contentType, metadata, createdAt, expiresAt, completedName, partState, digestState, writer, writerSeenAt"

    static func decodeUpload(_ r: [SQLValue]) -> UploadRecord {
        var metadata: [String: String] = [:]
        if let text = r[6].text, let json = try? JSON.parse(text) {
            for (k, v) in json.objectValue ?? [:] { metadata[k] = v.stringValue }
        }
        return UploadRecord(id: r[0].text ?? "", owner: r[1].text ?? "", length: r[2].integer, offset: r[3].integer ?? 0,
                            fileName: r[4].text ?? "", contentType: r[5].text ?? "", metadata: metadata,
                            createdAt: ParseDate(millisecondsSince1970: r[7].integer ?? 0),
                            expiresAt: ParseDate(millisecondsSince1970: r[8].integer ?? 0), completedName: r[9].text,
                            partState: r[10].text ?? "", digestState: r[11].blob, writer: r[12].text, writerSeenAt: r[13].integer)
    }

    public func insertUpload(_ u: UploadRecord) throws(ParseError) {
        let metadata = JSON.object(u.metadata.mapValues { .string($0) }).text
        _ = try guarded {
            try db.write { conn in
                try conn.run("INSERT INTO _UPLOADS(\(Self.uploadColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,NULL,NULL)", [
                    .text(u.id), .text(u.owner), u.length.map { .integer($0) } ?? .null, .integer(u.offset), .text(u.fileName),
                    .text(u.contentType), .text(metadata), .integer(u.createdAt.millisecondsSince1970),
                    .integer(u.expiresAt.millisecondsSince1970), u.completedName.map { .text($0) } ?? .null,
                    .text(u.partState), u.digestState.map { .blob($0) } ?? .null,
                ])
            }
        }
    }

    public func upload(id: String) throws(ParseError) -> UploadRecord? {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT \(Self.uploadColumns) FROM _UPLOADS WHERE id = ?", [.text(id)]).first.map(Self.decodeUpload)
            }
        }
    }

    public func claimUploadWriter(id: String, writer: String, now: ParseDate, staleBefore: ParseDate) throws(ParseError) -> Bool {
        try guarded {
            try db.write { conn in
                try conn.run("UPDATE _UPLOADS SET writer = ?, writerSeenAt = ? WHERE id = ? AND (writer IS NULL OR writerSeenAt < ?)", [
                    .text(writer), .integer(now.millisecondsSince1970), .text(id), .integer(staleBefore.millisecondsSince1970),
                ])
            }
        } == 1
    }

    public func renewUploadWriter(id: String, writer: String, now: ParseDate) throws(ParseError) -> Bool {
        try guarded {
            try db.write { conn in
                try conn.run("UPDATE _UPLOADS SET writerSeenAt = ? WHERE id = ? AND writer = ?",
                             [.integer(now.millisecondsSince1970), .text(id), .text(writer)])
            }
        } == 1
    }

    public func releaseUploadWriter(id: String, writer: String) throws(ParseError) {
        _ = try guarded {
            try db.write { conn in
                try conn.run("UPDATE _UPLOADS SET writer = NULL, writerSeenAt = NULL WHERE id = ? AND writer = ?", [.text(id), .text(writer)])
            }
        }
    }

    public func commitUpload(_ u: UploadRecord, writer: String) throws(ParseError) -> Bool {
        try guarded {
            try db.write { conn in
                try conn.run("""
                    UPDATE _UPLOADS SET length = ?, offset = ?, expiresAt = ?, completedName = ?, partState = ?, digestState = ?,
                        contentType = ?
                    WHERE id = ? AND writer = ?
                    """, [
                    u.length.map { .integer($0) } ?? .null, .integer(u.offset), .integer(u.expiresAt.millisecondsSince1970),
                    u.completedName.map { .text($0) } ?? .null, .text(u.partState), u.digestState.map { .blob($0) } ?? .null,
                    .text(u.contentType),
                    .text(u.id), .text(writer),
                ])
            }
        } == 1
    }

    public func deleteUpload(id: String) throws(ParseError) {
        _ = try guarded { try db.write { conn in try conn.run("DELETE FROM _UPLOADS WHERE id = ?", [.text(id)]) } }
    }

    public func expiredUploads(before date: ParseDate, limit: Int) throws(ParseError) -> [UploadRecord] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT \(Self.uploadColumns) FROM _UPLOADS WHERE completedName IS NULL AND expiresAt < ? ORDER BY expiresAt LIMIT ?",
                               [.integer(date.millisecondsSince1970), .integer(Int64(limit))]).map(Self.decodeUpload)
            }
        }
    }

    // MARK: friends

    public func replaceFriends(of userFBId: String, with friendFBIds: [String], syncedAt: ParseDate) throws(ParseError) {
        try guarded {
            try writeTransaction { conn in
                try conn.run("DELETE FROM _FRIENDS WHERE userFBId = ?", [.text(userFBId)])
                for f in Set(friendFBIds) where f != userFBId {
                    try conn.run("INSERT INTO _FRIENDS(userFBId, friendFBId) VALUES (?, ?)", [.text(userFBId), .text(f)])
                }
                try conn.run("INSERT INTO _FRIEND_SYNC(userFBId, syncedAt) VALUES (?, ?) ON CONFLICT(userFBId) DO UPDATE SET syncedAt = excluded.syncedAt",
                             [.text(userFBId), .integer(syncedAt.millisecondsSince1970)])
            }
        }
    }

    public func friends(of userFBId: String) throws(ParseError) -> [String] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT friendFBId FROM _FRIENDS WHERE userFBId = ?", [.text(userFBId)]).compactMap { $0[0].text }
            }
        }
    }

    public func friendsSyncedAt(_ userFBId: String) throws(ParseError) -> ParseDate? {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT syncedAt FROM _FRIEND_SYNC WHERE userFBId = ?", [.text(userFBId)]).first?.first?.integer
                    .map { ParseDate(millisecondsSince1970: $0) }
            }
        }
    }

    public func isFriend(_ friendFBId: String, of userFBId: String) throws(ParseError) -> Bool {
        try guarded {
            try db.read { conn in
                !(try conn.query("SELECT 1 FROM _FRIENDS WHERE userFBId = ? AND friendFBId = ?", [.text(userFBId), .text(friendFBId)]).isEmpty)
            }
        }
    }

    // MARK: feed

    public func feedKeys(authors: [String]?, viewerFBId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                         scanLimit: Int) throws(ParseError) -> (keys: [FeedCursor], scannedToEnd: Bool) {
        guard limit > 0 else { return ([], true) }
        if authors == nil, strategy == .perAuthor {
            return try feedKeys(authors: [viewerFBId] + (try friends(of: viewerFBId)), viewerFBId: viewerFBId, before: before,
                                limit: limit, strategy: .perAuthor, scanLimit: scanLimit)
        }
        let cursor = before ?? FeedCursor(createdAt: Int64.max, objectId: "")
        let older = "(createdAt < ? OR (createdAt = ? AND objectId < ?))"
        let cursorArgs: [SQLValue] = [.integer(cursor.createdAt), .integer(cursor.createdAt), .text(before == nil ? "\u{10FFFF}" : cursor.objectId)]
        return try guarded {
            try db.read { conn in
                switch strategy {
                case .perAuthor:
                    // One probe per author on the covering (userFBId, createdAt, objectId) index.
                    let sql = "SELECT createdAt, objectId FROM _WALL_FEED WHERE userFBId = ? AND \(older) ORDER BY createdAt DESC, objectId DESC LIMIT ?"
                    var keys: [FeedCursor] = []
                    for author in Set(authors ?? []) {
                        try conn.forEachRow(sql, [.text(author)] + cursorArgs + [.integer(Int64(limit))]) { row in
                            keys.append(FeedCursor(createdAt: row[0].integer ?? 0, objectId: row[1].text ?? ""))
                        }
                    }
                    keys.sort(by: >)
                    return (Array(keys.prefix(limit)), true)
                case .globalScan:
                    // Newest first along the covering (createdAt, objectId, userFBId) index, at most `scanLimit`
                    // entries, keeping the viewer's and their friends' (the friend table joins as an
                    // ephemeral index), stopping at a full page.
                    var keys: [FeedCursor] = []
                    let window = "SELECT createdAt, objectId, userFBId FROM _WALL_FEED INDEXED BY i_WALL_FEED_time WHERE \(older) ORDER BY createdAt DESC, objectId DESC LIMIT ?"
                    if let authors {
                        let audience = Set(authors)
                        var scanned = 0
                        try conn.forEachRow(window, cursorArgs + [.integer(Int64(scanLimit))], until: { row in
                            scanned += 1
                            if let a = row[2].text, audience.contains(a) {
                                keys.append(FeedCursor(createdAt: row[0].integer ?? 0, objectId: row[1].text ?? ""))
                            }
                            return keys.count >= limit
                        })
                        return (keys, scanned < scanLimit || keys.count >= limit)
                    }
                    let sql = """
                        SELECT createdAt, objectId FROM (\(window))
                        WHERE userFBId = ? OR userFBId IN (SELECT friendFBId FROM _FRIENDS WHERE userFBId = ?) LIMIT ?
                        """
                    try conn.forEachRow(sql, cursorArgs + [.integer(Int64(scanLimit)), .text(viewerFBId), .text(viewerFBId), .integer(Int64(limit))]) { row in
                        keys.append(FeedCursor(createdAt: row[0].integer ?? 0, objectId: row[1].text ?? ""))
                    }
                    if keys.count >= limit { return (keys, true) }
                    // Short page: did the window reach the table's end, or the cap?
                    let windowEnd = try conn.query("SELECT count(*) FROM (\(window))", cursorArgs + [.integer(Int64(scanLimit))]).first?.first?.integer ?? 0
                    return (keys, windowEnd < Int64(scanLimit))
                }
            }
        }
    }

    public func friendCount(of userFBId: String) throws(ParseError) -> Int {
        try guarded {
            try db.read { conn in Int(try conn.query("SELECT count(*) FROM _FRIENDS WHERE userFBId = ?", [.text(userFBId)]).first?.first?.integer ?? 0) }
        }
    }

    public func comments(ofImages ids: [String], perImage: Int) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])] {
        guard !ids.isEmpty, try schema(of: "WallImageComment") != nil else { return [:] }
        let t = Self.table("WallImageComment")
        let image = SQLiteQueryCompiler.jsonPath("imageObjectId")
        return try guarded {
            try db.read { conn in
                var out: [String: (count: Int, latest: [StoredObject])] = [:]
                for id in ids {
                    let count = try conn.query("SELECT count(*) FROM \(t) WHERE \(image) = ?", [.text(id)]).first?.first?.integer ?? 0
                    var latest: [StoredObject] = []
                    if count > 0 {
                        try conn.forEachRow("SELECT \(Self.columns) FROM \(t) WHERE \(image) = ? ORDER BY createdAt DESC, objectId DESC LIMIT ?",
                                            [.text(id), .integer(Int64(perImage))]) { latest.append(try Self.decodeRow("WallImageComment", $0)) }
                    }
                    out[id] = (Int(count), latest)
                }
                return out
            }
        }
    }

    // MARK: bulk loading (demo data, benchmarks)

    /// Inserts many objects of one class in a single transaction (one fsync), checking the schema
    /// once from the first object's fields. For seeding; requests use `insert`.
    public func bulkInsert(_ objects: [StoredObject]) throws(ParseError) {
        guard let first = objects.first else { return }
        let sql = "INSERT INTO \(Self.table(first.className))(objectId, createdAt, updatedAt, doc, acl, rperm, wperm) VALUES (?,?,?,?,?,?,?)"
        try guarded {
            try writeTransaction { conn in
                try self.checkSchema(conn, first.className, first.fields)
                for o in objects {
                    try conn.run(sql, Self.encodeRow(o))
                    try self.project(conn, o)
                }
            }
        }
    }

    /// Adds friendships (both directions) and marks every user in them as synced now.
    public func bulkInsertFriendships(_ pairs: [(String, String)]) throws(ParseError) {
        let now = ParseDate.now().millisecondsSince1970
        try guarded {
            try writeTransaction { conn in
                var users = Set<String>()
                for (a, b) in pairs where a != b {
                    try conn.run("INSERT OR IGNORE INTO _FRIENDS(userFBId, friendFBId) VALUES (?, ?)", [.text(a), .text(b)])
                    try conn.run("INSERT OR IGNORE INTO _FRIENDS(userFBId, friendFBId) VALUES (?, ?)", [.text(b), .text(a)])
                    users.insert(a); users.insert(b)
                }
                for u in users {
                    try conn.run("INSERT INTO _FRIEND_SYNC(userFBId, syncedAt) VALUES (?, ?) ON CONFLICT(userFBId) DO UPDATE SET syncedAt = excluded.syncedAt",
                                 [.text(u), .integer(now)])
                }
            }
        }
    }
}
extension SQLiteAdapter: BulkLoading {
    /// Nothing: PhotoWall never runs `ANALYZE` on SQLite, so a seeded database plans as a live one
    /// (the queries that depend on an index choice name it).
    public func finishBulkLoad() throws(ParseError) {}
}
