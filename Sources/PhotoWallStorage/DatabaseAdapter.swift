import PhotoWallCore

/// What the services need from a database: schemaless Parse objects with a schema of field
/// types, ACL-filtered queries, atomic read-modify-write, and file metadata.
///
/// Adapters translate their own failures into `ParseError` at this boundary (a unique-index
/// violation is 137; anything unexpected is 1 with the cause attached). Implementations:
/// `SQLiteAdapter` (default); PostgreSQL follows in a later issue.
/// - Source: parse-server `StorageAdapter` (`createObject`, `find`, `count`, `findOneAndUpdate`, …).
public protocol DatabaseAdapter: Sendable {
    /// Known classes and their fields.
    func schema(of className: String) throws(ParseError) -> ClassSchema?

    /// Creates a class if missing and adds fields (idempotent). Adds expression indexes on `indexedFields`.
    func ensureClass(_ className: String, fields: [String: FieldType], indexedFields: [String], uniqueFields: [String]) throws(ParseError)

    /// Inserts a new object after checking its field types against the schema (adding new fields).
    /// - Throws: 111 on a type mismatch; 137 `A duplicate value for a field with unique values was provided` on a unique index.
    func insert(_ object: StoredObject) throws(ParseError)

    /// Objects matching the query, in order.
    func find(_ query: StoredQuery) throws(ParseError) -> [StoredObject]

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
    func deleteAll(className: String, predicate: Predicate) throws(ParseError) -> Int

    func insertFile(_ record: FileRecord) throws(ParseError)
    func file(named name: String) throws(ParseError) -> FileRecord?
    /// - Returns: false when there was no such file.
    func deleteFile(named name: String) throws(ParseError) -> Bool
    /// Names of up to `limit` files whose `owner` is `owner` (a `_User` objectId), oldest first.
    func fileNames(ownedBy owner: String, limit: Int) throws(ParseError) -> [String]
    /// The files of `owner` (a `_User` objectId) whose content is one of `digests` (lowercase hex
    /// SHA-256, at most 1000), in no particular order; an index probe on (`owner`, `sha256`).
    /// Used by the upload's duplicate check (`Wall`'s `duplicates` function).
    func files(ownedBy owner: String, sha256 digests: [String]) throws(ParseError) -> [FileRecord]
    /// Names of up to `limit` files still `unclaimed`, recorded before `date`, oldest first.
    func unclaimedFileNames(before date: ParseDate, limit: Int) throws(ParseError) -> [String]
    /// Clears `unclaimed` on the named files (their object is stored).
    func claimFiles(named names: [String]) throws(ParseError)

    // Resumable uploads (tus): durable state, so uploads survive restarts.
    func insertUpload(_ upload: UploadRecord) throws(ParseError)
    func upload(id: String) throws(ParseError) -> UploadRecord?
    /// Takes the upload's single-writer lease for `writer` (a fresh random token) when nobody holds
    /// it or the holder showed no progress since `staleBefore` (a dead or stalled PATCH, on any
    /// instance). - Returns: true when taken.
    func claimUploadWriter(id: String, writer: String, now: ParseDate, staleBefore: ParseDate) throws(ParseError) -> Bool
    /// Records progress of the lease holder. - Returns: false when `writer` no longer holds it.
    func renewUploadWriter(id: String, writer: String, now: ParseDate) throws(ParseError) -> Bool
    /// Gives the lease up (no-op when `writer` no longer holds it).
    func releaseUploadWriter(id: String, writer: String) throws(ParseError)
    /// Stores the record's `length`, `offset`, `expiresAt`, `completedName`, `partState` and
    /// `digestState` — only while `writer` holds the lease, so a preempted writer can't move the
    /// offset. - Returns: false (nothing stored) when it doesn't.
    func commitUpload(_ upload: UploadRecord, writer: String) throws(ParseError) -> Bool
    func deleteUpload(id: String) throws(ParseError)
    /// Incomplete uploads whose `expiresAt` is before `date`, oldest first.
    func expiredUploads(before date: ParseDate, limit: Int) throws(ParseError) -> [UploadRecord]
}
