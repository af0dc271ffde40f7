import Foundation
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallStorage
import Synchronization

/// One PATCH in progress: the body streams into the part (engine thread), then `finish` (worker
/// thread) verifies the checksum, makes the bytes durable and moves the offset; or `abort`
/// (connection cut) keeps what arrived. It holds the upload's lease (`token`) from start to end;
/// its commit is conditional on still holding it.
///
/// A PATCH whose connection went quiet can be *preempted* by the next PATCH for the same upload
/// (`preemptIfStalled`), as tusd does: a tus client only sends a new PATCH after giving up on the
/// old one, but the server may not learn of the old connection's end for a while — a dropped
/// mobile link sends no FIN at all, and libmicrohttpd 0.9.75 (epoll, edge-triggered) can miss a
/// FIN that arrives together with the last body bytes until its idle timeout (30 s). The
/// preempted request keeps what arrived (as `abort` does) and its later calls fail.
///
/// `@unchecked Sendable`: used by one request at a time — the engine thread writes, then exactly
/// one of `finish`/`abort` runs after the body ends (ordered by the engine's suspend/resume or
/// completion callback) — except `preemptIfStalled`, which another request's thread may call, and
/// `isMakingProgress`/`token`/`record.id`, which the lease heartbeat reads; `phase` (a mutex, held
/// around every use of `writer` until the request has ended) keeps those from racing with
/// `write`, and `record.id`/`token` never change. The upload's single-writer lock is held from
/// creation to the end.
public final class UploadAppend: @unchecked Sendable {
    let service: UploadService
    public private(set) var record: UploadRecord
    /// The database lease this request holds.
    let token: String
    let writer: any UploadPartWriter
    let expected: (Digest, [UInt8])?
    /// SHA-256 of the upload's bytes so far, continued from the record's saved state.
    let running: ResumableSHA256?
    var received: Int64 = 0
    var failure: ParseError?
    /// The upload's first bytes (up to `FileService.sniffBytes`), kept as they stream when this request
    /// starts at offset 0, for the type sniffer.
    var firstBytes: [UInt8] = []
    /// Whether the request has ended (finish, abort or preemption started), and when the last body
    /// bytes arrived.
    let phase = Mutex(Phase())

    struct Phase {
        var ended = false
        var preempted = false
        /// Between the end of the body and the commit (the part store is making bytes durable).
        var committing = false
        var lastWrite = ContinuousClock.now
    }

    init(service: UploadService, record: UploadRecord, token: String, writer: any UploadPartWriter,
         expected: (Digest, [UInt8])?, running: ResumableSHA256?) {
        self.service = service; self.record = record; self.token = token; self.writer = writer
        self.expected = expected; self.running = running
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
            if record.offset == 0, firstBytes.count < FileService.sniffBytes {
                firstBytes.append(contentsOf: bytes.prefix(FileService.sniffBytes - firstBytes.count))
            }
            expected?.0.update(bytes)
            running?.update(bytes)
            received += Int64(bytes.count)
            p.lastWrite = .now
        }
    }

    /// The body arrived whole. - Returns: the upload after the chunk (complete when it was the last).
    /// - Throws: `UploadError.checksumMismatch` (the chunk is discarded); `ParseError` on storage failures.
    public func finish() throws -> UploadRecord {
        let (wasEnded, preempted) = phase.withLock { p in
            defer { p.ended = true }
            return (p.ended, p.preempted)
        }
        if preempted { throw UploadError.locked }  // a newer PATCH took over; it has the upload now
        guard !wasEnded else { return record }
        defer { writer.close(); service.release(record.id, token: token) }
        if let failure { throw failure }
        if let (digest, want) = expected, digest.finalize() != want {
            try discardIfHolding()
            throw UploadError.checksumMismatch
        }
        try commit()
        if let length = record.length, record.offset == length {
            record = try service.complete(record, writer: token)
        }
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
        keepWhatArrived()
    }

    /// Ends this request for a newer PATCH when no body bytes arrived for `stall`: keeps what
    /// arrived (as `abort`) and releases the upload's single-writer lock.
    /// - Returns: false when the request is active (bytes arrived recently) or already ending.
    func preemptIfStalled(after stall: Duration) -> Bool {
        let take = phase.withLock { p -> Bool in
            guard !p.ended, ContinuousClock.now - p.lastWrite >= stall else { return false }
            p.ended = true
            p.preempted = true
            return true
        }
        guard take else { return false }
        service.logger.notice("preempting a stalled upload request", ["upload.id": record.id, "bytes": "\(received)"])
        keepWhatArrived()
        return true
    }

    /// The end of an unfinished request: keep what arrived, or drop it when a checksum was promised.
    private func keepWhatArrived() {
        defer { writer.close(); service.release(record.id, token: token) }
        do {
            if expected != nil || failure != nil {
                try discardIfHolding()
            } else if received > 0 {
                try commit()
            }
        } catch {
            service.logger.warning("could not keep a cut upload chunk", ["upload.id": record.id, "cause": "\(error)"])
        }
    }

    /// Drops this request's bytes from the part — only while it holds the lease: after a takeover
    /// the part may be the new writer's (a shared filesystem), and is left alone.
    private func discardIfHolding() throws {
        guard try service.database.renewUploadWriter(id: record.id, writer: token, now: .now()) else { return }
        try writer.discard()
    }

    /// Makes the bytes durable, then records the new offset, part state and digest state (the order
    /// that keeps HEAD honest) and pushes the expiry on — all only while this request holds the lease.
    /// - Throws: `UploadError.locked` when another request (on any instance) took the upload over:
    ///   nothing is committed, and what this one wrote beyond the committed state is ignored.
    func commit() throws {
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
        u.digestState = running?.state
        let now = ParseDate.now()
        u.expiresAt = ParseDate(millisecondsSince1970: now.millisecondsSince1970 + service.expirySeconds * 1000)
        guard try service.database.commitUpload(u, writer: token) else { throw UploadError.locked }
        record = u
    }
}
