internal import CMicroHTTPD
internal import CMHDShim
import PhotoWallCore
import Synchronization

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

    /// Why the body's length in `headers` is ambiguous, or nil when it is not (RFC 9112 §6.3): several
    /// `Content-Length` values that differ (`5, 5` counts as one), one that is not a decimal number,
    /// `Transfer-Encoding` together with `Content-Length` (request smuggling behind a proxy), or a
    /// `Transfer-Encoding` whose last coding is not `chunked`. The engine answers 400 and closes.
    static func framingError(_ headers: HTTPHeaders) -> String? {
        var lengths = Set<Substring>()
        var transferEncodings: [String] = []
        for (name, value) in headers {
            if HTTPHeaders.sameName(name, "Content-Length") {
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let digits = item.trimmingWhitespace()
                    guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                        return "invalid Content-Length"
                    }
                    lengths.insert(digits.drop { $0 == "0" })
                }
            } else if HTTPHeaders.sameName(name, "Transfer-Encoding") {
                transferEncodings.append(value)
            }
        }
        if lengths.count > 1 { return "conflicting Content-Length values" }
        guard !transferEncodings.isEmpty else { return nil }
        if !lengths.isEmpty { return "Transfer-Encoding together with Content-Length" }
        let last = transferEncodings.joined(separator: ",").split(separator: ",").last?.trimmingWhitespace().lowercased()
        return last == "chunked" ? nil : "Transfer-Encoding must end with chunked"
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

    /// 16 lowercase hex digits, distinct for every request of the process: SplitMix64 (a bijection of
    /// its seed's step) over a per-process random key plus a request counter. A request id only tells
    /// log lines apart, so it needs no CSPRNG read per request (that was a `getrandom(2)` each).
    static func generate() -> String {
        let n = counter.add(1, ordering: .relaxed).oldValue
        var mixer = SplitMix64(seed: key &+ n &* 0x9E37_79B9_7F4A_7C15)
        let word = mixer.next()
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 16) { out in
            for i in 0..<16 { out[i] = digits.utf8Start[Int((word >> UInt64(60 - 4 * i)) & 15)] }
            return 16
        }
    }

    /// Requests numbered so far.
    private static let counter = Atomic<UInt64>(0)
    /// Drawn once per process, so ids differ between runs and restarts.
    private static let key = UInt64.random(in: .min ... .max)
}
