import PhotoWallCore

/// Schemaless Parse objects: a schema of field types per class, ACL-filtered queries and atomic
/// read-modify-write. Held by `ObjectService` and the services that query objects directly.
///
/// Adapters translate their own failures into `ParseError` at this boundary (a unique-index
/// violation is 137; anything unexpected is 1 with the cause attached). Implementations:
/// `SQLiteAdapter` (PhotoWallSQLite, the default) and `PostgresAdapter` (PhotoWallPostgres).
/// - Source: parse-server `StorageAdapter` (`createObject`, `find`, `count`, `findOneAndUpdate`, …).
public protocol ObjectStore: Sendable {
    /// Known classes and their fields.
    func schema(of className: String) throws(ParseError) -> ClassSchema?

    /// Creates a class if missing and adds fields (idempotent). Adds expression indexes on `indexedFields`.
    func ensureClass(_ className: String, fields: [String: FieldType], indexedFields: [String], uniqueFields: [String]) throws(ParseError)

    /// Inserts a new object after checking its field types against the schema (adding new fields).
    /// - Throws: 111 on a type mismatch; 137 `A duplicate value for a field with unique values was provided` on a unique index.
    func insert(_ object: StoredObject) throws(ParseError)

    /// Objects matching the query, in order.
    func find(_ query: StoredQuery) throws(ParseError) -> [StoredObject]

    /// Calls `body` with each object matching the query, in order, as the database holds it (its
    /// fields still JSON text), for rendering without decoding.
    /// - Returns: false when the store cannot (then `body` was not called and the caller uses `find`).
    ///   The default: false.
    func forEachStoredRow(_ query: StoredQuery, _ body: (StoredRowView) -> Void) throws(ParseError) -> Bool

    /// How many objects match (ignores `limit` and `skip`).
    func count(_ query: StoredQuery) throws(ParseError) -> Int

    /// Atomically loads one object writable by `writers`, lets `transform` change it, type-checks
    /// and stores the result.
    /// - Returns: the stored object after the change.
    /// - Throws: 101 when it doesn't exist or isn't writable; what `transform` throws; 111; 137.
    func update(className: String, objectId: String, writers: PermissionSet,
                _ transform: (inout StoredObject) throws(ParseError) -> Void) throws(ParseError) -> StoredObject

    /// Deletes one object writable by `writers`. - Throws: 101 when missing or not writable.
    func delete(className: String, objectId: String, writers: PermissionSet) throws(ParseError)

    /// Deletes every object of the class matching `predicate` (internal housekeeping, e.g. sessions of a user).
    /// - Returns: how many were deleted.
    func deleteAll(className: String, predicate: Predicate) throws(ParseError) -> Int
}

extension ObjectStore {
    public func forEachStoredRow(_ query: StoredQuery, _ body: (StoredRowView) -> Void) throws(ParseError) -> Bool { false }

    /// `find` for a caller that reads only the top-level fields named in `members` of each object:
    /// each object holds those fields (when present) and its whole ACL; the text of the other fields
    /// is skipped, not decoded. Where the store doesn't hand out its rows' text (`forEachStoredRow`)
    /// or a row's text can't be read member by member, the objects are read whole (`find`) and then
    /// cut to `members`, so the answer is the same either way.
    /// - Throws: what `find` throws (a row whose ACL can't be read here is read again by `find`, which
    ///   reports it).
    public func find(_ query: StoredQuery, members: Set<String>) throws(ParseError) -> [StoredObject] {
        let wanted = StoredMembers(members)
        var out: [StoredObject] = []
        var unreadable = false
        let streamed = try forEachStoredRow(query) { row in
            guard !unreadable else { return }
            if let o = row.object(members: wanted) { out.append(o) } else { unreadable = true }
        }
        guard streamed, !unreadable else {
            return try find(query).map { (o: StoredObject) -> StoredObject in
                var cut = o
                cut.fields = o.fields.filter { members.contains($0.key) }
                return cut
            }
        }
        return out
    }
}
