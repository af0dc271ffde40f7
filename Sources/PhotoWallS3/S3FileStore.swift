import PhotoWallCore
import PhotoWallStorage
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Parse files in an S3 bucket, as objects `<keyPrefix><name>` (default `files/<name>`).
///
/// - Writes never show a partial file: a writer streams the body into a multipart upload,
///   `partBytes` at a time (one part buffered in memory), and only `commit` completes it; a file
///   smaller than one part goes as one PutObject at `commit`. `abort` aborts the upload.
/// - Reads for the HTTP layer (`location`) go through a bounded local cache (`S3ReadCache`)
///   under `cacheDirectory`, since responses are sent from a local path with `sendfile`.
/// - Failures become `ParseError`s: 130 for writes, 153 for deletes, 100 when S3 is unreachable
///   on a read, 1 for other read failures; the `S3Error` is kept as the cause.
/// - Source: parse-server `S3Adapter` (object per file under a prefix); FileStore's contract.
public final class S3FileStore: FileStore {
    public let client: S3Client
    /// Prepended to every file name to form the object key.
    public let keyPrefix: String
    /// Size of each multipart part, in bytes (≥ 5 MiB).
    public let partBytes: Int
    let cache: S3ReadCache

    /// - Parameters:
    ///   - client: the bucket.
    ///   - keyPrefix: e.g. `files/`; may be empty.
    ///   - cacheDirectory: local folder for the read cache (created; e.g. `<data dir>/s3-cache`).
    ///   - cacheLimitBytes: total size the cache keeps (default 1 GiB); least recently used first out.
    ///   - partBytes: multipart part size, clamped to at least `S3Client.minimumPartBytes` (default 8 MiB).
    /// - Throws: `ParseError` 1 when the cache folder can't be created.
    public init(client: S3Client, keyPrefix: String = "files/", cacheDirectory: String,
                cacheLimitBytes: Int64 = 1 << 30, partBytes: Int = 8 << 20) throws(ParseError) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.partBytes = max(partBytes, S3Client.minimumPartBytes)
        cache = try S3ReadCache(directory: cacheDirectory, limitBytes: cacheLimitBytes)
    }

    /// The object key of a file name.
    public func key(_ name: String) -> String { keyPrefix + name }

    /// Checks at startup that the bucket exists and the credentials work.
    /// - Throws: `ParseError` 100 with a message for people: unreachable endpoint, refused
    ///   credentials, or missing bucket.
    public func checkReachable() throws(ParseError) {
        let c = client.configuration
        do {
            guard try client.bucketExists() else {
                throw ParseError(.connectionFailed, "S3 bucket '\(c.bucket)' does not exist at \(c.endpoint).")
            }
            // HeadBucket may pass with some permission setups; a listing proves the signature is accepted.
            _ = try client.listObjectsV2(prefix: keyPrefix, maxKeys: 1)
        } catch let e as S3Error {
            let why: String
            if e.code == .connectionFailed || e.code == .transport { why = "cannot reach \(c.endpoint) (\(e.message))" }
            else if e.isAuthorizationFailure { why = "the credentials (AWS_ACCESS_KEY_ID \(c.credentials.accessKeyId)) were refused: \(e.code)" }
            else { why = e.description }
            throw ParseError(.connectionFailed, "S3 bucket '\(c.bucket)': \(why).", cause: e)
        } catch let e as ParseError {
            throw e
        } catch {
            throw ParseError(.connectionFailed, "S3: \(error)")
        }
    }

    /// Starts a file; nothing is sent until one part (`partBytes`) has arrived.
    /// - Returns: an `S3FileWriter` (streams multipart parts; `commit` completes, `abort` aborts).
    public func makeWriter(for name: String) throws(ParseError) -> any FileWriter {
        S3FileWriter(store: self, name: name)
    }

    /// The local cached copy of `name` (downloaded on a miss, to a temporary file renamed into place).
    /// - Returns: the cache path and size in bytes; nil when there is no such object.
    /// - Throws: `ParseError` 100 when S3 is unreachable, 1 for other failures.
    public func location(of name: String) throws(ParseError) -> FileLocation? {
        if let hit = cache.lookup(name) { return hit }
        let key = key(name)
        return try cache.fill(name) { (fd) throws(ParseError) -> Bool in
            do throws(S3Error) {
                _ = try client.getObject(key: key, toFileDescriptor: fd)
                return true
            } catch where error.code == .noSuchKey || error.httpStatus == 404 {
                return false
            } catch {
                throw error.parseError(.read, name: name)
            }
        }
    }

    /// Reads a whole file (thumbnails, tests). - Throws: 101 when missing, 100/1 as above.
    public func read(_ name: String) throws(ParseError) -> [UInt8] {
        do {
            return try client.getObject(key: key(name), maxBytes: Int.max)
        } catch where error.code == .noSuchKey || error.httpStatus == 404 {
            throw ParseError.objectNotFound()
        } catch {
            throw error.parseError(.read, name: name)
        }
    }

    /// Deletes the object and its cached copy. - Returns: false when there was no such object (HEAD first).
    public func delete(_ name: String) throws(ParseError) -> Bool {
        cache.remove(name)
        do {
            guard try client.headObject(key: key(name)) != nil else { return false }
            try client.deleteObject(key: key(name))
            return true
        } catch {
            throw error.parseError(.delete, name: name)
        }
    }

    /// Uploads the local file at `path` as `name` (multipart when larger than one part). When an
    /// object of the same size is already there, nothing is sent (idempotent).
    public func importFile(at path: String, as name: String) throws(ParseError) {
        let key = key(name)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ParseError(.fileSaveError, "Could not store file: \(name).", cause: POSIXFailure(call: "open", code: errno)) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ParseError(.fileSaveError, "Could not store file: \(name).", cause: POSIXFailure(call: "fstat", code: errno)) }
        let size = Int64(st.st_size)
        do throws(S3Error) {
            if let existing = try client.headObject(key: key), existing.byteCount == size { return }
            if size <= Int64(partBytes) {
                _ = try client.putObject(key: key, fileDescriptor: fd, length: size)
                return
            }
            let uploadId = try client.createMultipartUpload(key: key)
            do throws(S3Error) {
                var parts: [S3CompletedPart] = []
                var offset: Int64 = 0
                while offset < size {
                    let length = min(Int64(partBytes), size - offset)
                    let etag = try client.uploadPart(key: key, uploadId: uploadId, partNumber: parts.count + 1,
                                                     fileDescriptor: fd, offset: offset, length: length)
                    parts.append(S3CompletedPart(partNumber: parts.count + 1, etag: etag))
                    offset += length
                }
                _ = try client.completeMultipartUpload(key: key, uploadId: uploadId, parts: parts)
            } catch {
                try? client.abortMultipartUpload(key: key, uploadId: uploadId)
                throw error
            }
        } catch {
            throw error.parseError(.write, name: name)
        }
    }
}

