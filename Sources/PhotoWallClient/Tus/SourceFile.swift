import PhotoWallCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A regular file opened read-only for an upload; closed on deinit. Read with `pread`, so several
/// readers (the checksum pass, libcurl's read callback) don't share a file position.
final class SourceFile {
    let path: String
    let fd: Int32
    /// Size in bytes when opened.
    let size: Int64

    /// - Throws: `ClientError` `.fileError` (errno in `systemError`) when the file can't be opened
    ///   or isn't a regular file.
    init(path: String) throws(ClientError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            throw ClientError(.fileError, "\(path): \(String(cString: strerror(e))).", systemError: e)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw ClientError(.fileError, "\(path): \(String(cString: strerror(e))).", systemError: e)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw ClientError(.fileError, "\(path): not a regular file.", systemError: EINVAL)
        }
        self.fd = fd
        size = Int64(st.st_size)
        // Sequential reads ahead: the whole file is read once, front to back.
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    deinit { close(fd) }

    /// The digest of `length` bytes at `offset`, read in 1 MiB pieces.
    /// - Throws: `.fileError` on a read error or when the file is shorter than expected.
    func digest(_ algorithm: Digest.Algorithm, offset: Int64, length: Int64, buffer: inout [UInt8]) throws(ClientError) -> [UInt8] {
        let d = Digest(algorithm)
        var done: Int64 = 0
        while done < length {
            let want = Int(min(Int64(buffer.count), length - done))
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let e = n < 0 ? errno : EIO
                throw ClientError(.fileError, "\(path): \(n < 0 ? String(cString: strerror(e)) : "file shrank during the upload").",
                                  systemError: e)
            }
            buffer.withUnsafeBytes { d.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            done += Int64(n)
        }
        return d.finalize()
    }
}
