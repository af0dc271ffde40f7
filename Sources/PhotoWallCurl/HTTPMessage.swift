#if canImport(Glibc)
import Glibc
#endif

/// One HTTP request for `EasyHandle.perform`.
package struct HTTPRequest {
    package var method: String
    package var url: String
    package var headers: [(name: String, value: String)] = []
    package var body: RequestBody?

    package init(method: String, url: String, headers: [(name: String, value: String)] = [], body: RequestBody? = nil) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
    }
}

/// A request body: bytes in memory, or a region of an open file streamed with `pread`
/// (never loaded whole).
package enum RequestBody {
    case bytes([UInt8])
    /// `length` bytes of the open file `fd` starting at `offset` (bytes). The descriptor must stay
    /// open for the whole transfer.
    case file(fd: Int32, offset: Int64, length: Int64)

    package var length: Int64 {
        switch self {
        case .bytes(let b): return Int64(b.count)
        case .file(_, _, let length): return length
        }
    }
}

/// Serves a `RequestBody` to libcurl's read callback, remembering the position so curl can
/// rewind it (seek callback).
final class RequestBodyReader {
    let body: RequestBody
    let length: Int64
    private(set) var position: Int64 = 0
    /// errno of a failed read, if any.
    private(set) var failure: Int32?

    init(_ body: RequestBody) {
        self.body = body
        length = body.length
    }

    /// Copies the next bytes into `buffer`. - Returns: the count (0 at the end), or -1 on a read error.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let want = Int(min(Int64(buffer.count), length - position))
        guard want > 0 else { return 0 }
        switch body {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { src in
                buffer.baseAddress!.copyMemory(from: src.baseAddress! + Int(position), byteCount: want)
            }
            position += Int64(want)
            return want
        case .file(let fd, let offset, _):
            while true {
                let n = pread(fd, buffer.baseAddress, want, off_t(offset + position))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { failure = errno; return -1 }
                if n == 0 { failure = EIO; return -1 }  // the file shrank under us
                position += Int64(n)
                return n
            }
        }
    }

    /// Moves to `offset` bytes from the start of the body. - Returns: false when out of range.
    func seek(to offset: Int64) -> Bool {
        guard offset >= 0, offset <= length else { return false }
        position = offset
        return true
    }
}

/// A received HTTP response. Header names keep the case the server sent; lookups ignore case.
package struct HTTPResponse {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status; self.headers = headers; self.body = body
    }

    package func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}
