#if canImport(Glibc)
import Glibc
#endif

/// An errno from a named call, kept as an error's `cause` for logs (`"rename: No such file or directory"`).
public struct POSIXFailure: Error, Sendable, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public init(call: String, code: Int32) { self.call = call; self.code = code }
    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// `fsync(2)` of `fd`, as a `WorkerPool.blocking` region: a wait on the disk, during which the
/// calling pool thread's slot goes to the next job. Every durable write's sync goes through here.
/// - Returns: `fsync`'s result (0, or -1 with `errno` set).
public func syncFile(_ fd: Int32) -> Int32 { WorkerPool.blocking { fsync(fd) } }

/// `fdatasync(2)` of `fd` (the bytes and the size, not the times), as `syncFile` a `WorkerPool.blocking`
/// region. - Returns: `fdatasync`'s result (0, or -1 with `errno` set).
public func syncFileData(_ fd: Int32) -> Int32 { WorkerPool.blocking { fdatasync(fd) } }

/// Writes every byte to `fd`, retrying short writes and `EINTR` (a pipe, socket or full disk may
/// take part of a `write(2)`). - Returns: false on an error (`errno` tells which); true for no bytes.
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard var p = bytes.baseAddress else { return true }
    var left = bytes.count
    while left > 0 {
        let n = write(fd, p, left)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        p += n; left -= n
    }
    return true
}

/// Writes all of `bytes` at file `offset` with `pwrite(2)`, retrying short writes and `EINTR`; the
/// descriptor's own offset is left alone. - Returns: false on an error (`errno` tells which).
public func pwriteAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
    var done = 0
    while done < bytes.count {
        let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + Int64(done)))
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        done += n
    }
    return true
}

/// Reads up to `buffer.count` bytes at file `offset` with `pread(2)`, retrying short reads and `EINTR`
/// until the buffer is full or the file ends; the descriptor's own offset is left alone.
/// - Returns: the bytes read (fewer than `buffer.count` only at the end of the file), or -1 on an
///   error (`errno` tells which).
public func preadAll(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
    var done = 0
    while done < buffer.count {
        let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
        if n < 0 {
            if errno == EINTR { continue }
            return -1
        }
        if n == 0 { break }
        done += n
    }
    return done
}

/// Makes a file being streamed durable in steps while more bytes still arrive, so that its final
/// `fsync`/`fdatasync` (before the upload is acknowledged) waits only for the last few MiB instead of
/// the whole file.
///
/// Two steps, each optional:
/// - every `stepBytes` it asks the kernel to start writing the range since the last one
///   (`sync_file_range(SYNC_FILE_RANGE_WRITE)`: asynchronous, on the writing thread). Without it Linux
///   keeps everything dirty in the page cache (background writeback starts at 10% of RAM) and the
///   final sync writes it all at once, after the last byte came in;
/// - every `flushStepBytes` it starts an `fdatasync` of the file on a thread of `FlushAhead.pool`
///   (one at a time per file; a step reached while one runs is taken by the next). Started writeback
///   only hands the bytes to the device: a device with a volatile write cache (a virtual disk, most
///   SSDs) keeps them there until a cache flush, which the final sync then issues for the whole
///   file. Measured on this project's virtual disk: 256 MiB streamed at 400 MB/s with writeback
///   started every 4 MiB still took 310–350 ms to `fdatasync` at the end (`blkdev_issue_flush`,
///   1.2–1.4 ms per MiB); with an `fdatasync` started every 16 MiB, 11–25 ms.
///
/// Call `wrote(_:fd:)` after each `write(2)`, `settle()` before the file's own sync, and close `fd`
/// through `close(_:)` (or after `settle()`): a flush still running holds the descriptor. A flush
/// that failed is reported by `settle()` only: its error is not seen again by a later `fdatasync` of
/// the same open file (Linux reports a writeback error once per open file description), so the
/// writer must fail then.
/// Not thread-safe: owned by one file writer.
public struct WritebackStarter {
    /// How many bytes are left dirty before writeback is started (default 4 MiB); nil: never started
    /// from the writing thread.
    public let stepBytes: Int64?
    /// How many bytes are written between two flushes started ahead (default 16 MiB); nil: none.
    public let flushStepBytes: Int64?
    /// The file offset up to which writeback was started.
    public private(set) var startedUpTo: Int64
    /// The file offset written so far.
    public private(set) var writtenUpTo: Int64
    /// The file offset written when the last flush ahead was started.
    public private(set) var flushStartedAt: Int64
    /// The flushes of this file (made at the first one).
    private var flushes: FlushAhead?

