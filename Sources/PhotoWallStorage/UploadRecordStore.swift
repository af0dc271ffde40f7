import PhotoWallCore

/// Resumable uploads (tus): durable state, so uploads survive restarts, and the single-writer lease
/// that lets one PATCH at a time (on any instance) move an upload's offset. Held by `UploadService`.
/// Implementations: `SQLiteAdapter`, `PostgresAdapter`.
///
/// Durability: `insertUpload`, `commitUpload`, `commitUploadReleasingWriter` and `deleteUpload` are
/// durable when they return (an acknowledged tus `Upload-Offset` survives a crash). The lease calls
/// (`claimUploadWriter`, `renewUploadWriter`, `releaseUploadWriter`) need not be: a lease lost in a
/// crash belongs to a writer that died with it, and the next durable commit makes them durable too.
public protocol UploadRecordStore: Sendable {
    /// - Throws: 137 when the id is taken.
    func insertUpload(_ upload: UploadRecord) throws(ParseError)
    /// The record, or nil when there is none.
    func upload(id: String) throws(ParseError) -> UploadRecord?
    /// Takes the upload's single-writer lease for `writer` (a fresh random token) when nobody holds
    /// it or the holder showed no progress since `staleBefore` (a dead or stalled PATCH, on any
    /// instance). - Returns: true when taken.
    func claimUploadWriter(id: String, writer: String, now: ParseDate, staleBefore: ParseDate) throws(ParseError) -> Bool
    /// Records progress of the lease holder. - Returns: false when `writer` no longer holds it.
    func renewUploadWriter(id: String, writer: String, now: ParseDate) throws(ParseError) -> Bool
    /// Gives the lease up (no-op when `writer` no longer holds it).
    func releaseUploadWriter(id: String, writer: String) throws(ParseError)
    /// Stores the record's `length`, `offset`, `expiresAt`, `completedName`, `partState`,
    /// `digestState` and `contentType` — only while `writer` holds the lease, so a preempted writer
    /// can't move the offset. - Returns: false (nothing stored) when it doesn't.
    func commitUpload(_ upload: UploadRecord, writer: String) throws(ParseError) -> Bool
    /// `commitUpload` and `releaseUploadWriter` in one durable write (a PATCH's last database write):
    /// stores the same fields and clears the lease — only while `writer` holds it.
    /// - Returns: false (nothing stored, lease untouched) when it doesn't.
    func commitUploadReleasingWriter(_ upload: UploadRecord, writer: String) throws(ParseError) -> Bool
    /// Deletes the record (no-op when there is none).
    func deleteUpload(id: String) throws(ParseError)
    /// Incomplete uploads whose `expiresAt` is before `date`, oldest first, at most `limit`.
    func expiredUploads(before date: ParseDate, limit: Int) throws(ParseError) -> [UploadRecord]
}
