import PhotoWallCore
import PhotoWallStorage
#if canImport(Glibc)
import Glibc
#endif

/// Unfinished tus uploads as S3 multipart uploads, so any instance can take the next chunk.
///
/// Each tus upload is one multipart upload on the key its finished file will have (so completion
/// is a `CompleteMultipartUpload`, never a copy), plus at most one *tail* object
/// (`<prefix>uploads/<id>/tail-<random>`) holding the bytes past the last full part: S3 parts must be at
/// least 5 MiB (all but the last), while tus chunks can be any size. The part list (number, ETag,
/// size) and the tail's key and size are the upload's `partState`, committed to the database with
/// the offset; so the database alone says which parts count. A writer spools its request body to a
/// local file (`<spool>/<id>.part`: room for the tail, then the new bytes) and, at `sync`, fetches
/// the tail into that room, uploads every full part and a new tail. Parts and tails a crashed or
/// preempted writer left are never listed in a committed state: a later part upload with the same
/// number replaces them, stale tails are deleted at the next `sync`, and everything goes at `remove`.
/// - Source: Amazon S3 API reference (CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
///   AbortMultipartUpload); "Amazon S3 multipart upload limits" (5 MiB minimum part, 10,000 parts);
///   tusd's s3store keeps an incomplete part object the same way.
public final class S3UploadParts: UploadPartStore {
    public let store: S3FileStore
    public let spoolDirectory: String
    /// Bytes per S3 part (≥ 5 MiB; default 8 MiB), so the largest upload is 10,000 × this.
    public let partBytes: Int64
    /// Where tails live: `uploads/` beside the store's `files/` prefix (`app/files/` → `app/uploads/`).
    public let tailPrefix: String

    /// - Parameters:
    ///   - store: the S3 file store finished uploads land in (same client and bucket).
    ///   - spoolDirectory: a local folder for request bodies in flight; created when missing.
    /// - Throws: 1 when the folder can't be created.
    public init(store: S3FileStore, spoolDirectory: String, partBytes: Int64 = 8 << 20) throws(ParseError) {
        self.store = store
        self.spoolDirectory = spoolDirectory
        self.partBytes = max(Int64(S3Client.minimumPartBytes), partBytes)
        tailPrefix = (store.keyPrefix.hasSuffix("files/") ? String(store.keyPrefix.dropLast(6)) : store.keyPrefix) + "uploads/"
        if mkdir(spoolDirectory, 0o755) != 0 && errno != EEXIST {
            throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "mkdir \(spoolDirectory)", code: errno))
        }
    }

    var client: S3Client { store.client }

    func tailPrefix(_ id: String) -> String { tailPrefix + id + "/" }

    public func create(_ id: String, finalName: String) throws(ParseError) -> String {
        let key = store.key(finalName)
        do {
            let uploadId = try client.createMultipartUpload(key: key)
            return S3PartState(key: key, uploadId: uploadId, parts: [], tailKey: nil, tailBytes: 0).json
        } catch {
            throw error.parseError(.write, name: finalName)
        }
    }

    public func openForAppend(_ id: String, at offset: Int64, state: String) throws(ParseError) -> any UploadPartWriter {
        guard let s = S3PartState(json: state), s.byteCount == offset else {
            throw ParseError(.fileSaveError, "Could not open the upload.", cause: S3Error(.invalidResponse, "upload state does not match offset \(offset)", operation: "open upload \(id)"))
        }
        // No network here: this runs on the engine thread as the PATCH starts. The tail is fetched
        // and stale tails are removed in `sync`, on a worker thread, and only when bytes arrived.
        let path = spoolDirectory + "/" + id + ".part"
        unlink(path)  // a fresh file: a writer that gave way may still hold the old one open
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ParseError(.fileSaveError, "Could not open the upload.", cause: POSIXFailure(call: "open \(path)", code: errno)) }
        return S3PartWriter(parts: self, id: id, state: s, fd: fd, path: path)
    }

    public func complete(_ id: String, length: Int64, state: String, as name: String, into fileStore: any FileStore) throws(ParseError) {
        guard let s = S3PartState(json: state), s.byteCount == length else {
            throw ParseError(.fileSaveError, "Could not finish the upload.", cause: S3Error(.invalidResponse, "upload state does not match length \(length)", operation: "complete upload \(id)"))
        }
        guard let target = fileStore as? S3FileStore, target.key(name) == s.key else {
            throw ParseError(.fileSaveError, "S3 upload parts need the S3 file store they were made for.")
        }
        do {
            // Already done by an interrupted completion?
            if let done = try client.headObject(key: s.key), done.byteCount == length { return }
            var parts = s.parts.map { S3CompletedPart(partNumber: $0.number, etag: $0.etag) }
            if let tail = s.tailKey, s.tailBytes > 0 {
                let bytes = try client.getObject(key: tail, maxBytes: Int(partBytes))
                let n = (s.parts.last?.number ?? 0) + 1
                parts.append(S3CompletedPart(partNumber: n, etag: try client.uploadPart(key: s.key, uploadId: s.uploadId, partNumber: n, bytes: bytes)))
            }
            if parts.isEmpty {
                // An empty file: S3 refuses a multipart upload without parts.
                _ = try client.putObject(key: s.key, bytes: [])
                try? client.abortMultipartUpload(key: s.key, uploadId: s.uploadId)
            } else {
                _ = try client.completeMultipartUpload(key: s.key, uploadId: s.uploadId, parts: parts)
            }
        } catch {
            throw error.parseError(.write, name: name)
        }
    }

    public func remove(_ id: String, state: String) {
        if let s = S3PartState(json: state) {
            // After completion the multipart upload is gone (NoSuchUpload): nothing to abort.
            try? client.abortMultipartUpload(key: s.key, uploadId: s.uploadId)
        }
        if let left = try? client.listAllObjects(prefix: tailPrefix(id)) {
            for o in left { try? client.deleteObject(key: o.key) }
        }
        unlink(spoolDirectory + "/" + id + ".part")
    }

    /// Aborts multipart uploads under the store's prefix and deletes tails, initiated or last
    /// modified before `cutoff`, whose upload id (the 32-hex prefix of the file name, or the tail's
    /// folder) has no record. Multipart uploads of `POST /files` writers also carry a random 32-hex
    /// prefix with no upload record, so one that died mid-body goes too once older than `cutoff`.
    /// Local spool files older than `cutoff` go whatever their upload: a spool only lives for one
    /// request (a crash of this instance mid-PATCH leaves one behind).
    /// - Source: Amazon S3 API reference, ListMultipartUploads and AbortMultipartUpload.
    public func removeOrphans(before cutoff: ParseDate, isLive: (String) throws -> Bool) throws -> Int {
        func older(_ date: String?) -> Bool {
            guard let date, let d = ParseDate(iso: date) else { return false }
            return d.millisecondsSince1970 < cutoff.millisecondsSince1970
        }
        var removed = try FileSystemUploadParts.removePartFiles(in: spoolDirectory, before: cutoff) { _ in true }
        do {
            for u in try client.listAllMultipartUploads(prefix: store.keyPrefix) where older(u.initiated) {
                // Only names PhotoWall makes (`<32 hex>_…`): the prefix may be shared or empty.
                guard let id = Self.uploadID(prefixing: u.key.dropFirst(store.keyPrefix.count)), try !isLive(id) else { continue }
                try client.abortMultipartUpload(key: u.key, uploadId: u.uploadId)
                removed += 1
            }
            for o in try client.listAllObjects(prefix: tailPrefix) where older(o.lastModified) {
                guard let id = Self.uploadID(prefixing: o.key.dropFirst(tailPrefix.count)), try !isLive(id) else { continue }
                try client.deleteObject(key: o.key)
                removed += 1
            }
        } catch let e as S3Error {
            throw e.parseError(.write, name: "uploads")
        }
        return removed
    }
}

