import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Standard input as a lifeline (`--stop-on-stdin-eof` of `photowall serve` and `photowall mock-facebook`).
public enum StandardInput {
    /// Calls `action` once, on a thread of its own, when standard input reaches end of file or
    /// fails (anything but `EINTR`); what is read is discarded. A supervisor or test process that
    /// holds the other end of the pipe and dies thereby takes the server down with it.
    public static func onEndOfFile(_ action: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n == 0 || (n < 0 && errno != EINTR) { break }
            }
            action()
        }
    }
}