    /// - Parameter offset: where the writer starts in the file (a resumed upload part's offset).
    public init(offset: Int64 = 0, stepBytes: Int64? = 4 << 20, flushStepBytes: Int64? = 16 << 20) {
        self.stepBytes = stepBytes; self.flushStepBytes = flushStepBytes
        startedUpTo = offset; writtenUpTo = offset; flushStartedAt = offset
    }

    /// Records `count` bytes written to `fd` at the end of the range; starts writeback of the
    /// pending range once it reaches `stepBytes`, and a flush once `flushStepBytes` were written since
    /// the last one started (unless one still runs).
    public mutating func wrote(_ count: Int, fd: Int32) {
        writtenUpTo += Int64(count)
        if let stepBytes, writtenUpTo - startedUpTo >= stepBytes {
            if let start = syncFileRange {
                _ = start(fd, startedUpTo, writtenUpTo - startedUpTo, 2 /* SYNC_FILE_RANGE_WRITE */)
            }
            startedUpTo = writtenUpTo
        }
        if let flushStepBytes, writtenUpTo - flushStartedAt >= flushStepBytes {
            if flushes == nil { flushes = FlushAhead() }
            if flushes!.start(fd: fd) { flushStartedAt = writtenUpTo }
        }
    }

    /// Waits for a flush ahead that is running; one still queued never starts. Later writes may start
    /// new ones. - Returns: the `errno` of the first flush ahead that failed, or nil.
    public func settle() -> Int32? {
        flushes?.settle()
    }

    /// Closes `fd` without waiting, for a writer that drops its bytes (an aborted body, on the engine
    /// thread): now when no flush ahead runs, else by the flush thread once its flush ends. A queued
    /// flush never starts; a failure is not reported (the bytes are dropped anyway).
    public func close(_ fd: Int32) {
        if let flushes { flushes.close(fd) } else { Glibc.close(fd) }
    }

    /// Flushes ahead that have ended, failed or not (a snapshot, for tests and diagnostics).
    public var flushesFinished: Int { flushes?.finished ?? 0 }

    /// `sync_file_range(2)`, which Swift's Glibc module does not import (it is a GNU extension): looked
    /// up once in the C library (its address as an integer, so the constant is Sendable); 0 where it
    /// does not exist.
    private static let syncFileRangeAddress = Int(bitPattern: dlsym(nil, "sync_file_range"))
    private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
    private var syncFileRange: SyncFileRange? {
        UnsafeRawPointer(bitPattern: Self.syncFileRangeAddress).map { unsafeBitCast($0, to: SyncFileRange.self) }
    }
}

/// The `fdatasync`s a `WritebackStarter` starts ahead for one file: at most one queued or running at
/// a time; `settle` waits for the running one and drops a queued one (its job then does nothing, so
/// it never touches a descriptor closed after `settle`).
///
/// `@unchecked Sendable`: `generation`, `queued`, `running`, `failure`, `finishedCount` and
/// `closeAfter` are read and written only with `lock` held.
final class FlushAhead: @unchecked Sendable {
    /// The threads that run the flushes: they only wait on the disk. Two, so one slow file does not
    /// hold up every other file's flush (a device's cache flush covers every file anyway).
    static let pool = WorkerPool(threadCount: 2, name: "flush")

    private let lock = ConditionLock()
    /// Bumped by `settle`: a job queued before it does nothing.
    private var generation = 0
    /// Jobs queued and not yet begun (a dropped one counts until its thread takes it).
    private var queued = 0
    /// Jobs in their `fdatasync` (0 or 1).
    private var running = 0
    private var failure: Int32?
    private var finishedCount = 0
    /// A descriptor the running flush closes when it ends (`close`).
    private var closeAfter: Int32?

