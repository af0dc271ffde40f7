import PhotoWallCore
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
        do { try AtomicFile.write(bytes, to: path, mode: 0o644) } catch {
            throw FixtureError("cannot write \(path): \(error)")
        }
    }
}
