import PhotoWallCore

/// Where file bytes live. Metadata (type, size, digest) lives in the database; the store only
/// holds bytes under a name. Implementations: `FileSystemStore` (default) and `S3FileStore` (PhotoWallS3).
///
/// Writing is two-phase so that a partial file is never visible: bytes go to a private
/// temporary object, and only `commit` makes them appear under `name`.
/// - Source: parse-server `FilesAdapter` (`createFile`, `getFileData`, `deleteFile`).
public protocol FileStore: Sendable {
    /// Starts a new file. - Throws: `ParseError` 130 when the store can't accept writes.
    func makeWriter(for name: String) throws(ParseError) -> any FileWriter

    /// Where to read a stored file: a local path (sent with `sendfile`) and its size in bytes.
    /// - Returns: nil when there is no such file.
    func location(of name: String) throws(ParseError) -> FileLocation?

    /// Reads a whole file into memory (thumbnails, tests). - Throws: 101 when missing.
    func read(_ name: String) throws(ParseError) -> [UInt8]

    /// Removes a file. - Returns: false when it did not exist.
    func delete(_ name: String) throws(ParseError) -> Bool

    /// Makes the complete, durable local file at `path` (a finished upload part) the file `name`.
    /// The source is left in place; importing the same name again is a no-op (idempotent, so a
    /// completion interrupted by a crash can be redone).
    /// - Throws: 130 when the store can't take it.
    func importFile(at path: String, as name: String) throws(ParseError)

    /// A URL the client may be redirected to for the bytes of `name` (served with `contentType`),
    /// instead of PhotoWall sending them; nil to have PhotoWall send them (the default). Called only
    /// after the request passed PhotoWall's own checks; makes no request and does not check that the
    /// file exists.
    func directDownloadURL(for name: String, contentType: String) -> String?
}

extension FileStore {
    public func directDownloadURL(for name: String, contentType: String) -> String? { nil }
}

public struct FileLocation: Sendable {
    public var path: String
    public var byteCount: Int64
    public init(path: String, byteCount: Int64) { self.path = path; self.byteCount = byteCount }
}

/// A file being written. Not thread-safe: one request's body sink owns it.
public protocol FileWriter: AnyObject {
    /// Appends bytes (to the page cache; durable only after `commit`).
    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError)
    /// Bytes written so far.
    var byteCount: Int64 { get }
    /// Makes the file durable (fsync) and visible under its name (atomic rename).
    func commit() throws(ParseError)
    /// Discards everything written; safe to call more than once and after `commit` fails.
    func abort()
    /// A reader of the bytes written so far (their digest is computed by reading them back on another
    /// thread, off the thread that receives them), or nil when the store can't read them back cheaply
    /// (the default; the digest is then computed as the bytes are written).
    /// - Throws: 130 when the written bytes can't be opened.
    func openReader() throws(ParseError) -> (any WrittenBytesReader)?
}

extension FileWriter {
    public func openReader() throws(ParseError) -> (any WrittenBytesReader)? { nil }
}

/// Reads back bytes written to a file being written (an upload's part, a file before its commit),
/// by any writer of it. `Sendable`: `read` keeps no state besides its descriptor, so any thread may
/// call it.
public protocol WrittenBytesReader: Sendable {
    /// Reads up to `buffer.count` bytes at `offset` (a byte position in the file).
    /// - Returns: how many were read; fewer than asked only at the end of what was written.
    /// - Throws: 130 when the read fails.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ParseError) -> Int
}
