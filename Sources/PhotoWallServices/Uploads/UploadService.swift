import Foundation
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Resumable uploads (tus 1.0.0): create, append (PATCH), inspect (HEAD), terminate, expire.
///
/// An upload's offset moves only after its bytes are durable in the part store and the new offset
/// is committed to the database, so HEAD never reports bytes a crash could lose. A PATCH cut
/// mid-body keeps what arrived (unless it carried a checksum, which can't be verified for a partial
/// chunk). One writer at a time per upload, across instances: a PATCH holds a lease in the
/// database (`claimUploadWriter`), renewed while it makes progress, and commits only while it
/// holds it; a lease whose holder showed no progress for `writerStallLimit` (a dead instance, a
/// dropped connection) can be taken over. The SHA-256 of the bytes so far is saved with every
/// commit (`ResumableSHA256`), so whichever instance takes the last chunk finishes it without
/// re-reading the file. When the last byte arrives, the part becomes an ordinary Parse file —
/// the same `<32 hex>_<name>` and URL as `POST /files/:name` — and is never visible before.
/// - Source: tus 1.0.0 protocol (Core, Creation, Creation With Upload, Expiration, Checksum,
///   Termination); social-and-uploads.md §4.
public final class UploadService: Sendable {
    /// Upload records and their writer lease. Public while REST reads a record through it for tus
    /// `OPTIONS`/`HEAD` routing.
    public let database: any UploadRecordStore
    /// File records, written when an upload completes.
    let fileRecords: any FileRecordStore
    public let parts: any UploadPartStore
    public let files: FileService
    public let config: ServerConfig
    /// How long an unfinished upload lives after its last change, in seconds (default 24 h).
    public let expirySeconds: Int64
    /// Uploads with a PATCH in progress in this process (the database lease covers other instances),
    /// each with the PATCH holding it once that exists. One lock for both, so that a PATCH finding an
    /// upload taken always finds its holder too, or learns that the holder is still starting.
    let writers = Mutex<[String: Writer]>([:])
    /// A PATCH that received no body bytes for this long gives way to a newer PATCH for the same
    /// upload (see `UploadAppend.preemptIfGone`), as does one whose client hung up; a livelier one makes
    /// the newer get 423.
    public let writerStallLimit: Duration
    let logger: Logger

    /// An upload's entry in `writers`.
    enum Writer: Sendable {
        /// Taken by a PATCH still starting (taking the lease, reading the record).
        case starting
        /// Held by this PATCH (for pipelining, preemption and a HEAD that waits for it to settle).
        case held(by: UploadAppend)

        var append: UploadAppend? { if case .held(let append) = self { append } else { nil } }
    }

    /// The PATCH of this process holding upload `id`, if any.
    func holder(of id: String) -> UploadAppend? { writers.withLock { $0[id]?.append } }

    public static let masterOwner = "*master*"
    public static let checksumAlgorithms = ["sha1", "sha256"]

    public init(records: any UploadRecordStore, fileRecords: any FileRecordStore, parts: any UploadPartStore, files: FileService,
                config: ServerConfig, expirySeconds: Int64 = 86_400, writerStallLimit: Duration = .seconds(5), logger: Logger) {
        self.database = records; self.fileRecords = fileRecords; self.parts = parts; self.files = files; self.config = config
        self.expirySeconds = expirySeconds; self.writerStallLimit = writerStallLimit; self.logger = logger
        startHeartbeat()
    }

    static func owner(of auth: AuthContext) -> String? {
        auth.isMaster ? masterOwner : auth.userId
    }

    // MARK: creation

