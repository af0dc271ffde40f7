internal import CMicroHTTPD
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

extension Engine {
    /// Turns a `Response` into an MHD response with `X-Request-Id` (and `Connection: close` while
    /// shutting down). Runs on a worker or an event thread; file bodies are opened here.
    func prepare(_ response: Response, head: RequestHead) -> PreparedResponse {
        let requestID = head.requestID
        let status = response.status
        if !(200...599).contains(status) {
            logger.error("handler returned an invalid status, sending 500", ["status": "\(status)", "request.id": requestID])
            return prepare(render(HTTPError.internalServerError, head), head: head)
        }
        let raw: OpaquePointer
        switch response.body {
        case .empty:
            raw = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        case .bytes(let bytes):
            guard let shared = Engine.responseSharing(bytes) else {
                logger.error("libmicrohttpd could not make a response", ["request.id": requestID])
                return prepare(render(HTTPError.internalServerError, head), head: head)
            }
            raw = shared
        case .file(let path, let offset, let length):
            switch openFileBody(path: path, offset: offset, length: length, requestID: requestID) {
            case .success(let fileResponse):
                raw = fileResponse
            case .failure(let failure):
                return prepare(render(failure.error, head), head: head)
            }
        }
        for (name, value) in response.headers where Engine.isForwardable(name: name, value: value) {
            if MHD_add_response_header(raw, name, value) != .YES {
                logger.warning("response header refused by libmicrohttpd", ["header": name, "request.id": requestID])
            }
        }
        _ = MHD_add_response_header(raw, "X-Request-Id", requestID)
        if closing.load(ordering: .relaxed) {
            _ = MHD_add_response_header(raw, "Connection", "close")
        }
        return PreparedResponse(raw: raw, status: status)
    }

    /// An MHD response whose body is `bytes` itself, not a copy: the array's storage is kept alive by a
    /// `ResponseBytes` box that MHD's free callback releases once it is done with the response (after
    /// the last send, or when the connection ends). A 100-object page is ~78 KB: `MUST_COPY` cost a
    /// malloc, that copy and a free per response. Empty bodies use a static empty buffer.
    /// - Returns: nil when libmicrohttpd cannot allocate the response.
    static func responseSharing(_ bytes: [UInt8]) -> OpaquePointer? {
        guard !bytes.isEmpty else { return MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT) }
        let box = ResponseBytes(bytes)
        // The box's `let` array is never mutated, so its native storage (and this address) stays put
        // until the box is released; Swift arrays are always contiguous on Linux.
        let base = box.bytes.withUnsafeBufferPointer { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
        // Retain rule: this +1 is MHD's, balanced by `releaseResponseBytes` (or below when MHD refuses).
        let retained = Unmanaged.passRetained(box)
        guard let raw = MHD_create_response_from_buffer_with_free_callback_cls(bytes.count, base, releaseResponseBytes,
                                                                              retained.toOpaque()) else {
            retained.release()
            return nil
        }
        return raw
    }

    struct FileBodyError: Error { var error: HTTPError }

    /// Opens `path` and wraps `length` bytes from `offset` in an fd response; MHD closes the fd.
    private func openFileBody(path: String, offset: Int64, length: Int64, requestID: String)
        -> Result<OpaquePointer, FileBodyError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            logger.warning("file response cannot be opened", ["errno": "\(code)", "request.id": requestID])
            return .failure(FileBodyError(error: code == ENOENT ? .notFound : .internalServerError))
        }
        var info = stat()
        let (end, overflow) = offset.addingReportingOverflow(length)
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              offset >= 0, length >= 0, !overflow, end <= Int64(info.st_size) else {
            close(fd)
            logger.error("file response range is outside the file", ["request.id": requestID])
            return .failure(FileBodyError(error: .internalServerError))
        }
        guard let raw = MHD_create_response_from_fd_at_offset64(UInt64(length), fd, UInt64(offset)) else {
            close(fd)
            return .failure(FileBodyError(error: .internalServerError))
        }
        return .success(raw) // the response now owns fd
    }

    /// `error` as the configuration's `errorRenderer` answers it.
    func render(_ error: any Error, _ head: RequestHead) -> Response {
        configuration.errorRenderer(error, head)
    }

    /// Headers the engine passes on. libmicrohttpd writes framing itself (`Content-Length`,
    /// `Transfer-Encoding`); `X-Request-Id` is always the engine's; CR, LF and NUL never go out.
    static func isForwardable(name: String, value: String) -> Bool {
        if HTTPHeaders.sameName(name, "Content-Length") || HTTPHeaders.sameName(name, "Transfer-Encoding")
            || HTTPHeaders.sameName(name, "X-Request-Id") { return false }
        guard !name.isEmpty, contiguousUTF8(name, { $0.allSatisfy(isTokenByte) }) else { return false }
        return contiguousUTF8(value) { !$0.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }
    }

    /// `test` over the string's UTF-8 as one buffer (a native string's storage; a bridged one is copied),
    /// rather than through the generic `UTF8View` iterator, which was a few per cent of a small GET.
    private static func contiguousUTF8(_ text: String, _ test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        if let result = text.utf8.withContiguousStorageIfAvailable(test) { return result }
        var copy = text
        return copy.withUTF8(test)
    }

    private static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    // MARK: - Access log

    func writeAccessLog(_ context: RequestContext, termination: RequestTermination) {
        let logs = configuration.accessLog && logger.level <= .info
        guard logs || configuration.onRequestCompleted != nil else { return }  // nobody reads the entry
        let elapsed = context.started.duration(to: .now)
        let milliseconds = elapsed.inSeconds * 1000
        let entry = AccessLogEntry(method: context.head.method, path: context.head.path, status: context.status,
                                   durationMilliseconds: milliseconds, requestID: context.head.requestID,
                                   remoteAddress: context.head.remoteAddress, termination: termination,
                                   bodyBytes: context.bodyBytes)
        if logs {
            let status = entry.status.map { "\($0)" } ?? "-"
            let ms = Engine.oneDecimal(milliseconds)
            if termination == .completed {
                logger.info("request", ["method": entry.method, "path": entry.path, "status": status, "ms": ms,
                                        "request.id": entry.requestID])
            } else {
                logger.info("request", ["method": entry.method, "path": entry.path, "status": status, "ms": ms,
                                        "request.id": entry.requestID, "end": termination.rawValue])
            }
        }
        configuration.onRequestCompleted?(entry)
    }

    /// `12.3` style, rounded to one decimal.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((max(0, value) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// A response body's bytes while libmicrohttpd sends them (see `Engine.responseSharing`).
final class ResponseBytes: Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// `MHD_ContentReaderFreeCallback` of a shared body: MHD is done with it (a global function: C callback).
func releaseResponseBytes(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<ResponseBytes>.fromOpaque(cls).release()
}
