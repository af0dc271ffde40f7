import PhotoWallCore
import PhotoWallStorage

/// Parse objects: one table per class (see `PostgresAdapter`), the schema in `"_SCHEMA"`.
extension PostgresAdapter: ObjectStore {
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
            try Self.takeDDLLock(conn)
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
        try Self.takeDDLLock(conn)
        let t = Self.table(className)
        try conn.execute("""
            CREATE TABLE IF NOT EXISTS \(t) ("objectId" text PRIMARY KEY, "createdAt" bigint NOT NULL,
                "updatedAt" bigint NOT NULL, doc jsonb NOT NULL, acl jsonb, rperm text[], wperm text[]);
            CREATE INDEX IF NOT EXISTS "i_\(className)_createdAt" ON \(t)("createdAt", "objectId");
            CREATE INDEX IF NOT EXISTS "i_\(className)_updatedAt" ON \(t)("updatedAt");
            """)
        if let p = feedProjection, className == p.imageClass { try conn.execute(Self.feedColumns(p)) }
        try conn.query("INSERT INTO \"_SCHEMA\"(\"className\", fields) VALUES ($1::text, '{}'::jsonb) ON CONFLICT DO NOTHING", [className])
        if let p = feedProjection, className == p.commentClass { try ensureCommentCounter(conn) }
        if let row = try conn.query(select, [className]).first { return Self.decodeSchema(className, row[0]) }
        return ClassSchema(className: className, fields: [:])
    }

    /// An expression index on a field: `PostgresQueryCompiler.indexExpression`, then for non-unique
    /// ones `"createdAt", "objectId"`: the order every query with `order` on `createdAt` is given (the
    /// compiler adds the `objectId` tiebreak), so a page of one field value newest first is read from
    /// the index and stops at the limit, with no sort of every matching row. An index made before the
    /// tiebreak was added, `(field, "createdAt")`, is made again.
    func createIndex(_ conn: PostgresConnection, _ schema: ClassSchema, field: String, unique: Bool) throws {
        let name = "i_\(schema.className)_\(field.replacingOccurrences(of: ".", with: "_"))"
        let expr = PostgresQueryCompiler.indexExpression(field, schema: schema)
        _ = try PostgresQueryCompiler(schema: schema).column(field)  // validates the path
        let order = unique ? "" : #", "createdAt", "objectId""#
        if !unique, let made = try conn.query("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1::text", [name]).first?[0],
           !made.hasSuffix(order + ")") {
            try conn.execute("DROP INDEX \"\(name)\"")
        }
        try conn.execute("""
            CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS "\(name)" ON \(Self.table(schema.className)) (\(expr)\(order))
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
        if var a = row[4] { acl = try a.withUTF8 { u throws(ParseError) in try ACL(storedText: u) } }
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
        paths += predicate.paths
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
