#if canImport(Glibc)
import Glibc
#endif
import PhotoWallCore
import PhotoWallStorage

/// Bulk loading (demo data, benchmarks), with the same signatures as `SQLiteAdapter`'s.
extension PostgresAdapter {
    /// Rows per multi-row `INSERT` (7 parameters each, well under PostgreSQL's 65,535).
    static let bulkBatchRows = 1000

    /// Inserts many objects of one class in a single transaction, checking the schema once from the
    /// first object's fields, 1,000 rows per statement. For seeding; requests use `insert`.
    /// - Throws: 111 on a schema mismatch of the first object; 137 on a duplicate objectId or unique field.
    public func bulkInsert(_ objects: [StoredObject]) throws(ParseError) {
        guard let first = objects.first else { return }
        let t = Self.table(first.className)
        try writeTransaction { conn, changes in
            try self.checkSchema(conn, first.className, first.fields, &changes)
            var start = 0
            while start < objects.count {
                let batch = objects[start..<min(start + Self.bulkBatchRows, objects.count)]
                var params: [String?] = []
                params.reserveCapacity(batch.count * 7)
                var tuples: [String] = []
                for o in batch {
                    let base = params.count
                    params += Self.encodeRow(o)
                    tuples.append("($\(base + 1)::text, $\(base + 2)::bigint, $\(base + 3)::bigint, $\(base + 4)::jsonb, $\(base + 5)::jsonb, $\(base + 6)::text[], $\(base + 7)::text[])")
                }
                try conn.query("INSERT INTO \(t)(\"objectId\", \"createdAt\", \"updatedAt\", doc, acl, rperm, wperm) VALUES " + tuples.joined(separator: ", "), params)
                start += batch.count
            }
        }
    }

    /// Adds friendships (both directions) and marks every user in them as synced now.
    public func bulkInsertFriendships(_ pairs: [(String, String)]) throws(ParseError) {
        let now = String(ParseDate.now().millisecondsSince1970)
        var from: [String] = [], to: [String] = [], users = Set<String>()
        for (a, b) in pairs where a != b {
            from += [a, b]; to += [b, a]
            users.insert(a); users.insert(b)
        }
        guard !from.isEmpty else { return }
        try writeTransaction { conn, _ in
            try conn.query("""
                INSERT INTO "_FRIENDS"("userId", "friendId") SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING
                """, [PostgresQueryCompiler.textArrayLiteral(from), PostgresQueryCompiler.textArrayLiteral(to)])
            try conn.query("""
                INSERT INTO "_FRIEND_SYNC"("userId", "syncedAt") SELECT u, $2::bigint FROM unnest($1::text[]) AS u
                ON CONFLICT ("userId") DO UPDATE SET "syncedAt" = excluded."syncedAt"
                """, [PostgresQueryCompiler.textArrayLiteral(users.sorted()), now])
        }
    }
}
extension PostgresAdapter: BulkLoading {
    /// `VACUUM ANALYZE`: statistics for the planner, and the visibility map set so the feed's
    /// index-only scans don't visit the heap (autovacuum does the same on a live database, later).
    /// VACUUM marks a page all-visible only when no snapshot still open in the database may miss its
    /// rows, and an autovacuum `ANALYZE` that began while the load's last rows were being written
    /// holds such a snapshot for seconds: then the newest pages, those the feed reads first, stay
    /// unmarked. So the tables left with unmarked pages (`pg_class.relallvisible` < `relpages`) are
    /// vacuumed again, each pass reading only those pages, up to `visibilityPasses` times, a second apart.
    public func finishBulkLoad() throws(ParseError) {
        _ = try guarded {
            try pool.withConnection { conn in
                try conn.execute("VACUUM ANALYZE")
                for _ in 0..<Self.visibilityPasses {
                    let behind = try conn.query("""
                        SELECT c.oid::regclass::text FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema())
                        AND c.relkind = 'r' AND c.relpages > 0 AND c.relallvisible < c.relpages ORDER BY 1
                        """).rows.compactMap { $0[0] }
                    if behind.isEmpty { break }
                    logger.debug("bulk load: vacuuming again, pages not yet all-visible", ["tables": behind.joined(separator: ",")])
                    usleep(1_000_000)
                    try conn.execute("VACUUM " + behind.joined(separator: ", "))
                }
            }
        }
    }

    /// How many more VACUUM passes `finishBulkLoad` makes at most for tables with pages not yet all-visible.
    static let visibilityPasses = 5
}
