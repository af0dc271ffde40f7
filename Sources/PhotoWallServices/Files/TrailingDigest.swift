import Foundation
import PhotoWallCore
import PhotoWallCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Hashes a file while it is being written, on a thread of its own that reads the bytes back from the
/// page cache behind the writer, so the thread receiving the body only receives and writes (as nginx
/// does) and the SHA-256 runs on another core beside it. `POST /files` uses it for large bodies.
///
/// The writer calls `wrote(upTo:)` after each write (cheap: the helper is woken only once 1 MiB is
/// waiting), then `finish()` once the body is in, which waits for the helper to catch up; or
/// `cancel()`. `@unchecked Sendable`: the counters are touched only with `condition` locked, `digest`
/// by the helper until it has caught up with a closed target and by `finish`'s caller only after.
final class TrailingDigest: @unchecked Sendable {
    private let condition = NSCondition()
    private let digest: Digest
    /// The read descriptor (owned: closed by the helper when it ends).
    private let fd: Int32
    private var target: Int64
    private var hashed: Int64
    /// No more bytes will come (`finish` or `cancel`).
    private var closed = false
    private var cancelled = false
    private var helperWaiting = false
    private var helperEnded = false
    private var failure: POSIXFailure?
    /// Bytes waiting before the writer wakes the helper.
    static let wakeBytes: Int64 = 1 << 20

    /// Starts the helper on `fd` (a descriptor open for reading on the file being written, which it
    /// closes), continuing `digest` from file offset `offset` (the bytes before were hashed already).
    init(fd: Int32, digest: Digest, from offset: Int64) {
        self.fd = fd; self.digest = digest; target = offset; hashed = offset
        let thread = Thread { [self] in run() }
        thread.name = "file-digest"
        thread.start()
    }

    /// The writer: bytes up to file offset `end` are written.
    func wrote(upTo end: Int64) {
        condition.lock()
        target = end
        if helperWaiting, end - hashed >= Self.wakeBytes { condition.broadcast() }
        condition.unlock()
    }

    /// The body is in: waits until every written byte is hashed. - Returns: the digest's value.
    /// - Throws: the read failure, if any.
    func finish() throws(POSIXFailure) -> [UInt8] {
        condition.lock()
        closed = true
        condition.broadcast()
        while !helperEnded { condition.wait() }
        let failure = failure
        condition.unlock()
        if let failure { throw failure }
        return digest.finalize()
    }

    /// Stops the helper without waiting for it (the upload was dropped).
    func cancel() {
        condition.lock()
        closed = true
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer {
            buffer.deallocate()
            close(fd)
            condition.lock()
            helperEnded = true
            condition.broadcast()
            condition.unlock()
        }
        while true {
            // Wait for 1 MiB, or for the rest once the body is in; end when cancelled or caught up.
            condition.lock()
            while true {
                if cancelled || (closed && hashed == target) {
                    condition.unlock()
                    return
                }
                if target - hashed >= Self.wakeBytes || closed { break }
                helperWaiting = true
                condition.wait()
                helperWaiting = false
            }
            let (from, to) = (hashed, target)
            condition.unlock()
            var at = from
            while at < to {
                let n = pread(fd, buffer.baseAddress, Int(min(Int64(buffer.count), to - at)), off_t(at))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    condition.lock()
                    failure = POSIXFailure(call: "pread", code: n == 0 ? EIO : errno)
                    condition.unlock()
                    return
                }
                digest.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                at += Int64(n)
            }
            condition.lock()
            hashed = to
            condition.unlock()
        }
    }
}