    /// Creates an upload (tus §Creation).
    /// - Parameters:
    ///   - length: `Upload-Length` in bytes, or nil for `Upload-Defer-Length: 1`.
    ///   - metadata: decoded `Upload-Metadata`; `filename` (or `name`) and `filetype` (or `contentType`) are used.
    /// - Throws: 130 without a user (public uploads are disabled), 122 for a bad file name,
    ///   `UploadError.tooLarge` (413) over the maximum size.
    public func create(length: Int64?, metadata: [String: String], auth: AuthContext) throws -> UploadRecord {
        guard let owner = Self.owner(of: auth) else { throw ParseError(.fileSaveError, "File upload by public is disabled.") }
        if let length {
            guard length >= 0 else { throw UploadError.badRequest("Upload-Length must be a non-negative integer.") }
            guard length <= Int64(config.maxUploadBytes) else { throw UploadError.tooLarge(maximum: config.maxUploadBytes) }
        }
        let name = metadata["filename"] ?? metadata["name"] ?? "file"
        try FileService.validate(name: name)
        let type = Self.declaredType(metadata)
        let now = ParseDate.now()
        var record = UploadRecord(id: Crypto.randomBytes(16).hexString, owner: owner, length: length, offset: 0,
                                  fileName: name, contentType: type ?? "", metadata: metadata, createdAt: now,
                                  expiresAt: ParseDate(millisecondsSince1970: now.millisecondsSince1970 + expirySeconds * 1000),
                                  digestState: ResumableSHA256().state)
        record.partState = try parts.create(record.id, finalName: Self.finalName(of: record))
        do {
            try database.insertUpload(record)
        } catch {
            parts.remove(record.id, state: record.partState)
            throw error
        }
        return record
    }

    /// The Parse file name a finished upload gets: the upload's own random id is the name's 32-hex
    /// prefix, so it is known from the start and redoing an interrupted completion lands on it again.
    /// (From the declared type, not the stored one, which the first bytes may change: the name is fixed
    /// at creation, where the S3 store starts its multipart upload.)
    static func finalName(of u: UploadRecord) -> String {
        u.completedName ?? FileService.storedName(for: u.fileName, contentType: declaredType(u.metadata), prefix: u.id)
    }

