import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// Bulk loading (demo data, benchmarks).
extension SQLiteAdapter: BulkLoading {
    /// Inserts many objects of one class in a single transaction (one fsync), checking the schema
    /// once from the first object's fields. For seeding; requests use `insert`.
    public func bulkInsert(_ objects: [StoredObject]) throws(ParseError) {
        guard let first = objects.first else { return }
        let sql = "INSERT INTO \(Self.table(first.className))(objectId, createdAt, updatedAt, doc, acl, rperm, wperm) VALUES (?,?,?,?,?,?,?)"
        // In objectId order: the primary-key indexes (the class table's and `_FEED`'s), which stay
        // during a bulk load, take each batch as one ordered pass instead of random page visits.
        let sorted = objects.sorted { $0.objectId < $1.objectId }
        try guarded {
            try writeTransaction { conn in
                try self.checkSchema(conn, first.className, first.fields)
                for o in sorted {
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
                    try conn.run("INSERT OR IGNORE INTO _FRIENDS(userId, friendId) VALUES (?, ?)", [.text(a), .text(b)])
                    try conn.run("INSERT OR IGNORE INTO _FRIENDS(userId, friendId) VALUES (?, ?)", [.text(b), .text(a)])
                    users.insert(a); users.insert(b)
                }
                for u in users {
                    try conn.run("INSERT INTO _FRIEND_SYNC(userId, syncedAt) VALUES (?, ?) ON CONFLICT(userId) DO UPDATE SET syncedAt = excluded.syncedAt",
                                 [.text(u), .integer(now)])
                }
            }
        }
    }
    /// Drops the secondary indexes of the class tables and of `_FEED` (not the unique ones, which
    /// keep guarding their values) and the comment-count triggers, remembering them in
    /// `_BULK_DEFERRED`, so that a bulk load appends rows instead of updating a dozen B-trees in
    /// random key order (which made seeding grow faster than the data: each batch visited more
    /// distinct index pages as the tables grew). `finishBulkLoad` builds them again, each from one
    /// sorted pass; a load that dies in between is finished when the database is next opened.
    public func beginBulkLoad() throws(ParseError) {
        try guarded {
            try writeTransaction { conn in
                let deferred = try conn.query("""
                    SELECT type, name, sql FROM sqlite_master
                    WHERE sql IS NOT NULL AND ((type = 'index' AND sql NOT LIKE 'CREATE UNIQUE %'
                          AND (tbl_name LIKE 'c\\_%' ESCAPE '\\' OR tbl_name = '_FEED'))
                       OR (type = 'trigger' AND name LIKE 't\\_%\\_feedCount\\_%' ESCAPE '\\'))
                    """)
                for row in deferred {
                    guard let type = row[0].text, let name = row[1].text, let sql = row[2].text else { continue }
                    try conn.run("INSERT OR REPLACE INTO _BULK_DEFERRED(name, sql) VALUES (?, ?)", [.text(name), .text(sql)])
                    try conn.execute("DROP \(type == "index" ? "INDEX" : "TRIGGER") \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"")
                }
            }
        }
    }

    /// Builds what `beginBulkLoad` dropped (the comment counts refilled from the comments, in one
    /// grouped pass); nothing after a load that didn't begin so. PhotoWall never runs `ANALYZE` on
    /// SQLite, so a seeded database plans as a live one (the queries that depend on an index choice name it).
    ///
    /// Then checkpoints the WAL into the database file and empties it (`wal_checkpoint(TRUNCATE)`):
    /// the load's last transactions, the rebuilt indexes above all, would otherwise stay in the WAL
    /// (576 MB after a 1M-image seed, 2.3 GB after 4M) until enough later writes checkpoint it, and
    /// a page found in the WAL is read with `pread` into each reader's small page cache instead of
    /// through the readers' map of the database file (`SQLiteDatabase.readerMmapBytes`).
    /// - Source: https://sqlite.org/wal.html ("WAL … pages … are not memory-mapped"), https://sqlite.org/pragma.html#pragma_wal_checkpoint
    public func finishBulkLoad() throws(ParseError) {
        try guarded {
            try writeTransaction { conn in try self.restoreDeferred(conn) }
            try db.writeAlone { conn in try conn.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        }
    }

    /// Recreates the indexes `beginBulkLoad` dropped; the comment counts are rebuilt by `ensureCommentCounter`.
    func restoreDeferred(_ conn: SQLiteConnection) throws {
        for row in try conn.query("SELECT name, sql FROM _BULK_DEFERRED ORDER BY name") {
            guard let sql = row[1].text else { continue }
            if sql.hasPrefix("CREATE INDEX") { try conn.execute(sql) }
        }
        try conn.execute("DELETE FROM _BULK_DEFERRED")
        try ensureCommentCounter(conn)
    }
}
