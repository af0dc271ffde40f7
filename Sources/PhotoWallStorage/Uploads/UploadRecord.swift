import PhotoWallCore

/// The durable state of one resumable (tus) upload, kept in the database so an upload survives
/// a server restart. - Source: tus 1.0.0 §Core Protocol, §Creation, §Expiration.
public struct UploadRecord: Sendable, Equatable {
    /// 32 lowercase hex; the last segment of the upload URL.
    public var id: String
    /// The `_User` objectId that created it, or `*master*` for the master key.
    public var owner: String
    /// `Upload-Length` in bytes; nil while deferred (`Upload-Defer-Length: 1`).
    public var length: Int64?
    /// Bytes received and durable (fsynced): what HEAD reports as `Upload-Offset`.
    public var offset: Int64
    /// The client's file name (validated like `/files/:name`) and content type, from `Upload-Metadata`.
    public var fileName: String
    public var contentType: String
    /// `Upload-Metadata` as sent, decoded (key → value).
    public var metadata: [String: String]
    public var createdAt: ParseDate
    /// After this the upload is gone (410) and the reaper removes it.
    public var expiresAt: ParseDate
    /// The stored Parse file name once complete.
    public var completedName: String?

    public init(id: String, owner: String, length: Int64?, offset: Int64, fileName: String, contentType: String,
                metadata: [String: String], createdAt: ParseDate, expiresAt: ParseDate, completedName: String? = nil) {
        self.id = id; self.owner = owner; self.length = length; self.offset = offset; self.fileName = fileName
        self.contentType = contentType; self.metadata = metadata; self.createdAt = createdAt
        self.expiresAt = expiresAt; self.completedName = completedName
    }

    public var isComplete: Bool { completedName != nil }
}

/// Where the bytes of unfinished uploads live until they become Parse files.
///
/// Implementations: `FileSystemUploadParts` (a part file per upload under `uploads/`); an S3
/// multipart version follows with the S3 store.
public protocol UploadPartStore: Sendable {
    /// Creates an empty part. - Throws: 130 when the disk refuses.
    func create(_ id: String) throws(ParseError)
    /// Opens the part for appending at `offset`, discarding anything past it (bytes written but
    /// never made durable, or a chunk that failed its checksum).
    func openForAppend(_ id: String, at offset: Int64) throws(ParseError) -> any UploadPartWriter
    /// Bytes in the part, or nil when it doesn't exist.
    func size(of id: String) -> Int64?
    /// A local path holding the part's bytes (for hashing and handing to the file store).
    func path(of id: String) -> String
    /// Removes the part; no error when already gone.
    func remove(_ id: String)
}

/// Appends to one part. Used by one request at a time.
public protocol UploadPartWriter: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError)
    /// Makes everything written durable. - Returns: the part's size in bytes.
    func sync() throws(ParseError) -> Int64
    /// Cuts the part back to `length` bytes (a rejected chunk) and syncs.
    func truncate(to length: Int64) throws(ParseError)
    func close()
}
