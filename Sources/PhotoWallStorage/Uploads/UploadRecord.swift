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
    /// The part store's own state for the bytes up to `offset` (opaque to everyone else; empty for
    /// the filesystem store, the multipart upload and its parts for S3). Committed with `offset`.
    public var partState: String
    /// The SHA-256 of the bytes up to `offset`, saved mid-way (`ResumableSHA256.state`), so any
    /// instance can continue it; nil for uploads made before it was kept.
    public var digestState: [UInt8]?
    /// The lease token of the PATCH writing the upload, and when it last showed progress (ms since
    /// 1970). Read-only here: taken and released with `UploadRecordStore.claimUploadWriter`/`releaseUploadWriter`.
    public var writer: String?
    public var writerSeenAt: Int64?

    public init(id: String, owner: String, length: Int64?, offset: Int64, fileName: String, contentType: String,
                metadata: [String: String], createdAt: ParseDate, expiresAt: ParseDate, completedName: String? = nil,
                partState: String = "", digestState: [UInt8]? = nil, writer: String? = nil, writerSeenAt: Int64? = nil) {
        self.id = id; self.owner = owner; self.length = length; self.offset = offset; self.fileName = fileName
        self.contentType = contentType; self.metadata = metadata; self.createdAt = createdAt
        self.expiresAt = expiresAt; self.completedName = completedName
        self.partState = partState; self.digestState = digestState; self.writer = writer; self.writerSeenAt = writerSeenAt
    }

    public var isComplete: Bool { completedName != nil }
}

/// Where the bytes of unfinished uploads live until they become Parse files.
///
/// Implementations: `FileSystemUploadParts` (a part file per upload, for one instance or a shared
/// filesystem) and `S3UploadParts` (an S3 multipart upload per tus upload, so chunks can land on
/// any instance). A store may keep state of its own (`UploadRecord.partState`): it is handed out by
/// `create` and `UploadPartWriter.sync` and committed to the database together with the offset, so
/// the database alone says which bytes count — whatever a crashed or preempted writer left beyond
/// the committed state is ignored and cleaned up.
public protocol UploadPartStore: Sendable {
    /// Creates an empty part for upload `id`, whose bytes will become the file `finalName`.
    /// - Returns: the initial `partState`. - Throws: 130 when the store refuses.
    func create(_ id: String, finalName: String) throws(ParseError) -> String
    /// Opens the part for appending at `offset`, the committed offset whose state is `state`;
    /// anything stored beyond it is discarded.
    /// - Throws: 130 when the part can't be opened (missing, or the store is down).
    func openForAppend(_ id: String, at offset: Int64, state: String) throws(ParseError) -> any UploadPartWriter
    /// Makes the complete part (`length` bytes, committed state `state`) the file `name` in `store`.
    /// Idempotent: a completion interrupted by a crash can be redone.
    /// - Throws: 130 when the store can't take it.
    func complete(_ id: String, length: Int64, state: String, as name: String, into store: any FileStore) throws(ParseError)
    /// Removes the part and anything left of it; no error when already gone.
    func remove(_ id: String, state: String)
    /// Removes leftovers no upload record refers to: storage of upload ids for which `isLive` is
    /// false, last changed before `cutoff`. A crash between deleting a record and `remove`, or between
    /// `create` and saving the record, leaves such storage behind (and, for the S3 store, a `POST
    /// /files` writer that died mid-body leaves a multipart upload).
    /// - Returns: how many leftovers were removed.
    /// - Throws: when the store can't be listed (130), or what `isLive` throws.
    func removeOrphans(before cutoff: ParseDate, isLive: (String) throws -> Bool) throws -> Int
    /// Whether two writers may append to one part at once at known, adjacent offsets (a pipelined
    /// PATCH writes behind one still committing; see `UploadAppend`): true for a local file, which
    /// takes writes at any offset; false (the default) for stores whose parts are sequential objects.
    var supportsPipelinedAppends: Bool { get }
    /// A reader of the part's bytes as they are written (the upload's digests are computed by reading
    /// them back on another thread, off the thread that receives them), or nil when the store can't
    /// read a part back cheaply (the default; its digests are computed as the bytes are written).
    /// - Throws: 130 when the part can't be opened.
    func openForReading(_ id: String, state: String) throws(ParseError) -> (any WrittenBytesReader)?
}

extension UploadPartStore {
    public var supportsPipelinedAppends: Bool { false }
    public func openForReading(_ id: String, state: String) throws(ParseError) -> (any WrittenBytesReader)? { nil }
}

extension UploadPartStore {
    /// The upload id a stored name starts with: 32 lowercase hex digits, then `.`, `_` or `/`
    /// (`<id>.part`, `<id>_photo.jpg`, `<id>/tail-…`); nil otherwise.
    public static func uploadID(prefixing name: Substring) -> String? {
        let id = name.prefix(32)
        guard id.count == 32, id.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }),
              let next = name.dropFirst(32).first, next == "." || next == "_" || next == "/" else { return nil }
        return String(id)
    }
}

/// Appends to one part. Used by one request at a time.
public protocol UploadPartWriter: AnyObject {
    /// Appends bytes (not yet durable).
    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError)
    /// Makes everything written durable.
    /// - Returns: the part's size in bytes and the `partState` to commit with it.
    func sync() throws(ParseError) -> (size: Int64, state: String)
    /// Makes what was written durable ahead of `sync`, where that is safe before the upload's lease
    /// is checked (it writes nothing others read): a local file's `fdatasync`, so that a pipelined
    /// PATCH's sync overlaps the commit of the one before it and `sync` then finds little left to do.
    /// The default does nothing: a store whose `sync` writes shared storage waits for the lease check.
    /// - Throws: 130 when the bytes can't be made durable (the request then fails, as with `sync`).
    func syncAhead() throws(ParseError)
    /// Drops everything written since the part was opened (a rejected chunk), keeping the part as
    /// it was at the offset it was opened at.
    func discard() throws(ParseError)
    func close()
}

extension UploadPartWriter {
    public func syncAhead() throws(ParseError) {}
}
