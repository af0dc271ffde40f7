#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and writes with POSIX calls (no Foundation).
enum FileIO {
    /// - Throws: `FixtureError` naming the path and `strerror` text.
    static func read(_ path: String) throws(FixtureError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FixtureError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return out }
            if n < 0 {
                if errno == EINTR { continue }
                throw FixtureError("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            out += buffer[..<n]
        }
    }

    /// Writes `bytes` to `path` through a temporary file and `rename(2)`, so readers never see half a file.
    static func write(_ bytes: [UInt8], to path: String) throws(FixtureError) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FixtureError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                let message = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw FixtureError("cannot write \(temporary): \(message)")
            }
            offset += n
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw FixtureError("cannot rename \(temporary) to \(path): \(message)")
        }
    }
}