    /// Flushes that have ended (a snapshot).
    var finished: Int { lock.withLock { finishedCount } }

    /// Queues an `fdatasync` of `fd` unless one is queued or running, or one failed.
    /// - Returns: whether it queued one.
    func start(fd: Int32) -> Bool {
        let mine: Int? = lock.withLock {
            guard queued == 0, running == 0, failure == nil else { return nil }
            queued += 1
            return generation
        }
        guard let mine else { return false }
        Self.pool.submit { self.run(fd: fd, generation: mine) }
        return true
    }

    private func run(fd: Int32, generation mine: Int) {
        let go = lock.withLock {
            queued -= 1
            guard mine == generation else { return false }
            running += 1
            return true
        }
        guard go else { return }
        let code = fdatasync(fd) == 0 ? nil : errno
        let closing: Int32? = lock.withLock {
            running -= 1
            finishedCount += 1
            if failure == nil { failure = code }
            lock.broadcast()
            defer { closeAfter = nil }
            return closeAfter
        }
        if let closing { Glibc.close(closing) }
    }

    /// Closes `fd` now when no flush runs, else leaves it to the running one; drops a queued one.
    func close(_ fd: Int32) {
        let now = lock.withLock {
            generation += 1
            guard running > 0 else { return true }
            closeAfter = fd
            return false
        }
        if now { Glibc.close(fd) }
    }

    /// Waits until no flush runs and drops a queued one; the wait is a `WorkerPool.blocking` region
    /// (it waits on the disk). - Returns: the `errno` of the first that failed.
    func settle() -> Int32? {
        let mustWait = lock.withLock {
            generation += 1
            return running > 0
        }
        if mustWait {
            WorkerPool.blocking { lock.withLock { while running > 0 { lock.wait() } } }
        }
        return lock.withLock { failure }
    }
}

/// Whole files that appear at their path complete or not at all: the bytes go to a temporary file
/// in the same directory, which is flushed (`fsync`), renamed over the target (`rename(2)` is
/// atomic on one filesystem) and then made durable by flushing the directory. A crash leaves the
/// old file or the new one, never half of one; readers never see a partial file.
public enum AtomicFile {
    /// Writes `bytes` to `path` with permission bits exactly `mode` (the umask can't remove any).
    /// The temporary file is `path + ".tmp-<pid>"`; it is removed on failure.
    /// - Throws: `POSIXFailure` naming the call that failed (`open`, `write`, `fsync`, `rename`).
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o644) throws(POSIXFailure) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw POSIXFailure(call: "open \(temporary)", code: errno) }
        fchmod(fd, mode)  // umask may have removed bits; never add any beyond `mode`
        let written = bytes.withContiguousStorageIfAvailable { writeAll(fd, UnsafeRawBufferPointer($0)) }
            ?? Array(bytes).withUnsafeBytes { writeAll(fd, $0) }
        guard written else {
            let code = errno
            close(fd); unlink(temporary)
            throw POSIXFailure(call: "write \(temporary)", code: code)
        }
        try publish(fd, temporary: temporary, as: path)
    }

    /// Finishes a file written at `temporary` through `fd`: `fsync`, close, rename to `path`, then
    /// `fsync` of `path`'s directory. `fd` is closed in every case; `temporary` is removed when the
    /// rename fails. - Throws: `POSIXFailure` for the `fsync` of the file or the `rename`.
    public static func publish(_ fd: Int32, temporary: String, as path: String) throws(POSIXFailure) {
        guard syncFile(fd) == 0 else {
            let code = errno
            close(fd); unlink(temporary)
            throw POSIXFailure(call: "fsync \(temporary)", code: code)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw POSIXFailure(call: "rename \(temporary) to \(path)", code: code)
        }
        syncDirectory(of: path)
    }

    /// Flushes the directory that holds `path` so a rename or link into it survives a crash (best effort).
    public static func syncDirectory(of path: String) {
        let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let dfd = open(dir.isEmpty ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { _ = syncFile(dfd); close(dfd) }
    }
}
