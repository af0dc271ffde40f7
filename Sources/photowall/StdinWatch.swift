import PhotoWallCore
import PhotoWallHTTP

/// Shuts the server down when standard input reaches end of file, so a supervisor (or a test
/// process) that dies takes the server with it.
enum StdinWatch {
    static func stopOnEOF(_ server: HTTPServer) {
        StandardInput.onEndOfFile { server.shutdown() }
    }
}
