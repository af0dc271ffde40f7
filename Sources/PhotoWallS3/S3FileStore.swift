import PhotoWallCore
import PhotoWallStorage
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Parse files in an S3 bucket, as objects `<keyPrefix><name>` (default `files/<name>`).
///
/// - Writes never show a partial file: a writer spools the body to an unlinked local file and
///   streams it into a multipart upload, `partBytes` at a time, in the background; only `commit`
///   completes it. A file of at most one part goes as one PutObject at `commit`. `abort` aborts the
///   upload. See `S3FileWriter`.
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
    /// When set, downloads are redirected to presigned S3 URLs valid this many seconds.
    public let presignedURLSeconds: Int?
    let cache: S3ReadCache

    /// - Parameters:
    ///   - client: the bucket.
    ///   - keyPrefix: e.g. `files/`; may be empty.
    ///   - cacheDirectory: local folder for the read cache (created; e.g. `<data dir>/s3-cache`).
    ///   - cacheLimitBytes: total size the cache keeps (default 1 GiB); least recently used first out.
    ///   - partBytes: multipart part size, clamped to at least `S3Client.minimumPartBytes` (default 8 MiB).
    ///   - presignedURLSeconds: redirect downloads to presigned URLs valid this long (nil: serve them).
    /// - Throws: `ParseError` 1 when the cache folder can't be created.
    public init(client: S3Client, keyPrefix: String = "files/", cacheDirectory: String,
                cacheLimitBytes: Int64 = 1 << 30, partBytes: Int = 8 << 20, presignedURLSeconds: Int? = nil) throws(ParseError) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.partBytes = max(partBytes, S3Client.minimumPartBytes)
        self.presignedURLSeconds = presignedURLSeconds
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

    /// With `presignedURLSeconds`: a presigned GetObject URL whose response carries `contentType`;
    /// anything but a raster photo type (JPEG, PNG, WebP, HEIC/HEIF, AVIF: they can't carry script)
    /// also gets `Content-Disposition: attachment`, since S3 sends neither
    /// `nosniff` nor the sandboxing CSP PhotoWall adds. Else nil (PhotoWall serves the bytes).
    public func directDownloadURL(for name: String, contentType: String) -> String? {
        guard let seconds = presignedURLSeconds else { return nil }
        let inline = ["image/jpeg", "image/png", "image/webp", "image/heic", "image/heif", "image/avif"].contains(contentType)
        return client.presignedGetURL(key: key(name), expiresSeconds: seconds, contentType: contentType,
                                      contentDisposition: inline ? nil : "attachment")
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
/// The body is appended to an unlinked spool file in the read cache's `tmp/` folder, so `write`
/// (which for `POST /files` runs on the HTTP engine's event thread, serving other connections too)
/// only ever waits for the page cache, never for S3. Each part, once a byte past it has arrived, is
/// uploaded from that file by a background `S3PartPump`; so receiving and sending overlap, and memory
/// stays at a few KiB per writer whatever the file's size (the disk holds the body until the writer
/// ends, as the filesystem store's temporary file does). `commit` (on a worker thread) waits for those parts,
/// sends the last one and completes the multipart upload; a file of at most one part goes as one
/// PutObject at `commit`.
final class S3FileWriter: FileWriter {
    let store: S3FileStore
    let name: String
    let key: String
    /// The spool file (unlinked at creation: nothing is left behind by a crash); -1 until the first byte.
    private var fd: Int32 = -1
    private(set) var byteCount: Int64 = 0
    /// Parts handed to `pump`, numbered from 1.
    private var queuedParts = 0
    private var pump: S3PartPump?
    private var done = false

    init(store: S3FileStore, name: String) {
        self.store = store; self.name = name; key = store.key(name)
    }

    deinit { abort() }

    private var partBytes: Int64 { Int64(store.partBytes) }

    func fail(_ e: S3Error) -> ParseError { e.parseError(.write, name: name) }

    private func failLocally(_ call: String, _ code: Int32) -> ParseError {
        ParseError(.fileSaveError, "Could not store file: \(name).", cause: POSIXFailure(call: call, code: code))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        guard !done else { throw ParseError(.fileSaveError, "Could not store file: \(name).") }
        if let failure = pump?.failure {
            abort()
            throw fail(failure)
        }
        guard !bytes.isEmpty else { return }
        if fd < 0 {
            var template = Array((store.cache.tmpDirectory + "/spool-XXXXXX").utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw failLocally("mkstemp \(store.cache.tmpDirectory)", errno) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        }
        guard pwriteAll(fd, bytes, at: byteCount) else {
            let code = errno
            abort()
            throw failLocally("pwrite", code)
        }
        byteCount += Int64(bytes.count)
        // A full part goes out only once a byte past it has arrived: the last part may then be
        // short, and a file of exactly one part stays a single PutObject.
        let ready = Int((byteCount - 1) / partBytes)
        while queuedParts < ready {
            if pump == nil { pump = S3PartPump(client: store.client, key: key, fd: fd) }
            pump!.enqueue(partNumber: queuedParts + 1, offset: Int64(queuedParts) * partBytes, length: partBytes)
            queuedParts += 1
        }
    }

    func commit() throws(ParseError) {
        guard !done else { throw ParseError(.fileSaveError, "Could not store file: \(name).") }
        do throws(S3Error) {
            if let pump {
                var (uploadId, parts) = try pump.finish()
                let number = parts.count + 1
                let offset = Int64(parts.count) * partBytes
                parts.append(S3CompletedPart(partNumber: number, etag: try store.client.uploadPart(
                    key: key, uploadId: uploadId, partNumber: number, fileDescriptor: fd, offset: offset, length: byteCount - offset)))
                _ = try store.client.completeMultipartUpload(key: key, uploadId: uploadId, parts: parts)
            } else if fd >= 0 {
                _ = try store.client.putObject(key: key, fileDescriptor: fd, length: byteCount)
            } else {
                _ = try store.client.putObject(key: key, bytes: [])
            }
            done = true
            closeSpool()
        } catch {
            abort()
            throw fail(error)
        }
    }

    func abort() {
        guard !done else { return }
        done = true
        let pump = self.pump, fd = self.fd, client = store.client, key = self.key
        self.pump = nil
        self.fd = -1
        guard pump != nil || fd >= 0 else { return }
        // In the background: a cut-off `POST /files` aborts on the engine's event thread, which must
        // not wait for the parts in flight or for S3's answer. The spool stays open until they end.
        DispatchQueue.global().async {
            if let pump, let uploadId = pump.cancel() {
                try? client.abortMultipartUpload(key: key, uploadId: uploadId)
            }
            if fd >= 0 { close(fd) }
        }
    }

    private func closeSpool() {
        if fd >= 0 { close(fd) }
        fd = -1
    }
}

/// Uploads one writer's full parts from its spool file, up to `maxConcurrentParts` at a time (S3
/// takes a multipart upload's parts in any order), each from its own region with `pread`.
/// The writer keeps the file open until `finish` or `cancel` has returned.
final class S3PartPump: Sendable {
    /// Parts in flight at once per writer: enough to keep a connection busy while another waits
    /// for S3's answer, few enough that many concurrent writers don't flood the server.
    static let maxConcurrentParts = 3

    let client: S3Client
    let key: String
    let fd: Int32
    private struct Job { var partNumber: Int; var offset: Int64; var length: Int64 }
    private struct State {
        var parts: [S3CompletedPart] = []
        var failure: S3Error?
        var cancelled = false
        var pending: [Job] = []
        var running = 0
    }
    private let state = Mutex(State())
    /// The multipart upload's id, created by the first part; held while it is being created.
    private let uploadId = Mutex<String?>(nil)
    /// Entered by each running drainer; `finish` and `cancel` wait for it to empty.
    private let drainers = DispatchGroup()

    init(client: S3Client, key: String, fd: Int32) {
        self.client = client; self.key = key; self.fd = fd
    }

    /// The first failure, if any (parts not started yet are then skipped).
    var failure: S3Error? { state.withLock { $0.failure } }

    /// Queues part `partNumber` (`length` bytes at `offset` of the spool file); returns at once.
    func enqueue(partNumber: Int, offset: Int64, length: Int64) {
        let startDrainer = state.withLock { s -> Bool in
            s.pending.append(Job(partNumber: partNumber, offset: offset, length: length))
            guard s.running < Self.maxConcurrentParts else { return false }
            s.running += 1
            return true
        }
        guard startDrainer else { return }
        drainers.enter()
        DispatchQueue.global().async { [self] in
            drain()
            drainers.leave()
        }
    }

    /// Uploads queued parts until none is left (or one failed, or the writer gave up).
    private func drain() {
        while let job = state.withLock({ s -> Job? in
            guard s.failure == nil, !s.cancelled, !s.pending.isEmpty else {
                s.running -= 1
                return nil
            }
            return s.pending.removeFirst()
        }) {
            do throws(S3Error) {
                let id = try multipartUploadId()
                let etag = try client.uploadPart(key: key, uploadId: id, partNumber: job.partNumber,
                                                 fileDescriptor: fd, offset: job.offset, length: job.length)
                state.withLock { $0.parts.append(S3CompletedPart(partNumber: job.partNumber, etag: etag)) }
            } catch {
                state.withLock { if $0.failure == nil { $0.failure = error } }
            }
        }
    }

    /// The multipart upload's id, creating it on first use (other drainers wait meanwhile).
    private func multipartUploadId() throws(S3Error) -> String {
        try uploadId.withLock { (id: inout String?) throws(S3Error) -> String in
            if let id { return id }
            let created = try client.createMultipartUpload(key: key)
            id = created
            return created
        }
    }

    /// Waits for every queued part. - Returns: the multipart upload id and the parts sent, by number.
    /// - Throws: the first part's or the creation's `S3Error`.
    func finish() throws(S3Error) -> (uploadId: String, parts: [S3CompletedPart]) {
        WorkerPool.blocking { drainers.wait() }
        let s = state.withLock { ($0.failure, $0.parts) }
        if let failure = s.0 { throw failure }
        guard let id = uploadId.withLock({ $0 }) else {
            throw S3Error(.invalidResponse, "no multipart upload was created", operation: "UploadPart \(key)")
        }
        return (id, s.1.sorted { $0.partNumber < $1.partNumber })
    }

    /// Skips the parts not started yet and waits for those in flight.
    /// - Returns: the multipart upload id to abort, if one was created.
    func cancel() -> String? {
        state.withLock { $0.cancelled = true }
        WorkerPool.blocking { drainers.wait() }
        return uploadId.withLock { $0 }
    }
}
