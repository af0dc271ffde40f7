import Foundation
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallStorage

/// The digests of a file being written by request bodies: its running SHA-256 (`ResumableSHA256`:
/// a tus upload saves its state with every commit) and, per range of it (a `Segment`: one request's
/// bytes), the digest that request's `Upload-Checksum` promised. A `POST /files` body is one range;
/// a tus upload's chain of PATCH requests (one, or pipelined ones writing adjacent ranges of the
/// part; see `UploadAppend`) is one range each.
///
/// **Off the receiving thread.** Where the store reads the written bytes back (`FileWriter.openReader`,
/// `UploadPartStore.openForReading`: a local file), they are not hashed by the thread that receives
/// and writes them (the engine's event thread, which then only copies: a `POST` of 256 MiB went from
/// 645 to about 1,100 MB/s without the hashing there). They are read back from the file — from the
/// page cache, where they just went — and hashed on `pool`, in reads of `readSize`, as soon as
/// `batchSize` bytes wait; a request waits for its range only when it commits
/// (`digests(of:endingAt:)`), the pool hashing what is left (so at most `pool`'s threads hash at
/// once, however many requests finish together). When no more than `inlineBytes` are left, the
/// committing thread hashes them itself instead: handing a small body (a 4 KB photo) to the pool and
/// waiting for it costs two thread switches, which under load took longer than the hashing (64
/// clients' mixed load: the wait for a small `POST /files` body's SHA-256 was 2.6 ms at the median, 21
/// ms at p90, for ~20 µs of hashing). Other stores hash each write as it happens (`wrote`), on the
/// receiving thread.
///
/// Ranges are hashed in order. At each range's end its chunk digest is finalized and the running
/// digest's state saved, so a commit gets the state at exactly its own end even when the hashing
/// has moved on into a pipelined successor's bytes.
///
/// `@unchecked Sendable`: every mutable member, and every `Segment`'s, is used with `condition`
/// locked, except the digest objects (`running`, `Segment.chunk`) while bytes read back are hashed:
/// only the thread holding the `hashing` turn does that (one at a time, ordered by `condition`), and
/// the states are read out under `condition` by that thread too. Without read-back they are used
/// only with `condition` locked.
final class ReadBackDigests: @unchecked Sendable {
    /// One request's range of the file: `[start, end)`; `end` is set at creation when the request
    /// declared its length, and cut back to where its bytes end when it ends early.
    final class Segment {
        let start: Int64
        fileprivate var end: Int64?
        fileprivate let chunk: Digest?
        /// Set when the whole range is hashed.
        fileprivate var result: (chunk: [UInt8]?, running: [UInt8]?)?
        fileprivate init(start: Int64, end: Int64?, chunk: Digest?) { self.start = start; self.end = end; self.chunk = chunk }
    }

    /// Threads that hash bytes read back, one per two cores (the receiving threads, the request
    /// workers and, on a small machine, the clients need the rest); jobs never block (they hash what
    /// is written, then end).
    static let pool = WorkerPool(threadCount: max(1, ProcessInfo.processInfo.activeProcessorCount / 2), name: "digest")
    /// Bytes per read (one buffer per hashing turn, while it lasts): a read from the page cache costs
    /// a few µs.
    static let readSize = 64 << 10
    /// A hashing job starts once this many written bytes wait.
    static let batchSize: Int64 = 1 << 20
    /// A committing request hashes what is left of its range itself when no more than this is (about
    /// 0.15 ms of SHA-256); more is left to the pool.
    static let inlineBytes: Int64 = 256 << 10

    private let reader: (any WrittenBytesReader)?
    private let running: ResumableSHA256?
    private let condition = NSCondition()
    /// Ranges not yet hashed through, in part order.
    private var pending: [Segment] = []
    /// Every byte of the file below it has been written (the ranges are written in order).
    private var written: Int64
    /// Every byte below it has been hashed.
    private var hashed: Int64
    /// A pool job is hashing (or queued to).
    private var hashing = false
    /// A read-back failed (or found the file shorter than written): the chain's digests are lost.
    private var failure: ParseError?

    /// - Parameters:
    ///   - offset: where the first range starts in the file (a tus upload's committed offset; 0 for a
    ///     `POST` body).
    ///   - runningState: the upload's saved SHA-256 state at `offset` (`UploadRecord.digestState`); nil
    ///     (an upload from before digests were saved) keeps no running digest.
    ///   - reader: the file read back, or nil to hash bytes as they are written.
    init(startingAt offset: Int64, runningState: [UInt8]?, reader: (any WrittenBytesReader)?) {
        written = offset; hashed = offset
        running = runningState.flatMap { ResumableSHA256(state: $0) }
        self.reader = reader
    }

