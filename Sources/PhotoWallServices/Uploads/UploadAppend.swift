import Foundation
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallStorage
import Synchronization

/// One PATCH in progress: the body streams into the part (engine thread), then `finish` (worker
/// thread) verifies the checksum, makes the bytes durable and moves the offset; or `abort`
/// (connection cut: on a worker, queued by the engine after the last write; a body over its limit:
/// on the engine thread before the 413) keeps what arrived. It holds the upload's lease (`token`)
/// from start to end; its commit is conditional on still holding it.
///
/// A PATCH whose connection went quiet can be *preempted* by the next PATCH for the same upload
/// (`preemptIfGone`), as tusd does: a tus client only sends a new PATCH after giving up on the
/// old one, but the server may not learn of the old connection's end for a while — a dropped
/// mobile link sends no FIN at all, and libmicrohttpd 0.9.75 (epoll, edge-triggered) can miss a
/// FIN that arrives together with the last body bytes until its idle timeout (30 s). The
/// preempted request keeps what arrived (as `abort`) and its later calls fail.
///
/// **Pipelining.** A PATCH whose `Upload-Offset` is where the PATCH in progress will end (its offset
/// plus its `Content-Length`) may start once that one's body is in, while it still verifies, syncs
/// and commits (`UploadService.beginAppend`): its body streams into the part behind the first one's
/// bytes (`predecessor`), and it takes over the first one's lease and writer slot. Before it commits,
/// answers, or keeps or drops anything, it waits for its predecessor's outcome; it commits only after
/// the predecessor committed exactly the offset it started at, and otherwise fails with 409 and
/// the committed offset (the client then asks with HEAD, as after any failure). So acknowledged
/// offsets still move in order, each only once its bytes are durable.
///
/// `@unchecked Sendable`: used by one request at a time — the engine thread writes, then exactly
/// one of `finish`/`abort` runs after the body ends (ordered by the engine's suspend/resume or
/// completion callback) — except `preemptIfGone`, `chain` and `isLettingGo`, which another
/// request's thread may call, `disconnected` (the engine thread, a flag under `phase`), and
/// `isMakingProgress`/`token`/`record.id`, which the lease heartbeat reads; `phase` (a mutex, held
/// around every use of `writer` until the request has ended) keeps those from racing with `write`,
/// and `record.id`/`token` never change. `record` is replaced only by the thread ending the request,
/// and read by a successor only after `outcome` is set. The upload's single-writer lock is held from
/// creation to the end.
public final class UploadAppend: @unchecked Sendable {
    let service: UploadService
    public private(set) var record: UploadRecord
    /// The database lease this request holds (shared along a pipelined chain).
    let token: String
    let writer: any UploadPartWriter
    /// The `Upload-Checksum` digest the body must have, when one was sent.
    let expectedChecksum: [UInt8]?
    /// The digests of the chain this request belongs to (the upload's running SHA-256, continued from
    /// the record's saved state), computed behind the writes; and this request's range in them.
    let digests: ReadBackDigests
    let segment: ReadBackDigests.Segment
    /// The upload offset this request's bytes start at.
    let startOffset: Int64
    /// The body length the request declared (`Content-Length`), nil when chunked: where a pipelined
    /// successor may start.
    let declaredLength: Int64?
    /// The PATCH before this one, still committing when this one began (pipelining); nil otherwise.
    let predecessor: UploadAppend?
    var received: Int64 = 0
    var failure: ParseError?
    /// The upload's first bytes (up to `FileService.sniffBytes`), kept as they stream when this request
    /// starts at offset 0, for the type sniffer.
    var firstBytes: [UInt8] = []
    /// Whether the request has ended (finish, abort or preemption started), and when the last body
    /// bytes arrived.
    let phase = Mutex(Phase())
    /// Set once when the request is over: the record as committed, or nil when this request did not
    /// commit all of its body (failed, cut, preempted). A pipelined successor waits for it.
    let outcome = Latch<UploadRecord?>()
    /// Set when the request's whole declared body is in, or the request ended otherwise.
    let bodyEnded = Latch<Bool>()

