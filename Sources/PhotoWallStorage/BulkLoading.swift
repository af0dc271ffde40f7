import PhotoWallCore

/// Loading many rows at once, for demo data and benchmarks (`photowall seed-demo`); requests use
/// `ObjectStore.insert`. Implementations: `SQLiteAdapter`, `PostgresAdapter`.
public protocol BulkLoading: ObjectStore, FriendGraphStore {
    /// Inserts many objects of one class in one transaction, checking the schema once from the
    /// first object's fields. - Throws: 111 on a schema mismatch; 137 on a duplicate objectId.
    func bulkInsert(_ objects: [StoredObject]) throws(ParseError)
    /// Adds friendships (both directions) and marks every user in them as synced now.
    func bulkInsertFriendships(_ pairs: [(String, String)]) throws(ParseError)
    /// After a bulk load: refreshes the planner's statistics (`ANALYZE`), so the first queries get
    /// the plans they will get later.
    func finishBulkLoad() throws(ParseError)
}
