import PhotoWallCore

// The engine's public contract. The engine knows nothing of Parse: the REST layer registers
// routes on a `Router`, and the engine calls them. Handlers run on the server's worker pool,
// never on a libmicrohttpd event thread, so they may block (SQLite, fsync, outgoing HTTP).

/// HTTP header fields in arrival order; look-ups are case-insensitive (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []
    public init(_ fields: [(String, String)] = []) { self.fields = fields.map { (name: $0.0, value: $0.1) } }
    public subscript(name: String) -> String? {
        fields.first { HTTPHeaders.sameName($0.name, name) }?.value
    }

    /// ASCII case-insensitive comparison of two field names, without allocating.
    static func sameName(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for i in 0..<x.count where x[i] != y[i] {
                    let lower = x[i] | 0x20
                    if lower != y[i] | 0x20 || lower < 97 || lower > 122 { return false }
                }
                return true
            }
        }
    }
    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }
    /// Replaces every field of that name with one.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { HTTPHeaders.sameName($0.name, name) }
        fields.append((name, value))
    }
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// What is known of a request once its headers have arrived (before any body byte).
public struct RequestHead: Sendable {
    /// Upper-case method as sent (`GET`, `POST`, …).
    public var method: String
    /// The path without the query string, percent-decoded by nothing (raw, as sent).
    public var path: String
    /// Query-string arguments in order, percent- and `+`-decoded.
    public var query: [(name: String, value: String)]
    public var headers: HTTPHeaders
    /// `Content-Length` when the client declared one; nil for chunked or no body.
    public var contentLength: Int?
    /// `:name` segments captured by the route pattern, percent-decoded.
    public var pathParameters: [String: String]
    /// Taken from `X-Request-Id` when the client sent a sane one, otherwise generated; echoed in the response.
    public var requestID: String
    /// Peer address as text (`127.0.0.1`), for logs.
    public var remoteAddress: String

    public init(method: String, path: String, query: [(name: String, value: String)] = [], headers: HTTPHeaders = HTTPHeaders(),
                contentLength: Int? = nil, pathParameters: [String: String] = [:], requestID: String = "", remoteAddress: String = "") {
        self.method = method; self.path = path; self.query = query; self.headers = headers
        self.contentLength = contentLength; self.pathParameters = pathParameters
        self.requestID = requestID; self.remoteAddress = remoteAddress
    }

    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
}

/// A request whose body was buffered in memory (bounded by the route's limit).
public struct Request: Sendable {
    public var head: RequestHead
    public var body: [UInt8]
    public init(head: RequestHead, body: [UInt8] = []) { self.head = head; self.body = body }
}

/// A response. Bodies are bytes in memory or a byte range of an open file (sent by the kernel).
public struct Response: Sendable {
    public enum Body: Sendable {
        case empty
        case bytes([UInt8])
        /// `length` bytes from `offset` of the file at `path`; the engine opens, sends and closes it.
        case file(path: String, offset: Int64, length: Int64)
    }
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: Body = .empty) {
        self.status = status; self.headers = headers; self.body = body
    }

    /// `application/json; charset=utf-8` with `Cache-Control: no-store`.
    public static func json(_ value: JSON, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        var h = headers
        h.set("Content-Type", "application/json; charset=utf-8")
        h.set("Cache-Control", "no-store")
        return Response(status: status, headers: h, body: .bytes(value.serialized))
    }

    public static func text(_ text: String, status: Int) -> Response {
        var h = HTTPHeaders()
        h.set("Content-Type", "text/plain; charset=utf-8")
        return Response(status: status, headers: h, body: .bytes(Array(text.utf8)))
    }
}

/// Receives a streamed request body piece by piece, on an engine thread.
///
/// `write` must not block for long (page-cache writes are fine; fsync belongs in the handler).
/// Throwing from `write` aborts the connection. `abort()` is called instead of the handler when the
/// client disconnects, times out or exceeds the route's limit mid-body; the sink decides what to keep
/// (a file sink removes its temp file; a tus sink keeps what arrived).
public protocol RequestBodySink: AnyObject, Sendable {
    func write(_ bytes: UnsafeRawBufferPointer) throws
    func abort()
}

/// How a matched route wants its request handled. Decided from the head, before any body byte.
public enum RoutePlan: Sendable {
    /// Buffer up to `maxBodyBytes` in memory, then call `handler` on a worker thread.
    case buffered(maxBodyBytes: Int, handler: @Sendable (Request) -> Response)
    /// Open a sink (on the engine thread), stream up to `maxBodyBytes` into it, then call `handler` on a worker thread.
    /// If `open` returns a response instead, that response is sent and the body is not read (e.g. 401/404 before upload).
    case streamed(maxBodyBytes: Int,
                  open: @Sendable (RequestHead) -> StreamOpenResult,
                  handler: @Sendable (RequestHead, any RequestBodySink) -> Response)
    /// Answer at once without reading a body.
    case immediate(Response)
    /// Buffer up to `maxBodyBytes`, then call `handler` right on the event thread, skipping the hand-off
    /// to a worker (two thread wake-ups). Only for cheap, bounded work that never waits: in-memory work
    /// and page-cache reads, such as fetching one object by id. Anything that writes, fsyncs, talks to
    /// the network or can take long belongs in `.buffered`.
    case inline(maxBodyBytes: Int, handler: @Sendable (Request) -> Response)
}

public enum StreamOpenResult: Sendable {
    case sink(any RequestBodySink)
    case respond(Response)
}

/// Errors the engine itself answers (`{"error":"…"}`, no Parse code): 404, 405, 413.
public struct HTTPError: Error, Sendable {
    public var status: Int
    public var message: String
    public init(status: Int, message: String) { self.status = status; self.message = message }
    public static let payloadTooLarge = HTTPError(status: 413, message: "request entity too large")
}
