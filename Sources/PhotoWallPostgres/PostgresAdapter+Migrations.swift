import PhotoWallCore
import PhotoWallStorage

/// Schema versions (`"_MIGRATIONS"`) and the tables every database has.
extension PostgresAdapter {
    /// The schema steps, in order; `"_MIGRATIONS"` records how many ran. A released step never
    /// changes; the feed step's text depends on the projection (see `feedColumns`).
    static func migrations(_ feed: FeedProjection?) -> [String] { [
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
        // The feed projection (see `feedColumns`) on an image table made before it.
        feed.map { p in
            """
            DO $$ BEGIN
              IF to_regclass('\(table(p.imageClass))') IS NOT NULL THEN
                \(feedColumns(p))
              END IF;
            END $$;
            """
        } ?? "SELECT 1",
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
        // App-blind names for the friend graph (the ids are any provider's, not only Facebook's).
        """
        ALTER TABLE "_FRIENDS" RENAME COLUMN "userFBId" TO "userId";
        ALTER TABLE "_FRIENDS" RENAME COLUMN "friendFBId" TO "friendId";
        ALTER TABLE "_FRIEND_SYNC" RENAME COLUMN "userFBId" TO "userId";
        """,
        // A user's files by content (`files(ownedBy:sha256:)`, the upload's duplicate check).
        """
        CREATE INDEX IF NOT EXISTS "i_FILES_owner_sha256" ON "_FILES"(owner, sha256) WHERE owner IS NOT NULL;
        """,
        // Each image's comment count, kept by a trigger on the comment class (`PostgresAdapter+Feed`,
        // `ensureCommentCounter`, which also fills it from the comments a database already has).
        """
        CREATE TABLE IF NOT EXISTS "_FEED_COMMENTS" ("imageId" text PRIMARY KEY, count bigint NOT NULL);
        """,
        // Live events too large for a NOTIFY payload (`PostgresChangeNotifier`), kept a short while.
        """
        CREATE TABLE IF NOT EXISTS "_LIVE_EVENTS" (id bigserial PRIMARY KEY, payload text NOT NULL, "createdAt" bigint NOT NULL);
        CREATE INDEX IF NOT EXISTS "i_LIVE_EVENTS_createdAt" ON "_LIVE_EVENTS"("createdAt");
        """,
    ] }

    /// The friend feed's own columns on the image class: its author (`FeedProjection.authorField`)
    /// as a stored generated column `"feedAuthor"`, so both feed forms run as index-only scans —
    /// `("feedAuthor", "createdAt", "objectId")` per author, `("createdAt", "objectId") INCLUDE
    /// ("feedAuthor")` newest first — where an expression index on `doc->>'<author>'` would fetch
    /// every row from the heap (PostgreSQL plans index-only scans only when every column a query
    /// needs is in the index: docs §11.9). Idempotent.
    static func feedColumns(_ p: FeedProjection) -> String {
        let t = table(p.imageClass)
        return """
            ALTER TABLE \(t) ADD COLUMN IF NOT EXISTS "feedAuthor" text GENERATED ALWAYS AS (\(PostgresQueryCompiler.textPath(p.authorField))) STORED;
            CREATE INDEX IF NOT EXISTS "\(indexName(p.imageClass, "feedAuthor"))" ON \(t)("feedAuthor", "createdAt" DESC, "objectId" DESC);
            CREATE INDEX IF NOT EXISTS "\(indexName(p.imageClass, "feedTime"))" ON \(t)("createdAt" DESC, "objectId" DESC) INCLUDE ("feedAuthor");
            """
    }

    /// `i_<Class>_<suffix>`, the name of a class table's index.
    static func indexName(_ className: String, _ suffix: String) -> String {
        "i_\(className.replacingOccurrences(of: "\"", with: "\"\""))_\(suffix)"
    }

    func migrate() throws(ParseError) {
        try guarded {
            try pool.withConnection { conn in
                try conn.transaction {
                    try Self.takeDDLLock(conn)
                    try conn.execute("CREATE TABLE IF NOT EXISTS \"_MIGRATIONS\" (version integer PRIMARY KEY, \"appliedAt\" timestamptz NOT NULL DEFAULT now())")
                    let version = Int(try conn.query("SELECT coalesce(max(version), 0) FROM \"_MIGRATIONS\"").first?[0] ?? "0") ?? 0
                    for (i, sql) in Self.migrations(feedProjection).enumerated() where i >= version {
                        try conn.execute(sql)
                        try conn.query("INSERT INTO \"_MIGRATIONS\"(version) VALUES ($1::integer)", [String(i + 1)])
                    }
                    try self.ensureCommentCounter(conn)
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
}
