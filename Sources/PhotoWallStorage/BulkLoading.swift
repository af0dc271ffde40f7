import PhotoWallCore

/// Loading many rows at once, for demo data and benchmarks (`photowall seed-demo`); requests use
/// `ObjectStore.insert`. Implementations: `SQLiteAdapter`, `PostgresAdapter`.
public protocol BulkLoading: ObjectStore, FriendGraphStore {
    /// Inserts many objects of one class in one transaction, checking the schema once from the
    /// first object's fields. - Throws: 111 on a schema mismatch; 137 on a duplicate objectId.
    func bulkInsert(_ objects: [StoredObject]) throws(ParseError)
    /// Adds friendships (both directions) and marks every user in them as synced now.
    func bulkInsertFriendships(_ pairs: [(String, String)]) throws(ParseError)
    /// Before a bulk load (optional): lets the store set aside what makes row-by-row loading slow
    /// (SQLite: secondary indexes and counter triggers); `finishBulkLoad` puts it back.
    func beginBulkLoad() throws(ParseError)
    /// After a bulk load: rebuilds what `beginBulkLoad` set aside; refreshes the planner's statistics (`ANALYZE`), so the first queries get
    /// the plans they will get later.
    func finishBulkLoad() throws(ParseError)
}

extension BulkLoading {
    public func beginBulkLoad() throws(ParseError) {}
}