    /// The type the client declared in `Upload-Metadata` (`filetype`, `contentType` or `type`), if any.
    static func declaredType(_ metadata: [String: String]) -> String? {
        (metadata["filetype"] ?? metadata["contentType"] ?? metadata["type"]).flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: state

    /// The upload as HEAD reports it, checked against the caller.
    /// - Throws: `UploadError.notFound` (404) when unknown or another user's; `.gone` (410) when expired.
    public func upload(id: String, auth: AuthContext) throws -> UploadRecord {
        guard Self.isValidID(id), var u = try database.upload(id: id) else { throw UploadError.notFound }
        guard auth.isMaster || u.owner == Self.owner(of: auth) else { throw UploadError.notFound }
        if u.completedName == nil {
            if u.expiresAt < ParseDate.now() { throw UploadError.gone }
            if let length = u.length, u.offset == length {
                u = try finishInterrupted(u)
            }
        } else {
            // A crash between completing and releasing the part left it behind (on the filesystem a
            // hard link to the file's bytes): release it now (a no-op when already gone).
            parts.remove(u.id, state: u.partState)
        }
        return u
    }

    /// The upload as a tus HEAD reports it (tus 1.0.0 §HEAD: `Upload-Offset` is where the next PATCH
    /// must start): as `upload(id:auth:)`, after a PATCH of this process on it that is ending settles.
    /// A client resuming right after its connection broke asks at once, while the cut PATCH may still be
    /// keeping what arrived (waiting for a worker, syncing, committing): the HEAD waits for that, at most
    /// `writerStallLimit`. A PATCH whose client hung up (its socket says so, even when the engine has
    /// not read the FIN yet) or whose connection went quiet for `writerStallLimit` is ended first,
    /// keeping what it received, as the next PATCH would end it (`UploadAppend.preemptIfGone`; and as
    /// tusd's HEAD, which takes the upload's lock, ends the PATCH holding it). A PATCH receiving bytes
    /// from a client still there is left alone: the HEAD then reports the committed offset. The caller is checked before anything is touched.
    /// - Throws: as `upload(id:auth:)`.
    public func settledUpload(id: String, auth: AuthContext) throws -> UploadRecord {
        // Looked up before the record is read: a PATCH leaves `writers` only after its commit, so when
        // none is found here the read below already sees what any earlier PATCH kept.
        let holder = holder(of: id)
        let u = try upload(id: id, auth: auth)
        guard let holder, holder.isLettingGo || holder.preemptIfGone(stallLimit: writerStallLimit) else { return u }
        _ = holder.outcome.wait(timeout: writerStallLimit)
        return try upload(id: id, auth: auth)
    }

    /// A completion interrupted by a crash (every byte committed, no file yet) is finished by the next
    /// request that sees it, under the lease, at once: a lease still held on such an upload belongs
    /// to the writer that committed the last byte and then died (or, in a cluster, is completing it
    /// right now: completion is idempotent and lands on the same name, and that writer's own commit
    /// then fails harmlessly), so it is taken over without waiting for it to lapse. Only a PATCH of
    /// this process, which is alive and finishes the upload itself, keeps it.
    func finishInterrupted(_ u: UploadRecord) throws -> UploadRecord {
        let token = Crypto.randomBytes(16).hexString
        let localWriter = writers.withLock { $0[u.id] != nil }
        guard try claim(u.id, token: token, takingOver: !localWriter) else { return u }
        defer { try? database.releaseUploadWriter(id: u.id, writer: token) }
        guard let fresh = try database.upload(id: u.id) else { throw UploadError.notFound }
        guard fresh.completedName == nil, let length = fresh.length, fresh.offset == length else { return fresh }
        return try complete(fresh, writer: token)
    }

    /// Takes the database lease (see `UploadRecordStore.claimUploadWriter`): when it is free or its
    /// holder showed no progress for `writerStallLimit`, or whoever holds it when `takingOver`.
    func claim(_ id: String, token: String, takingOver: Bool = false) throws(ParseError) -> Bool {
        let now = ParseDate.now()
        let (seconds, attoseconds) = writerStallLimit.components
        let stale = takingOver ? ParseDate(millisecondsSince1970: Int64.max)
            : ParseDate(millisecondsSince1970: now.millisecondsSince1970 - seconds * 1000 - attoseconds / 1_000_000_000_000_000)
        return try database.claimUploadWriter(id: id, writer: token, now: now, staleBefore: stale)
    }

    /// Whether `id` has the shape of an upload id (32 lowercase hex).
    public static func isValidIDForRouting(_ id: String) -> Bool { isValidID(id) }

    static func isValidID(_ id: String) -> Bool { id.utf8.count == 32 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }

    // MARK: PATCH

    /// Starts appending to an upload (tus §PATCH), taking its single-writer lock.
    /// - Parameters:
    ///   - offset: the request's `Upload-Offset`.
    ///   - length: `Upload-Length` when the upload's length was deferred.
    ///   - checksum: `Upload-Checksum` (`algo base64`), when sent.
    ///   - contentLength: the request's `Content-Length` (nil when chunked). A PATCH that declares one
    ///     can be followed by a pipelined PATCH at its end (see `UploadAppend`).
    /// - Throws: `UploadError` 404/410/409 (offset mismatch)/423 (another PATCH in progress)/
    ///   400 (bad checksum header or algorithm)/413; `ParseError` on storage failures.
    public func beginAppend(id: String, offset: Int64, length: Int64?, checksum: String?, contentLength: Int64? = nil,
                            auth: AuthContext) throws -> UploadAppend {
        try beginAppend(id: id, offset: offset, length: length, checksum: checksum, contentLength: contentLength, auth: auth, looksLeft: 3)
    }

    /// `beginAppend`, which looks again (at most `looksLeft` more times) when the PATCH before it let
    /// go of the upload meanwhile (committed, or was preempted); each look follows progress by another
    /// request, so the bound only guards against a pathological churn (that ends in 423).
    private func beginAppend(id: String, offset: Int64, length: Int64?, checksum: String?, contentLength: Int64?,
                             auth: AuthContext, looksLeft: Int) throws -> UploadAppend {
        /// This request again, against the upload as it is now.
        func lookAgain() throws -> UploadAppend {
            try beginAppend(id: id, offset: offset, length: length, checksum: checksum, contentLength: contentLength,
                            auth: auth, looksLeft: looksLeft - 1)
        }
        let u = try upload(id: id, auth: auth)
        var expected: (Digest.Algorithm, [UInt8])?
        if let checksum {
            let parts = checksum.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let raw = Base64.decode(parts[1], ignoringUnknownCharacters: true) else { throw UploadError.badRequest("Upload-Checksum must be 'algorithm base64'.") }
            switch parts[0] {
            case "sha1": expected = (.sha1, raw)
            case "sha256": expected = (.sha256, raw)
            default: throw UploadError.badRequest("Unsupported checksum algorithm \(parts[0]); use sha1 or sha256.")
            }
        }
        if offset != u.offset {
            switch try pipelined(u, offset: offset, length: length, contentLength: contentLength, expected: expected) {
            case .chained(let next):
                return next
            case .cameAfterTheCommit:
                // The PATCH before has committed and let go of the upload meanwhile: start over against it.
                if looksLeft > 0 { return try lookAgain() }
            case .notPipelined:
                // The PATCH before may have committed since `u` was read (and may still hold the upload,
                // ending): look again.
                if looksLeft > 0, let now = try database.upload(id: u.id), now.offset == offset {
                    return try lookAgain()
                }
            }
        }
        // The offset first, then the length (tus 1.0.0 §PATCH: a mismatch is 409, as tusd checks it).
        guard offset == u.offset else { throw UploadError.offsetMismatch(current: u.offset) }
        if let length {
            if let known = u.length, known != length { throw UploadError.badRequest("Upload-Length cannot change.") }
            guard length <= Int64(config.maxUploadBytes), length >= u.offset else { throw UploadError.tooLarge(maximum: config.maxUploadBytes) }
        }
        if u.isComplete { throw UploadError.alreadyComplete(u) }
        let taken = writers.withLock { w -> Writer? in
            if let current = w[u.id] { return current }
            w[u.id] = .starting
            return nil
        }
        if let taken {
            // The holder's connection may be dead without the server knowing: a stalled one gives
            // way, keeping what it received, and this request starts over against the new state
            // (usually 409 with the new offset, which the client then HEADs for).
            if let holder = taken.append, looksLeft > 0 {
                if holder.preemptIfGone(stallLimit: writerStallLimit) {
                    return try lookAgain()
                }
                // The holder is ending (its commit may already be stored, as `u` shows, with the slot not yet
                // freed): a pipelining client's next PATCH comes in exactly then. It waits for the holder to
                // let go and looks again, rather than be refused for an instant's overlap (423, `Retry-After`).
                // A slot, as for pipelining: such waiters never take every worker from the commits they wait for.
                if holder.isLettingGo, pipelineSlots.acquire() {
                    defer { pipelineSlots.release() }
                    if holder.outcome.wait(timeout: writerStallLimit) != nil {
                        return try lookAgain()
                    }
                }
            }
            throw UploadError.locked
        }
        // Another instance may hold the upload: the database lease decides.
        let token = Crypto.randomBytes(16).hexString
        do {
            guard try claim(u.id, token: token) else {
                writers.withLock { _ = $0.removeValue(forKey: u.id) }
                throw UploadError.locked
            }
        } catch {
            writers.withLock { _ = $0.removeValue(forKey: u.id) }
            throw error
        }
        do {
            // The record as of the lease: another instance may have moved it since it was read.
            guard var fresh = try database.upload(id: u.id) else { throw UploadError.notFound }
            if fresh.isComplete { throw UploadError.alreadyComplete(fresh) }
            guard offset == fresh.offset else { throw UploadError.offsetMismatch(current: fresh.offset) }
            if let length, fresh.length == nil {
                fresh.length = length
                guard try database.commitUpload(fresh, writer: token) else { throw UploadError.locked }
            } else if let length, fresh.length != length {
                throw UploadError.badRequest("Upload-Length cannot change.")
            }
            let writer = try parts.openForAppend(fresh.id, at: fresh.offset, state: fresh.partState)
            let digests = ReadBackDigests(startingAt: fresh.offset, runningState: fresh.digestState,
                                      reader: try parts.openForReading(fresh.id, state: fresh.partState))
            let append = UploadAppend(service: self, record: fresh, token: token, writer: writer,
                                      checksum: expected, digests: digests, declaredLength: contentLength)
            writers.withLock { $0[u.id] = .held(by: append) }
            return append
        } catch {
            release(u.id, token: token)
            throw error
        }
    }

    /// Pipelining (see `UploadAppend`): when this process's PATCH in progress on `u` will end exactly at
    /// `offset`, waits (at most `writerStallLimit`) for its body to be in, then starts this PATCH as its
    /// successor, writing behind its bytes while it commits (at most `pipelineSlots.limit` such PATCHes at
    /// a time in the process). Only for part stores that take appends
    /// at known offsets (`UploadPartStore.supportsPipelinedAppends`), a body of declared length, and
    /// no `Upload-Length` to set.
    func pipelined(_ u: UploadRecord, offset: Int64, length: Int64?, contentLength: Int64?,
                   expected: (Digest.Algorithm, [UInt8])?) throws -> Pipelining {
        guard parts.supportsPipelinedAppends, let contentLength, contentLength > 0, offset > u.offset,
              u.length.map({ offset + contentLength <= $0 && (length == nil || length == $0) }) ?? false,
              let holder = holder(of: u.id), pipelineSlots.acquire() else { return .notPipelined }
        var keepsSlot = false
        defer { if !keepsSlot { pipelineSlots.release() } }
        guard holder.awaitBodyComplete(forChainingAt: offset, timeout: writerStallLimit) else { return .notPipelined }
        let next = try holder.chain { () -> UploadAppend in
            var r = u
            r.offset = offset
            let writer = try parts.openForAppend(u.id, at: offset, state: u.partState)
            return UploadAppend(service: self, record: r, token: holder.token, writer: writer, checksum: expected,
                                digests: holder.digests, declaredLength: contentLength, predecessor: holder)
        }
        guard let next else {
            // Its body was whole but it was already committing for itself: once it is done, the
            // upload is free (and at this offset, when it succeeded).
            _ = holder.outcome.wait()
            return .cameAfterTheCommit
        }
        keepsSlot = true  // until the successor ends
        writers.withLock { $0[u.id] = .held(by: next) }
        return .chained(next)
    }

    /// Pipelined PATCHes may wait on worker threads (for the body before them, then for its commit,
    /// which runs on a worker too): at most `limit` at a time, so that they can never take every
    /// worker from the commits they wait for. Beyond it a PATCH is answered as without pipelining.
    /// Sixteen, half the default 32 workers: `photowall upload` keeps four PATCHes in flight, three of
    /// them successors, so five uploads at once pipeline fully (with eight, two did, and the tests'
    /// parallel uploads on one server could leave a third pipelined PATCH without a place: 409).
    let pipelineSlots = Slots(limit: 16)

    /// A counter of things in use, up to `limit`.
    final class Slots: Sendable {
        let limit: Int
        private let used = Mutex(0)
        init(limit: Int) { self.limit = limit }
        /// - Returns: false when all are in use.
        func acquire() -> Bool { used.withLock { n in n < limit ? { n += 1; return true }() : false } }
        func release() { used.withLock { $0 -= 1 } }
    }

    /// How `pipelined` took a PATCH.
    enum Pipelining {
        /// As the successor of the PATCH in progress.
        case chained(UploadAppend)
        /// Not: the PATCH in progress had already decided to let go of the upload; it has now.
        case cameAfterTheCommit
        /// Not a pipelined PATCH (or not one that can chain): answered as without pipelining.
        case notPipelined
    }

    /// The most bytes a PATCH at `offset` of upload `id` may carry (what the upload still lacks), or nil
    /// when the id is malformed or unknown, or `offset` is not the upload's offset (the PATCH is then
    /// refused by `beginAppend`, with 404 or 409). No authorization: only a limit is revealed to no one.
    public func patchLimit(id: String, offset: Int64) -> Int? {
        guard Self.isValidID(id), let record = (try? database.upload(id: id)) ?? nil, record.offset == offset else { return nil }
        return remainingBytes(record)
    }

    /// The most bytes a PATCH at the upload's offset may carry.
    public func remainingBytes(_ u: UploadRecord) -> Int {
        Int(min(Int64(config.maxUploadBytes), u.length ?? Int64(config.maxUploadBytes)) - u.offset)
    }

    /// Gives upload `id` up: the database lease of `token` (unless `leaseReleased`: the last commit
    /// already did), then this process's writer slot.
    func release(_ id: String, token: String, leaseReleased: Bool = false) {
        if !leaseReleased {
            do {
                try database.releaseUploadWriter(id: id, writer: token)
            } catch {
                // It lapses by itself after `writerStallLimit`.
                logger.warning("could not release an upload lease", ["upload.id": id, "cause": "\(error)"])
            }
        }
        writers.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// Renews the leases of this process's PATCH requests that are making progress, once a second,
    /// so other instances see them alive; a request that lost its lease learns it at its commit.
    func startHeartbeat() {
        let thread = Thread { [weak self] in
            while true {
                do {
                    guard let service = self else { return }
                    let active = service.writers.withLock { $0.values.compactMap(\.append) }.filter { $0.isMakingProgress(within: service.writerStallLimit) }
                    for append in active {
                        _ = try? service.database.renewUploadWriter(id: append.record.id, writer: append.token, now: .now())
                    }
                }
                Thread.sleep(forTimeInterval: 1)
            }
        }
        thread.name = "upload-leases"
        thread.start()
    }

    /// Turns a finished part into a Parse file (idempotent), under the lease `writer`; with
    /// `releasing`, its last write gives the lease up.
    func complete(_ u: UploadRecord, writer: String, releasing: Bool = false) throws -> UploadRecord {
        var u = u
        let name = Self.finalName(of: u)
        try parts.complete(u.id, length: u.offset, state: u.partState, as: name, into: files.store)
        let digest: String
        if let d = u.digestState.flatMap({ ResumableSHA256(state: $0) }) {
            digest = d.finalize().hexString
        } else {
            // An upload from before digests were saved: read the finished file once.
            guard let stored = try files.store.location(of: name) else { throw ParseError(.fileSaveError, "The finished upload is missing.") }
            digest = try Self.sha256(ofFile: stored.path)
        }
        // The type was sniffed from the first bytes when they arrived (`UploadAppend.commit`).
        let type = u.contentType.isEmpty ? (MimeTypes.type(forName: name) ?? "application/octet-stream") : u.contentType
        let mismatch = FileService.declaredMismatch(declared: Self.declaredType(u.metadata), stored: type)
        let record = FileRecord(name: name, contentType: type, byteCount: u.offset, sha256: digest, createdAt: ParseDate.now(),
                                originalName: u.fileName, declaredType: mismatch,
                                owner: u.owner == Self.masterOwner ? nil : u.owner)
        do {
            try fileRecords.insertFile(record)
        } catch {
            // A duplicate means an interrupted completion already recorded it.
            if error.code != .duplicateValue { throw error }
        }
        u.completedName = name
        let stored = releasing ? try database.commitUploadReleasingWriter(u, writer: writer) : try database.commitUpload(u, writer: writer)
        guard stored else { throw UploadError.locked }
        parts.remove(u.id, state: u.partState)
        files.uploaded(record)
        logger.info("upload complete", ["upload.id": u.id, "file": name, "bytes": "\(u.offset)"])
        return u
    }

    static func sha256(ofFile path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ParseError(.fileSaveError, "Could not read the upload.", cause: POSIXFailure(call: "open", code: errno)) }
        defer { close(fd) }
        let d = Digest(.sha256)
        var buf = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ParseError(.fileSaveError, "Could not read the upload.", cause: POSIXFailure(call: "read", code: errno)) }
            if n == 0 { break }
            buf.withUnsafeBytes { d.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        return d.finalize().hexString
    }

    // MARK: termination and expiry

    /// Deletes an unfinished upload (tus §Termination). A finished one is left alone (its file is
    /// an ordinary Parse file now) but its upload URL is forgotten.
    public func terminate(id: String, auth: AuthContext) throws {
        let u = try upload(id: id, auth: auth)
        guard writers.withLock({ $0[u.id] == nil }), try claim(u.id, token: Crypto.randomBytes(16).hexString) else { throw UploadError.locked }
        try database.deleteUpload(id: u.id)
        parts.remove(u.id, state: u.partState)
    }

    /// Removes expired unfinished uploads (part and record). - Returns: how many were removed.
    @discardableResult
    public func reapExpired(now: ParseDate = .now()) -> Int {
        var removed = 0
        do {
            for u in try database.expiredUploads(before: now, limit: 500) where writers.withLock({ $0[u.id] == nil }) {
                // Several instances reap: the lease makes one of them do each upload.
                guard try claim(u.id, token: Crypto.randomBytes(16).hexString) else { continue }
                try database.deleteUpload(id: u.id)
                parts.remove(u.id, state: u.partState)
                removed += 1
            }
        } catch {
            logger.warning("upload reaper failed", ["cause": "\(error)"])
        }
        if removed > 0 { logger.info("reaped expired uploads", ["count": "\(removed)"]) }
        return removed
    }

    /// Removes upload storage no record refers to, or whose upload is complete (see
    /// `UploadPartStore.removeOrphans`), last changed more than `graceSeconds` (default 24 h) before
    /// `now`: longer than any `POST /files` body or any gap between creating an upload's storage and
    /// saving its record. Safe on several instances at once.
    /// - Returns: how many leftovers were removed (0 when the store can't be listed; logged).
    @discardableResult
    public func removeOrphans(now: ParseDate = .now(), graceSeconds: Int64 = 86_400) -> Int {
        let cutoff = ParseDate(millisecondsSince1970: now.millisecondsSince1970 - graceSeconds * 1000)
        do {
            let removed = try parts.removeOrphans(before: cutoff) { id in try database.upload(id: id).map { $0.completedName == nil } ?? false }
            if removed > 0 { logger.info("removed orphaned upload storage", ["count": "\(removed)"]) }
            return removed
        } catch {
            logger.warning("orphaned upload sweep failed", ["cause": "\(error)"])
            return 0
        }
    }

    /// Runs `reapExpired` every `intervalSeconds`, and `removeOrphans(graceSeconds: orphanAgeSeconds)`
    /// plus each of `otherSweeps` (given the same cutoff: now minus the orphan age) at start and then
    /// every `orphanSweepSeconds` (default 1 h), on a background thread for the process's life.
    public func startReaper(intervalSeconds: Double = 300, orphanAgeSeconds: Int64 = 86_400, orphanSweepSeconds: Double = 3600,
                            otherSweeps: [@Sendable (_ cutoff: ParseDate) -> Void] = []) {
        let thread = Thread { [self] in
            var lastSweep: ContinuousClock.Instant?
            while true {
                reapExpired()
                if lastSweep.map({ ContinuousClock.now - $0 >= .seconds(orphanSweepSeconds) }) ?? true {
                    removeOrphans(graceSeconds: orphanAgeSeconds)
                    let now = ParseDate.now()
                    for sweep in otherSweeps { sweep(ParseDate(millisecondsSince1970: now.millisecondsSince1970 - orphanAgeSeconds * 1000)) }
                    lastSweep = ContinuousClock.now
                }
                Thread.sleep(forTimeInterval: intervalSeconds)
            }
        }
        thread.name = "upload-reaper"
        thread.start()
    }
}

/// What the tus routes report of an upload (its `Upload-*` headers), without the storage record.
public struct UploadState: Sendable {
    public var id: String
    /// Bytes received and durable.
    public var offset: Int64
    /// `Upload-Length` in bytes; nil while deferred.
    public var length: Int64?
    /// Decoded `Upload-Metadata`.
    public var metadata: [String: String]
    /// When an unfinished upload expires.
    public var expiresAt: ParseDate
    /// The Parse file's name once complete.
    public var completedName: String?

