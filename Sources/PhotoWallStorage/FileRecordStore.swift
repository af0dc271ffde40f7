import PhotoWallCore

/// File metadata (`FileRecord`): one row per stored Parse file, written once its bytes are durable
/// in the `FileStore`. Held by `FileService`, `UploadService` (a finished upload becomes a file) and
/// `ObjectService` (a File value a client writes must be the caller's own upload).
/// Implementations: `SQLiteAdapter`, `PostgresAdapter`.
public protocol FileRecordStore: Sendable {
    /// - Throws: 137 when a file of that name is already recorded.
    func insertFile(_ record: FileRecord) throws(ParseError)
    /// Records several files at once: all of them or (on a throw) none.
    /// - Throws: 137 when one of the names is already recorded.
    func insertFiles(_ records: [FileRecord]) throws(ParseError)
    /// The record, or nil when there is none.
    func file(named name: String) throws(ParseError) -> FileRecord?
    /// - Returns: false when there was no such file.
    func deleteFile(named name: String) throws(ParseError) -> Bool
    /// Names of up to `limit` files whose `owner` is `owner` (a `_User` objectId), oldest first.
    func fileNames(ownedBy owner: String, limit: Int) throws(ParseError) -> [String]
    /// The files of `owner` (a `_User` objectId) whose content is one of `digests` (lowercase hex
    /// SHA-256, at most 1000), in no particular order; an index probe on (`owner`, `sha256`).
    /// Used by the upload's duplicate check (the wall's `duplicates` function).
    func files(ownedBy owner: String, sha256 digests: [String]) throws(ParseError) -> [FileRecord]
    /// Names of up to `limit` files still `unclaimed`, recorded before `date`, oldest first.
    func unclaimedFileNames(before date: ParseDate, limit: Int) throws(ParseError) -> [String]
    /// Clears `unclaimed` on the named files (their object is stored). Need not be durable when it
    /// returns: a claim a crash loses is redone by the unclaimed sweep, which claims the files an
    /// object names instead of removing them.
    func claimFiles(named names: [String]) throws(ParseError)
}

extension FileRecordStore {
    /// One `insertFile` per record, removing those already recorded when one fails. Adapters that
    /// can make it one transaction (one durable commit) do.
    public func insertFiles(_ records: [FileRecord]) throws(ParseError) {
        for (i, record) in records.enumerated() {
            do throws(ParseError) { try insertFile(record) } catch {
                for done in records[..<i] { _ = try? deleteFile(named: done.name) }
                throw error
            }
        }
    }
}