    struct Phase {
        var ended = false
        var preempted = false
        /// Between the end of the body and the commit (the part store is making bytes durable).
        var committing = false
        var lastWrite = ContinuousClock.now
        /// The whole declared body arrived: a successor may chain on until this request decides
        /// whether to give the lease up (or ends).
        var chainable = false
        /// A pipelined PATCH took the upload over: it owns the lease and the writer slot now.
        var hasSuccessor = false
        /// The commit under way gives the upload up (no successor, not the last chunk).
        var lettingGo = false
        /// The client disconnected mid-body, or the body went over its limit; `abort` is queued and
        /// will keep what arrived.
        var disconnected = false
        /// Asks the connection whether the client hung up (`attach(clientHungUp:)`); nil until given.
        var clientHungUp: (@Sendable () -> Bool)?
    }

    /// - Parameters: checksum: the `Upload-Checksum` (algorithm, digest) sent; digests: the chain's
    ///   digests (a new chain's, or the predecessor's), in which this request's range is added.
    init(service: UploadService, record: UploadRecord, token: String, writer: any UploadPartWriter,
         checksum: (Digest.Algorithm, [UInt8])?, digests: ReadBackDigests, declaredLength: Int64?, predecessor: UploadAppend? = nil) {
        self.service = service; self.record = record; self.token = token; self.writer = writer
        self.expectedChecksum = checksum?.1; self.digests = digests; self.declaredLength = declaredLength
        self.predecessor = predecessor; self.startOffset = record.offset
        segment = digests.addSegment(start: record.offset, length: declaredLength, chunk: checksum.map { Digest($0.0) })
    }

    /// Whether the lease should be renewed: body bytes arrived within `stall`, or a commit is running.
    func isMakingProgress(within stall: Duration) -> Bool {
        phase.withLock { p in p.committing || (!p.ended && ContinuousClock.now - p.lastWrite < stall) }
    }