    /// Every byte below it has been hashed (a snapshot, for tests and diagnostics).
    var hashedOffset: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return hashed
    }

    /// Adds the next request's range, starting where the last one ends.
    /// - Parameters: length: its declared body length (nil when chunked); chunk: the digest of its
    ///   `Upload-Checksum`, if it sent one.
    func addSegment(start: Int64, length: Int64?, chunk: Digest?) -> Segment {
        let segment = Segment(start: start, end: length.map { start + $0 }, chunk: chunk)
        condition.lock()
        pending.append(segment)
        condition.unlock()
        return segment
    }

    /// `bytes` of `segment` were written to the file; its bytes so far end at `end`. Called by the
    /// writing thread after each write.
    func wrote(_ bytes: UnsafeRawBufferPointer, to segment: Segment, endingAt end: Int64) {
        condition.lock()
        guard reader != nil else {
            // No read-back: hash here, as the bytes go by.
            segment.chunk?.update(bytes)
            running?.update(bytes)
            written = end; hashed = end
            closeHashedSegments()
            condition.unlock()
            return
        }
        written = end
        let start = !hashing && failure == nil && written - hashed >= Self.batchSize
        if start { hashing = true }
        condition.unlock()
        if start { Self.pool.submit { self.hashWritten() } }
    }

    /// Waits until `segment` is hashed through `end` (where its bytes end), hashing what is left of it
    /// on this thread when that is at most `inlineBytes` and no other thread hashes, else starting a
    /// pool job for it when none runs.
    /// - Returns: its `Upload-Checksum` digest (nil without one) and the running SHA-256 state at `end`
    ///   (nil without a running digest).
    /// - Throws: 130 when the file could not be read back.
    func digests(of segment: Segment, endingAt end: Int64) throws(ParseError) -> (chunk: [UInt8]?, running: [UInt8]?) {
        condition.lock()
        defer { condition.unlock() }
        if segment.end.map({ $0 > end }) ?? true { segment.end = end }
        while true {
            if let result = segment.result { return result }
            if let failure { throw failure }
            if !hashing {
                hashing = true
                if min(written, end) - hashed <= Self.inlineBytes {
                    condition.unlock()
                    hashWritten(until: segment)
                    condition.lock()
                    continue
                }
                Self.pool.submit { self.hashWritten() }
            }
            condition.wait()
        }
    }

    /// Hashes what is written, range by range, until it catches up, or (`until`) until that range is
    /// hashed through: a pool job, or a committing request on its own thread. The caller took the
    /// `hashing` turn for it.
    private func hashWritten(until target: Segment? = nil) {
        var buffer: UnsafeMutableRawBufferPointer?
        defer { buffer?.deallocate() }
        condition.lock()
        while failure == nil {
            closeHashedSegments()
            if let target, target.result != nil { break }
            guard let current = pending.first, let reader else { break }
            let limit = min(written, current.end ?? written)
            guard limit > hashed else { break }
            let offset = hashed
            if buffer == nil { buffer = .allocate(byteCount: Self.readSize, alignment: 64) }
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer![0..<Int(min(limit - offset, Int64(Self.readSize)))])
            condition.unlock()
            let outcome: Result<Int, ParseError>
            do throws(ParseError) {
                let n = try reader.read(at: offset, into: slice)
                if n == slice.count {
                    let bytes = UnsafeRawBufferPointer(slice)
                    current.chunk?.update(bytes)
                    running?.update(bytes)
                }
                outcome = .success(n)
            } catch {
                outcome = .failure(error)
            }
            condition.lock()
            switch outcome {
            case .success(let n) where n == slice.count:
                hashed += Int64(n)
            case .success:
                failure = ParseError(.fileSaveError, "The upload's part is shorter than the bytes written to it.")
            case .failure(let error):
                failure = error
            }
        }
        hashing = false
        condition.broadcast()
        condition.unlock()
    }

    /// Finishes the ranges hashed through their end (`condition` locked, by the thread whose turn it is).
    private func closeHashedSegments() {
        while let first = pending.first, let end = first.end, end <= hashed {
            guard end == hashed else {
                // Hashed past a range's end: its bytes were misreported. Nothing can be committed now.
                failure = ParseError(.internalServerError, "Internal server error.", cause: UploadDigestOverrun(end: end, hashed: hashed))
                condition.broadcast()
                return
            }
            first.result = (first.chunk?.finalize(), running?.state)
            pending.removeFirst()
            condition.broadcast()
        }
    }
}

/// A range's end fell behind the bytes hashed (a bug, reported rather than hashed on).
struct UploadDigestOverrun: Error, CustomStringConvertible {
    let end: Int64, hashed: Int64
    var description: String { "upload digest passed a range's end: end \(end), hashed \(hashed)" }
}