/// One file being written to S3 (see `S3FileStore`). Not thread-safe: one request body owns it.
///
/// A full part is uploaded on a background thread while the next one fills, so receiving the body
/// and sending it to S3 overlap; `write` waits for the previous part before starting another, so
/// at most two parts (`2 × partBytes`) are held in memory per writer.
final class S3FileWriter: FileWriter {
    let store: S3FileStore
    let name: String
    let key: String
    /// At most one part (`store.partBytes`) of bytes not yet handed to an upload.
    var buffer: [UInt8] = []
    var uploadId: String?
    var parts: [S3CompletedPart] = []
    /// The part being uploaded in the background, if any.
    var inFlight: PartUpload?
    private(set) var byteCount: Int64 = 0
    var done = false

    init(store: S3FileStore, name: String) {
        self.store = store; self.name = name; key = store.key(name)
    }

    deinit { abort() }

    func fail(_ e: S3Error) -> ParseError { e.parseError(.write, name: name) }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        guard !done else { throw ParseError(.fileSaveError, "Could not store file: \(name).") }
        var rest = bytes[...]
        while !rest.isEmpty {
            if buffer.capacity < store.partBytes { buffer.reserveCapacity(store.partBytes) }
            let take = min(rest.count, store.partBytes - buffer.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            byteCount += Int64(take)
            // A full part goes out only when more bytes follow it: the last part may then be short,
            // and a file of exactly one part stays a single PutObject.
            if buffer.count == store.partBytes && !rest.isEmpty { try startPart() }
        }
        if buffer.count == store.partBytes && uploadId != nil { try startPart() }
    }

    /// Waits for the part in flight, if any, and records its ETag.
    private func finishInFlight() throws(S3Error) {
        guard let part = inFlight else { return }
        inFlight = nil
        parts.append(S3CompletedPart(partNumber: part.number, etag: try part.wait().get()))
    }

    /// Hands the full buffer to a background upload (after the previous one has finished).
    private func startPart() throws(ParseError) {
        do throws(S3Error) {
            if uploadId == nil { uploadId = try store.client.createMultipartUpload(key: key) }
            try finishInFlight()
            let number = parts.count + 1
            inFlight = PartUpload(client: store.client, key: key, uploadId: uploadId!, number: number, bytes: buffer)
            buffer = []
        } catch {
            abort()
            throw fail(error)
        }
    }

    func commit() throws(ParseError) {
        guard !done else { throw ParseError(.fileSaveError, "Could not store file: \(name).") }
        do throws(S3Error) {
            if let uploadId {
                try finishInFlight()
                if !buffer.isEmpty || parts.isEmpty {
                    let number = parts.count + 1
                    parts.append(S3CompletedPart(partNumber: number, etag: try store.client.uploadPart(key: key, uploadId: uploadId, partNumber: number, bytes: buffer)))
                }
                _ = try store.client.completeMultipartUpload(key: key, uploadId: uploadId, parts: parts)
            } else {
                _ = try store.client.putObject(key: key, bytes: buffer)
            }
            done = true
            buffer = []
        } catch {
            abort()
            throw fail(error)
        }
    }

    func abort() {
        guard !done else { return }
        done = true
        buffer = []
        _ = inFlight?.wait()
        inFlight = nil
        if let uploadId {
            try? store.client.abortMultipartUpload(key: key, uploadId: uploadId)
            self.uploadId = nil
        }
    }
}

/// One `uploadPart` running on a background thread; `wait` blocks until it has finished.
final class PartUpload: Sendable {
    let number: Int
    private let state = Mutex<Result<String, S3Error>?>(nil)
    /// Signalled once, when `state` is set.
    private let finished = DispatchSemaphore(value: 0)

    init(client: S3Client, key: String, uploadId: String, number: Int, bytes: [UInt8]) {
        self.number = number
        DispatchQueue.global().async { [self] in
            let result = Result { () throws(S3Error) -> String in
                try client.uploadPart(key: key, uploadId: uploadId, partNumber: number, bytes: bytes)
            }
            state.withLock { $0 = result }
            finished.signal()
        }
    }

    /// The part's ETag or failure. Call at most once (it consumes the completion signal).
    func wait() -> Result<String, S3Error> {
        finished.wait()
        return state.withLock { $0! }
    }
}