    /// Appends body bytes. - Throws: when the disk write fails (the connection is then cut).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try phase.withLock { (p: inout Phase) throws in
            // Preempted by a newer PATCH: the part belongs to it now (the engine closes this connection).
            guard !p.ended else { throw UploadError.locked }
            do throws(ParseError) {
                try writer.write(bytes)
            } catch {
                failure = error
                throw error
            }
            if startOffset == 0, firstBytes.count < FileService.sniffBytes {
                firstBytes.append(contentsOf: bytes.prefix(FileService.sniffBytes - firstBytes.count))
            }
            received += Int64(bytes.count)
            digests.wrote(bytes, to: segment, endingAt: startOffset + received)
            p.lastWrite = .now
            if received == declaredLength {
                // The whole declared body is in: a PATCH for the next bytes may chain on (pipelining).
                // Decided here, on the engine thread, so a waiting successor never needs a worker.
                p.chainable = true
            }
        }
        if received == declaredLength { bodyEnded.set(true) }
    }

    /// The body arrived whole. - Returns: the upload after the chunk (complete when it was the last).
    /// - Throws: `UploadError.checksumMismatch` (the chunk is discarded); `.offsetMismatch` when the
    ///   pipelined predecessor did not commit up to this request's offset; `ParseError` on storage failures.
    public func finish() throws -> UploadRecord {
        let (wasEnded, preempted) = phase.withLock { p in
            defer { p.ended = true }
            return (p.ended, p.preempted)
        }
        bodyEnded.set(true)
        if preempted { throw UploadError.locked }  // a newer PATCH took over; it has the upload now
        guard !wasEnded else { return record }
        var committed: UploadRecord?
        defer { end(committed: committed) }
        if failure == nil {
            // Durable now, while the predecessor (if any) still commits and the digests finish on the
            // digest pool; `commit`'s own sync then finds the bytes clean.
            try writer.syncAhead()
        }
        try awaitPredecessor()
        if let failure { throw failure }
        let sums = try digests.digests(of: segment, endingAt: startOffset + received)
        if let expectedChecksum, sums.chunk != expectedChecksum {
            try discardIfHolding()
            throw UploadError.checksumMismatch
        }
        let released = try commit(mayRelease: true, digestState: sums.running)
        if let length = record.length, record.offset == length {
            // The last chunk (no successor can follow it): the completion's write gives the lease up.
            record = try service.complete(record, writer: token, releasing: !released)
            leaseReleased = true
        }
        committed = record
        return record
    }

    /// The connection ended mid-body: keep what arrived (tus §PATCH "should store as much of the
    /// received data as possible"), unless a checksum was promised, which a partial chunk can't meet.
    public func abort() {
        let wasEnded = phase.withLock { p in
            defer { p.ended = true }
            return p.ended
        }
        guard !wasEnded else { return }
        bodyEnded.set(true)
        keepWhatArrived()
    }

    /// The connection was cut mid-body, or the body went over its limit (on the engine thread, before
    /// `abort` is queued for a worker):
    /// from now on the request counts as ending (`isLettingGo`), so a HEAD or a newer PATCH waits for
    /// `abort` to keep what arrived instead of reading the offset from before this request.
    public func disconnected() {
        phase.withLock { $0.disconnected = true }
    }

    /// Gives this request a way to ask its connection whether the client hung up (on the engine thread,
    /// before the first `write`): `preemptIfGone` then needs no stall to end a request whose client left.
    public func attach(clientHungUp: @escaping @Sendable () -> Bool) {
        phase.withLock { $0.clientHungUp = clientHungUp }
    }

    /// Ends this request for a newer request on the upload (a HEAD, or a PATCH that would otherwise get
    /// 423) when its client can no longer send: it hung up, as its connection tells at once
    /// (`attach(clientHungUp:)`; the engine itself may learn of it late, see `PeerConnection`), or no body
    /// bytes arrived for `stall` (a dropped link sends no FIN at all). Keeps what arrived (as `abort`)
    /// and releases the upload's single-writer lock. A hang-up after the whole body is in leaves the request
    /// to finish (its answer is all that is left).
    /// - Returns: false when the request is active (bytes arrived recently and its client is there) or
    ///   already ending.
    func preemptIfGone(stallLimit stall: Duration) -> Bool {
        let (ask, bodyIn) = phase.withLock { ($0.clientHungUp, $0.chainable) }
        // Asked outside the lock: a system call, and `write` takes the lock on the engine thread.
        let hungUp = !bodyIn && ask?() == true
        let take = phase.withLock { p -> Bool in
            guard !p.ended, (hungUp && !p.chainable) || ContinuousClock.now - p.lastWrite >= stall else { return false }
            p.ended = true
            p.preempted = true
            return true
        }
        guard take else { return false }
        bodyEnded.set(true)
        service.logger.notice(hungUp ? "ending an upload request whose client hung up" : "preempting a stalled upload request",
                              ["upload.id": record.id, "bytes": "\(received)"])
        keepWhatArrived()
        return true
    }

    /// Whether this request is ending (`finish`, `abort` or preemption started, or its client
    /// disconnected) or its commit gives the upload up: it frees the upload's writer slot within that,
    /// and sets `outcome` after.
    var isLettingGo: Bool { phase.withLock { $0.ended || $0.lettingGo || $0.disconnected } }

    /// Waits until this request's whole body is in (on the engine thread) or it ended otherwise, at most
    /// `timeout`. - Returns: whether a PATCH at `offset` may now chain on (see `chain`).
    func awaitBodyComplete(forChainingAt offset: Int64, timeout: Duration) -> Bool {
        guard let declaredLength, startOffset + declaredLength == offset else { return false }
        guard bodyEnded.wait(timeout: timeout) != nil else { return false }
        return phase.withLock { $0.chainable }
    }

    /// Makes `make()` this request's successor, when this request's body is complete and it has not
    /// yet decided to give the lease up. - Returns: the successor, or nil (then the caller takes the
    /// ordinary path: this request releases the upload shortly).
    func chain(_ make: () throws -> UploadAppend) rethrows -> UploadAppend? {
        try phase.withLock { p -> UploadAppend? in
            guard p.chainable, !p.hasSuccessor else { return nil }
            let next = try make()
            p.hasSuccessor = true
            p.chainable = false
            return next
        }
    }

    /// Pipelining: waits for the predecessor's outcome; continues from the record it committed.
    /// - Throws: `UploadError.offsetMismatch` when it did not commit up to `startOffset`.
    private func awaitPredecessor() throws {
        guard let predecessor else { return }
        guard let settled = predecessor.outcome.wait(), let committed = settled, committed.offset == startOffset, !committed.isComplete else {
            let current = ((try? service.database.upload(id: record.id)) ?? nil)?.offset ?? predecessor.startOffset
            throw UploadError.offsetMismatch(current: current)
        }
        var r = committed
        r.offset = startOffset
        record = r
    }

    /// The end of an unfinished request: keep what arrived, or drop it when a checksum was promised.
    private func keepWhatArrived() {
        var committed: UploadRecord?
        defer { end(committed: committed) }
        do {
            try awaitPredecessor()
            if expectedChecksum != nil || failure != nil {
                try discardIfHolding()
            } else if received > 0 {
                let sums = try digests.digests(of: segment, endingAt: startOffset + received)
                _ = try commit(mayRelease: true, digestState: sums.running)
                if received == declaredLength { committed = record }
            }
        } catch {
            if case UploadError.offsetMismatch = error { return }
            service.logger.warning("could not keep a cut upload chunk", ["upload.id": record.id, "cause": "\(error)"])
        }
    }

    /// The request is over: tells a successor how it went, closes the part, and gives the upload up
    /// (lease and writer slot) unless a successor took it over.
    private func end(committed: UploadRecord?) {
        let handedOver = phase.withLock { p in
            p.chainable = false
            return p.hasSuccessor
        }
        writer.close()
        // Released before the outcome is told: a PATCH that came too late to chain waits for the
        // outcome and then finds the upload free.
        if !handedOver { service.release(record.id, token: token, leaseReleased: leaseReleased) }
        outcome.set(committed)
        if predecessor != nil { service.pipelineSlots.release() }
    }

    /// Whether this request's last commit also released the database lease.
    private var leaseReleased = false

    /// Drops this request's bytes from the part — only while it holds the lease: after a takeover
    /// the part may be the new writer's (a shared filesystem), and is left alone.
    private func discardIfHolding() throws {
        guard try service.database.renewUploadWriter(id: record.id, writer: token, now: .now()) else { return }
        try writer.discard()
    }

    /// Makes the bytes durable, then records the new offset, part state and `digestState` (the
    /// running SHA-256 at the new offset; the order that keeps HEAD honest) and pushes the expiry on —
    /// all only while this request holds the lease.
    /// With `mayRelease`, the same write gives the lease up, unless a pipelined successor took it over
    /// or this chunk completes the upload (the completion still needs it).
    /// - Returns: whether the lease was released.
    /// - Throws: `UploadError.locked` when another request (on any instance) took the upload over:
    ///   nothing is committed, and what this one wrote beyond the committed state is ignored.
    func commit(mayRelease: Bool, digestState: [UInt8]?) throws -> Bool {
        phase.withLock { $0.committing = true }
        defer { phase.withLock { $0.committing = false } }
        // A fence before touching shared storage: a writer that lost its lease must not write parts.
        guard try service.database.renewUploadWriter(id: record.id, writer: token, now: .now()) else {
            throw UploadError.locked
        }
        let (size, state) = try writer.sync()
        var u = record
        if record.offset == 0, size > 0 {
            // The first bytes of the upload: the stored type comes from them for the image types we know.
            u.contentType = FileService.storedType(declared: u.contentType, firstBytes: Array(firstBytes.prefix(Int(size)))).type
        }
        u.offset = size
        u.partState = state
        u.digestState = digestState
        let now = ParseDate.now()
        u.expiresAt = ParseDate(millisecondsSince1970: now.millisecondsSince1970 + service.expirySeconds * 1000)
        // From here on no successor may chain: the lease is given up with this commit or kept for one.
        let release = phase.withLock { p in
            p.chainable = false
            p.lettingGo = mayRelease && !p.hasSuccessor && u.offset != u.length
            return p.lettingGo
        }
        let stored = release ? try service.database.commitUploadReleasingWriter(u, writer: token)
            : try service.database.commitUpload(u, writer: token)
        guard stored else { throw UploadError.locked }
        record = u
        leaseReleased = release
        return release
    }
}

/// A value set once and awaited by other threads (a pipelined PATCH waits for its predecessor's
/// body and outcome).
final class Latch<Value: Sendable>: Sendable {
    private let condition = NSCondition()
    /// Only touched with `condition` locked; a Mutex so the compiler sees it Sendable.
    private let value = Mutex<Value?>(nil)

    /// Sets the value (the first call wins) and wakes the waiters.
    func set(_ v: Value) {
        condition.lock()
        value.withLock { if $0 == nil { $0 = v } }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until set, or at most `timeout` (a `WorkerPool.blocking` wait). - Returns: the value, or nil on timeout.
    func wait(timeout: Duration? = nil) -> Value? {
        WorkerPool.blocking { waitBlocking(timeout: timeout) }
    }

    private func waitBlocking(timeout: Duration?) -> Value? {
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0.inSeconds) }
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let v = value.withLock({ $0 }) { return v }
            if let deadline {
                guard condition.wait(until: deadline) else { return value.withLock { $0 } }
            } else {
                condition.wait()
            }
        }
    }
}
