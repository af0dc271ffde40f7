internal import CMicroHTTPD
internal import CMHDShim
import PhotoWallCore

extension Engine {
    /// Builds the `RequestHead` of the request on `connection` (before routing).
    /// - Returns: the head, whether the body is chunked, and whether the client waits for `100 Continue`.
    func readHead(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?)
        -> (head: RequestHead, chunked: Bool, expectsContinue: Bool) {
        let headers = HTTPHeaders(Engine.values(of: .HEADER_KIND, on: connection))
        // The daemon runs with an identity unescaper, so the path is raw and arguments still carry %XX.
        let query = Engine.values(of: .GET_ARGUMENT_KIND, on: connection).map {
            (name: percentDecode($0.0, plusAsSpace: true), value: percentDecode($0.1, plusAsSpace: true))
        }
        let chunked = headers["Transfer-Encoding"]?.lowercased().contains("chunked") ?? false
        let contentLength = chunked ? nil : headers["Content-Length"].flatMap { Int($0) }
        let expectsContinue = headers["Expect"]?.lowercased() == "100-continue"
        var address = [CChar](repeating: 0, count: 64)
        _ = CMHDShim_connection_client_address(connection, &address, address.count)
        let head = RequestHead(
            method: method.map { String(cString: $0) } ?? "",
            path: url.map { String(cString: $0) } ?? "/",
            query: query,
            headers: headers,
            contentLength: contentLength,
            requestID: RequestID.sanitized(headers["X-Request-Id"]) ?? RequestID.generate(),
            remoteAddress: address.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        return (head, chunked, expectsContinue)
    }

    /// Headers or query arguments in arrival order.
    static func values(of kind: MHD_ValueKind, on connection: OpaquePointer) -> [(String, String)] {
        let collector = KeyValueCollector()
        // Unretained: `collector` outlives the synchronous MHD_get_connection_values call.
        withExtendedLifetime(collector) {
            _ = MHD_get_connection_values(connection, kind, collectKeyValue,
                                          Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector.pairs
    }
}

/// Request ids: echoed from the client when sane, otherwise generated.
enum RequestID {
    /// At most this many characters of `[A-Za-z0-9._-]` are accepted from `X-Request-Id`.
    static let maxLength = 128

    /// `value` when it is 1–128 characters of `[A-Za-z0-9._-]`, else nil.
    static func sanitized(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= maxLength else { return nil }
        let ok = value.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x2D || c == 0x5F || c == 0x2E
        }
        return ok ? value : nil
    }

    /// 16 lowercase hex digits from the system CSPRNG.
    static func generate() -> String { ParseIdentifier.hex(byteCount: 8) }
}