/// The committed shape of one S3-backed upload (`UploadRecord.partState`), as compact JSON:
/// `{"k": key, "u": uploadId, "p": [[number, etag, bytes], …], "t": tailKey|null, "tb": tailBytes}`.
struct S3PartState: Equatable {
    struct Part: Equatable { var number: Int; var etag: String; var bytes: Int64 }
    var key: String
    var uploadId: String
    var parts: [Part]
    var tailKey: String?
    var tailBytes: Int64

    var byteCount: Int64 { parts.reduce(0) { $0 + $1.bytes } + tailBytes }

    var json: String {
        JSON.object([
            "k": .string(key), "u": .string(uploadId),
            "p": .array(parts.map { .array([.number(Double($0.number)), .string($0.etag), .number(Double($0.bytes))]) }),
            "t": tailKey.map { .string($0) } ?? .null, "tb": .number(Double(tailBytes)),
        ]).text
    }

    init(key: String, uploadId: String, parts: [Part], tailKey: String?, tailBytes: Int64) {
        self.key = key; self.uploadId = uploadId; self.parts = parts; self.tailKey = tailKey; self.tailBytes = tailBytes
    }

    init?(json text: String) {
        guard let j = try? JSON.parse(text), let key = j["k"]?.stringValue, let uploadId = j["u"]?.stringValue,
              let list = j["p"]?.arrayValue, let tb = j["tb"]?.intValue else { return nil }
        var parts: [Part] = []
        for p in list {
            guard let a = p.arrayValue, a.count == 3, let n = a[0].intValue, let etag = a[1].stringValue, let b = a[2].intValue else { return nil }
            parts.append(Part(number: n, etag: etag, bytes: Int64(b)))
        }
        self.init(key: key, uploadId: uploadId, parts: parts, tailKey: j["t"]?.stringValue, tailBytes: Int64(tb))
    }
}

