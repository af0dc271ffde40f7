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
    /// Nothing: PhotoWall never runs `ANALYZE` on SQLite, so a seeded database plans as a live one
    /// (the queries that depend on an index choice name it).
    public func finishBulkLoad() throws(ParseError) {}
}
