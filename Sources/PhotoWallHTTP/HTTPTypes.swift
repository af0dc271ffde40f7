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
        // Most names a lookup passes differ in length (`utf8.count` is O(1) for native strings).
        guard a.utf8.count == b.utf8.count else { return false }
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
    /// The pattern of the route that matched, as registered (`/parse/uploads/:id`); "" when none did.
    public var routePattern: String = ""
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
        json(text: value.serialized, status: status, headers: headers)
    }

    /// `json(_:)` for JSON text already rendered (UTF-8), sent as it is.
    public static func json(text: [UInt8], status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        var h = headers
        h.set("Content-Type", "application/json; charset=utf-8")
        h.set("Cache-Control", "no-store")
        return Response(status: status, headers: h, body: .bytes(text))
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
/// (a file sink removes its temp file; a tus sink keeps what arrived). `abort()` runs on a worker
/// thread, after the last `write` has returned, so it may block (sync, commit); for a body over its
/// limit the connection is suspended meanwhile, and the 413 is sent only after `abort()` returned.
/// (While the server shuts down, with its workers stopped, it runs on the thread stopping it.)
public protocol RequestBodySink: AnyObject, Sendable {
    func write(_ bytes: UnsafeRawBufferPointer) throws
    func abort()
    /// The request is ending without its handler (the client disconnected mid-body, or the body went
    /// over its limit): called on the engine thread the moment the engine learns it, before `abort()`
    /// is queued for a worker (where it may wait its turn behind other requests). It
    /// must be quick and never wait: it only lets others see at once that the request is ending, so
    /// that one asking for its outcome waits for `abort()` rather than read the state from before it.
    /// The default does nothing.
    func disconnected()
    /// The client's side of the connection (`PeerConnection`), given on the engine thread before the
    /// first `write`, for those that must know at once that the client hung up, before the engine has
    /// read that from the socket (and so before `disconnected`). The default does nothing.
    func attach(_ peer: PeerConnection)
}

extension RequestBodySink {
    public func disconnected() {}
    public func attach(_ peer: PeerConnection) {}
}

/// How a matched route wants its request handled. Decided from the head, before any body byte.
///
/// Handlers throw; the engine turns what they throw into the response with
/// `HTTPServer.Configuration.errorRenderer` (the one place error bodies are written).
public enum RoutePlan: Sendable {
    /// Buffer up to `maxBodyBytes` in memory, then call `handler` on a worker thread.
    case buffered(maxBodyBytes: Int, handler: @Sendable (Request) throws -> Response)
    /// A streamed body; build it with `streamed(maxBodyBytes:wholeBodiesUpTo:open:handler:)`.
    case stream(StreamedRoute)
    /// Answer at once without reading a body.
    case immediate(Response)
    /// Buffer up to `maxBodyBytes`, then call `handler` right on the event thread, skipping the hand-off
    /// to a worker (two thread wake-ups). Only for cheap, bounded work that never waits: in-memory work
    /// and page-cache reads, such as fetching one object by id from SQLite. Anything that writes, fsyncs,
    /// talks to the network (a PostgreSQL query included) or can take long belongs in `.buffered`.
    case inline(maxBodyBytes: Int, handler: @Sendable (Request) throws -> Response)
    /// Buffer up to `maxBodyBytes`, then call `handler` on the local pool: `localWorkerThreads` threads
    /// (one per core by default) taking requests first in, first out. For work that only waits on the
    /// CPU and local pages but can take longer than `.inline` allows, such as a query on SQLite. Under
    /// load each request waits its turn and then runs at full speed, instead of dozens sharing the cores
    /// at once (each then as slow as all of them, and the slowest far slower: the tail). A request still
    /// queued after `localQueueWaitLimit` runs on the worker pool instead, so handlers that run long
    /// can't stall the ones behind them. Like `.inline`, nothing that writes, fsyncs or talks to the
    /// network: that blocks a thread the cores could use.
    case local(maxBodyBytes: Int, handler: @Sendable (Request) throws -> Response)
    /// Refuse from the head without reading a body; `error` is rendered by the configuration's `errorRenderer`.
    case refuse(any Error)
    /// Switch protocols (RFC 9110 §15.2.2, e.g. to WebSocket): answer `101 Switching Protocols` with the
    /// route's headers (libmicrohttpd adds `Connection: Upgrade`), then hand the raw socket to the
    /// route (see `UpgradeRoute`). A request with a body is refused with 400.
    case upgrade(UpgradeRoute)

    /// A streamed body: `open` runs on a worker thread (the connection is suspended meanwhile, so it may
    /// look up sessions or records), and returns the typed per-request `State` that receives the body
    /// (up to `maxBodyBytes`, or the tighter limit `open` gives) on the event thread; then `handler`
    /// gets that same `State` on a worker thread.
    ///
    /// `open` may answer instead (`.respond`, or by throwing: rendered by `errorRenderer`); the body is
    /// then not read. Throwing `HTTPError.payloadTooLarge` answers 413 at once, exactly like a declared
    /// `Content-Length` over `maxBodyBytes`.
    ///
    /// `wholeBodiesUpTo`: a body whose `Content-Length` is at most this many bytes (and that the client
    /// does not hold back for `100 Continue`) is read into memory first, then `open`, the sink's one
    /// `write` and `handler` run in turn as one job on a worker thread: one hand-off to a worker and back
    /// instead of two (`open`'s, then `handler`'s, with the body read on the event thread between). For
    /// routes whose `open` may as well see the request after its body, such as a small file upload;
    /// 0 (the default) streams every body.
    public static func streamed<State: RequestBodySink>(
        maxBodyBytes: Int,
        wholeBodiesUpTo: Int = 0,
        open: @escaping @Sendable (RequestHead) throws -> StreamOpenResult<State>,
        handler: @escaping @Sendable (RequestHead, State) throws -> Response
    ) -> RoutePlan {
        .stream(StreamedRoute(maxBodyBytes: maxBodyBytes, wholeBodiesUpTo: min(wholeBodiesUpTo, maxBodyBytes)) { head in
            switch try open(head) {
            case .respond(let response):
                return .respond(response)
            case .sink(let state, let limit):
                return .stream(OpenedStream.Body(sink: state, maxBodyBytes: limit ?? maxBodyBytes) { head in
                    try handler(head, state)
                })
            }
        })
    }
}

/// What a streamed route's `open` decided.
public enum StreamOpenResult<State: RequestBodySink>: Sendable {
    /// Read the body into `State`, up to `maxBodyBytes` (nil: the route's limit).
    case sink(State, maxBodyBytes: Int? = nil)
    /// Answer with this response; the body is not read.
    case respond(Response)
}

/// A streamed route with its per-request state type erased into closures (no downcast anywhere):
/// built by `RoutePlan.streamed(maxBodyBytes:wholeBodiesUpTo:open:handler:)`.
public struct StreamedRoute: Sendable {
    let maxBodyBytes: Int
    /// Bodies declared this small are read whole before `open` (see `RoutePlan.streamed`).
    let wholeBodiesUpTo: Int
    let open: @Sendable (RequestHead) throws -> OpenedStream

    /// For a body read whole before `open` ran: `open`, the body into the sink it returns, then the
    /// handler (or `open`'s own answer).
    /// - Throws: what `open`, the sink or the handler throw; `HTTPError.payloadTooLarge` for a body over
    ///   the limit `open` gave (the sink is aborted when it does not get the body).
    func runWhole(_ request: Request) throws -> Response {
        switch try open(request.head) {
        case .respond(let response):
            return response
        case .stream(let body):
            guard request.body.count <= body.maxBodyBytes else {
                body.sink.abort()
                throw HTTPError.payloadTooLarge
            }
            do {
                if !request.body.isEmpty { try request.body.withUnsafeBytes { try body.sink.write($0) } }
            } catch {
                body.sink.abort()
                throw error
            }
            return try body.finish(request.head)
        }
    }
}

/// The outcome of a streamed route's `open`, as the engine sees it.
enum OpenedStream: Sendable {
    struct Body: Sendable {
        let sink: any RequestBodySink
        let maxBodyBytes: Int
        /// The route's handler with its typed state bound.
        let finish: @Sendable (RequestHead) throws -> Response
    }
    case respond(Response)
    case stream(Body)
}

/// Errors the engine itself answers, and the default rendering of any error: `{"error":"…"}`, no
/// Parse code. The engine's refusals: 400 (ambiguous framing), 404 (no route), 413 (body too large),
/// 500 (a handler returned an invalid status, a file body cannot be opened).
public struct HTTPError: Error, Sendable {
    public var status: Int
    public var message: String
    public init(status: Int, message: String) { self.status = status; self.message = message }
    public static let payloadTooLarge = HTTPError(status: 413, message: "request entity too large")
    public static let notFound = HTTPError(status: 404, message: "not found")
    public static let internalServerError = HTTPError(status: 500, message: "internal server error")

    /// `{"error": message}` with `status` (JSON, `Cache-Control: no-store`).
    public var response: Response { .json(["error": .string(message)], status: status) }
}