/// One request's writer: body bytes go to the local spool after the tail; `sync` uploads the
/// full parts and the new tail. Used by one request at a time.
final class S3PartWriter: UploadPartWriter {
    let parts: S3UploadParts
    let id: String
    var state: S3PartState
    var fd: Int32
    let path: String
    /// Bytes in the spool: the tail (`state.tailBytes`) then the new bytes.
    var spooled: Int64
    /// Whether the spool's first `state.tailBytes` hold the tail yet (fetched at the first `sync`).
    var tailInSpool: Bool

    init(parts: S3UploadParts, id: String, state: S3PartState, fd: Int32, path: String) {
        self.parts = parts; self.id = id; self.state = state; self.fd = fd; self.path = path
        spooled = state.tailBytes
        tailInSpool = state.tailBytes == 0
    }

    deinit { close() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        guard pwriteAll(fd, bytes, at: spooled) else {
            throw ParseError(.fileSaveError, "Could not store the upload.", cause: POSIXFailure(call: "pwrite", code: errno))
        }
        spooled += Int64(bytes.count)
    }

    func sync() throws(ParseError) -> (size: Int64, state: String) {
        // Nothing new: the committed state stands, no request needed.
        guard spooled > state.tailBytes else { return (state.byteCount, state.json) }
        let client = parts.client
        var next = state
        var at: Int64 = 0
        do throws(S3Error) {
            if !tailInSpool, let tail = state.tailKey {
                let bytes = try client.getObject(key: tail, maxBytes: Int(parts.partBytes))
                guard Int64(bytes.count) == state.tailBytes else {
                    throw S3Error(.invalidResponse, "tail is \(bytes.count) bytes, expected \(state.tailBytes)", operation: "GetObject \(tail)")
                }
                guard bytes.withUnsafeBytes({ pwriteAll(fd, $0, at: 0) }) else {
                    throw S3Error(.fileError, "could not write the spool", operation: "GetObject \(tail)", systemError: errno)
                }
                tailInSpool = true
            }
            while spooled - at >= parts.partBytes {
                let n = (next.parts.last?.number ?? 0) + 1
                guard n <= S3Client.maximumPartNumber else { throw S3Error(.invalidResponse, "more than 10,000 parts", operation: "UploadPart") }
                let etag = try client.uploadPart(key: next.key, uploadId: next.uploadId, partNumber: n, fileDescriptor: fd,
                                                 offset: at, length: parts.partBytes)
                next.parts.append(.init(number: n, etag: etag, bytes: parts.partBytes))
                at += parts.partBytes
            }
            let rest = spooled - at
            if rest > 0 {
                let key = parts.tailPrefix(id) + "tail-" + ParseIdentifier.alphanumeric(12)
                _ = try client.putObject(key: key, fileDescriptor: fd, offset: at, length: rest)
                next.tailKey = key
            } else {
                next.tailKey = nil
            }
            next.tailBytes = rest
            // Tails of earlier syncs that were never committed (a crash, a preempted writer) are
            // garbage; the committed one stays until the new state is committed.
            if let stale = try? client.listAllObjects(prefix: parts.tailPrefix(id)) {
                for o in stale where o.key != state.tailKey && o.key != next.tailKey { try? client.deleteObject(key: o.key) }
            }
        } catch {
            throw error.parseError(.write, name: id)
        }
        // Keep only the tail in the spool, in case the request goes on.
        if at > 0 {
            var buffer = [UInt8](repeating: 0, count: Int(spooled - at))
            let ok = buffer.withUnsafeMutableBytes { b in preadAll(fd, b, at: Int64(at)) == b.count }
                && buffer.withUnsafeBytes { pwriteAll(fd, $0, at: 0) } && ftruncate(fd, off_t(spooled - at)) == 0
            guard ok else { throw ParseError(.fileSaveError, "Could not store the upload.", cause: POSIXFailure(call: "pread/pwrite", code: errno)) }
            spooled -= at
        }
        state = next
        return (state.byteCount, state.json)
    }

    func discard() throws(ParseError) {
        spooled = state.tailBytes
        guard ftruncate(fd, off_t(spooled)) == 0 else {
            throw ParseError(.fileSaveError, "Could not store the upload.", cause: POSIXFailure(call: "ftruncate", code: errno))
        }
    }

    func close() {
        guard fd >= 0 else { return }
        // Unlink the spool unless a newer writer for the upload already made a fresh one there.
        var mine = stat(), there = stat()
        if fstat(fd, &mine) == 0, stat(path, &there) == 0, mine.st_ino == there.st_ino, mine.st_dev == there.st_dev { unlink(path) }
        Glibc.close(fd)
        fd = -1
    }
}
