#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An input file opened with POSIX calls (no Foundation), refusing files over a size cap.
///
/// Read it whole (``load(_:maxBytes:)``), or read the start with ``read(upTo:)`` and hand
/// ``descriptor`` to a decoder that reads the rest itself in small blocks (JPEG), so
/// the file never sits in memory whole. Closed when it goes out of scope.
struct FileInput: ~Copyable {
    /// Bytes read first: enough for the JPEG markers up to the first scan of camera files
    /// (an EXIF APP1 segment is at most 64 KiB; ICC profiles and maker notes add some).
    static let headerPrefixBytes = 256 << 10

    let path: String
    /// Open read-only; positioned after what has been read so far.
    let descriptor: Int32
    /// Size from `fstat` when opened, in bytes (at most the cap).
    let size: Int

    /// - Throws: `.readFailed` when the file cannot be opened or is not a regular
    ///   file; `.tooLarge` when it holds more than `maxBytes`.
    init(_ path: String, maxBytes: Int) throws(ImagingError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure(path) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = Self.failure(path)
            close(fd)
            throw error
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw ImagingError(code: .readFailed, message: "Cannot read \(path): not a regular file.")
        }
        let size = Int(info.st_size)
        guard size <= maxBytes else {
            close(fd)
            throw ImagingError(code: .tooLarge, message: "File too large: \(size) bytes; the limit is \(maxBytes) bytes.")
        }
        self.path = path
        descriptor = fd
        self.size = size
    }

    deinit { close(descriptor) }

    /// Reads the whole file (as it is now: a file that shrank is read as it is).
    static func load(_ path: String, maxBytes: Int) throws(ImagingError) -> [UInt8] {
        let file = try FileInput(path, maxBytes: maxBytes)
        return try file.read(upTo: file.size)
    }

    /// Reads the next `count` bytes, fewer at the end of the file.
    func read(upTo count: Int) throws(ImagingError) -> [UInt8] {
        var failed = false
        let fd = descriptor
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = posixRead(fd, buffer.baseAddress! + done, count - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    failed = n < 0
                    break
                }
                done += n
            }
            initialized = done
        }
        guard !failed else { throw Self.failure(path) }
        return bytes
    }

    static func failure(_ path: String) -> ImagingError {
        let reason = String(cString: strerror(errno))
        return ImagingError(code: .readFailed, message: "Cannot read \(path): \(reason).")
    }
}

/// `read(2)`, named apart from `FileInput.read(upTo:)`.
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
