import PhotoWallHTTP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Shuts the server down when standard input reaches end of file, so a supervisor (or a test
/// process) that dies takes the server with it.
enum StdinWatch {
    static func stopOnEOF(_ server: HTTPServer) {
        let thread = Thread {
            var buf = [UInt8](repeating: 0, count: 256)
            while true {
                let n = buf.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n == 0 || (n < 0 && errno != EINTR) { break }
            }
            server.shutdown()
        }
        thread.start()
    }
}
