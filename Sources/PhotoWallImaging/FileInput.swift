#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a whole file with POSIX calls (no Foundation), refusing files over a size cap.
enum FileInput {
    static func load(_ path: String, maxBytes: Int) throws(ImagingError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ImagingError(code: .readFailed, message: "Cannot read \(path): not a regular file.")
        }
        let size = Int(info.st_size)
        guard size <= maxBytes else {
            throw ImagingError(code: .tooLarge, message: "File too large: \(size) bytes; the limit is \(maxBytes) bytes.")
        }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var done = 0
            while done < size {
                let n = read(fd, buffer.baseAddress! + done, size - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    failed = n < 0
                    break
                }
                done += n
            }
            initialized = done                      // a file that shrank is read as it is now
        }
        guard !failed else { throw failure(path) }
        return bytes
    }

    private static func failure(_ path: String) -> ImagingError {
        let reason = String(cString: strerror(errno))
        return ImagingError(code: .readFailed, message: "Cannot read \(path): \(reason).")
    }
}
