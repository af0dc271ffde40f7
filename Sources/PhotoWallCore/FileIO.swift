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

/// Starts the disk writes of a file being streamed while more bytes still arrive, so that its final
/// `fsync`/`fdatasync` (before the upload is acknowledged) waits only for the last few MiB instead of
/// the whole file: without it, Linux keeps everything dirty in the page cache (background writeback
/// starts at 10% of RAM) and the sync writes it all at once, after the last byte came in.
///
/// Call `wrote(_:)` after each `write(2)`; every `stepBytes` it asks the kernel to start writing the
/// range since the last call (`sync_file_range(SYNC_FILE_RANGE_WRITE)`: asynchronous, durable only
/// after the sync). A hint only: without `sync_file_range` (not Linux) it does nothing.
/// Not thread-safe: owned by one file writer.
public struct WritebackStarter {
    /// How many bytes are left dirty before writeback is started (default 4 MiB).
    public let stepBytes: Int64
    /// The file offset up to which writeback was started.
    public private(set) var startedUpTo: Int64
    /// The file offset written so far.
    public private(set) var writtenUpTo: Int64

    /// - Parameter offset: where the writer starts in the file (a resumed upload part's offset).
    public init(offset: Int64 = 0, stepBytes: Int64 = 4 << 20) {
        self.stepBytes = stepBytes; startedUpTo = offset; writtenUpTo = offset
    }

    /// Records `count` bytes written to `fd` at the end of the range; starts writeback of the
    /// pending range once it reaches `stepBytes`.
    public mutating func wrote(_ count: Int, fd: Int32) {
        writtenUpTo += Int64(count)
        guard writtenUpTo - startedUpTo >= stepBytes else { return }
        if let start = syncFileRange {
            _ = start(fd, startedUpTo, writtenUpTo - startedUpTo, 2 /* SYNC_FILE_RANGE_WRITE */)
        }
        startedUpTo = writtenUpTo
    }

    /// `sync_file_range(2)`, which Swift's Glibc module does not import (it is a GNU extension): looked
    /// up once in the C library (its address as an integer, so the constant is Sendable); 0 where it
    /// does not exist.
    private static let syncFileRangeAddress = Int(bitPattern: dlsym(nil, "sync_file_range"))
    private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
    private var syncFileRange: SyncFileRange? {
        UnsafeRawPointer(bitPattern: Self.syncFileRangeAddress).map { unsafeBitCast($0, to: SyncFileRange.self) }
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