    public init(_ record: UploadRecord) {
        id = record.id; offset = record.offset; length = record.length; metadata = record.metadata
        expiresAt = record.expiresAt; completedName = record.completedName
    }
}

/// Protocol-level failures, each with its tus status code.
public enum UploadError: Error, Sendable {
    case notFound
    case gone
    case offsetMismatch(current: Int64)
    case locked
    case checksumMismatch
    case tooLarge(maximum: Int)
    case badRequest(String)
    case alreadyComplete(UploadRecord)

    /// The Parse error code of the JSON body: 101 (`ObjectNotFound`) for an unknown or expired upload,
    /// 130 (`FileSaveError`) for everything that leaves a chunk or upload unsaved.
    public var parseCode: ParseError.Code {
        switch self {
        case .notFound, .gone: return .objectNotFound
        default: return .fileSaveError
        }
    }

    /// HTTP status per tus 1.0.0 (§PATCH, §Checksum, §Creation, §Expiration).
    public var status: Int {
        switch self {
        case .notFound: return 404
        case .gone: return 410
        case .offsetMismatch, .alreadyComplete: return 409
        case .locked: return 423
        case .checksumMismatch: return 460
        case .tooLarge: return 413
        case .badRequest: return 400
        }
    }

    public var message: String {
        switch self {
        case .notFound: return "Upload not found."
        case .gone: return "Upload expired."
        case .offsetMismatch(let c): return "Upload-Offset does not match the upload's offset \(c)."
        case .locked: return "Another request is writing to this upload."
        case .checksumMismatch: return "Checksum mismatch: the chunk was discarded."
        case .tooLarge(let m): return "Upload exceeds the maximum size of \(m) bytes."
        case .badRequest(let m): return m
        case .alreadyComplete: return "Upload is already complete."
        }
    }
}
