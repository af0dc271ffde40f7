import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// Schema versions (`PRAGMA user_version` = how many of `migrations` ran) and the tables every
/// database has. A migration never changes once released: databases made by any earlier version
/// open and are brought up to date in one transaction per step.
extension SQLiteAdapter {
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
        -- The feed projection (see `SQLiteAdapter+Feed`), named `_FEED(…, author)` since version 8.
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
        // App-blind names: the feed table and the friend graph name no field of the app
        // (`_WALL_FEED.userFBId` was the image's author field; the friend ids are any provider's).
        """
        ALTER TABLE _WALL_FEED RENAME TO _FEED;
        ALTER TABLE _FEED RENAME COLUMN userFBId TO author;
        DROP INDEX IF EXISTS i_WALL_FEED_author;
        DROP INDEX IF EXISTS i_WALL_FEED_time;
        CREATE INDEX IF NOT EXISTS i_FEED_author ON _FEED(author, createdAt, objectId);
        CREATE INDEX IF NOT EXISTS i_FEED_time ON _FEED(createdAt, objectId, author);
        ALTER TABLE _FRIENDS RENAME COLUMN userFBId TO userId;
        ALTER TABLE _FRIENDS RENAME COLUMN friendFBId TO friendId;
        ALTER TABLE _FRIEND_SYNC RENAME COLUMN userFBId TO userId;
        """,
        // A user's files by content (`files(ownedBy:sha256:)`, the upload's duplicate check).
        """
        CREATE INDEX IF NOT EXISTS i_FILES_owner_sha256 ON _FILES(owner, sha256) WHERE owner IS NOT NULL;
        """,
        // Each image's comment count, kept by triggers on the comment class (`SQLiteAdapter+Feed`,
        // `ensureCommentCounter`, which also fills it from the comments a database already has).
        """
        CREATE TABLE IF NOT EXISTS _FEED_COMMENTS (imageId TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;
        """,
        // What a bulk load dropped until it finishes (`SQLiteAdapter+Bulk`).
        """
        CREATE TABLE IF NOT EXISTS _BULK_DEFERRED (name TEXT PRIMARY KEY, sql TEXT NOT NULL);
        """,
    ]

    func migrate() throws(ParseError) {
        try guarded {
            try db.write { conn in
                let version = try conn.query("PRAGMA user_version").first?.first?.integer ?? 0
                for (i, sql) in Self.migrations.enumerated() where i >= Int(version) {
                    try conn.transaction {
                        try conn.execute(sql)
                        if i == 3, let p = self.feedProjection,
                           try !conn.query("SELECT 1 FROM sqlite_master WHERE name = ?", [.text("c_" + p.imageClass)]).isEmpty {
                            // Databases from before the feed table: fill it from the existing images.
                            try conn.execute("INSERT OR IGNORE INTO _WALL_FEED SELECT objectId, createdAt, \(SQLiteQueryCompiler.jsonPath(p.authorField)) FROM \(Self.table(p.imageClass))")
                        }
                        try conn.execute("PRAGMA user_version = \(i + 1)")
                    }
                }
                try conn.transaction { try self.restoreDeferred(conn) }
                try self.reloadSchemas(conn)
            }
        }
    }
}
