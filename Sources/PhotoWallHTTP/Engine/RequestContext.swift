internal import CMicroHTTPD
import Synchronization

/// A libmicrohttpd response (`struct MHD_Response *`) plus the status to send it with.
///
/// `@unchecked Sendable`: the pointer has exactly one owner at a time. The worker that built it hands
/// it to the event thread by storing it in `RequestContext.handoff` (under that Mutex); whoever takes
/// it out queues or destroys it. Nobody else keeps a copy.
struct PreparedResponse: @unchecked Sendable {
    let raw: OpaquePointer
    let status: Int

    func destroy() { MHD_destroy_response(raw) }
}

/// Who may touch the request's connection; moves only under `RequestContext.handoff`.
enum Handoff {
    /// The event thread owns the request (reading head and body).
    case engine
    /// A handler or a streamed route's `open` runs on a worker; the connection is suspended. Only this
    /// state allows `MHD_resume_connection`, and the connection travels as an integer (notes pitfall 6).
    case suspended(connectionBits: UInt)
    /// The worker stored its response and resumed the connection; the event thread queues it.
    case ready(PreparedResponse)
    /// A streamed route's `open` finished on a worker and resumed the connection; the event thread
    /// starts reading the body into its sink, or answers.
    case opened(Result<OpenedStream, any Error>)
    /// Shutdown stopped waiting for the handler and resumed the connection to close it.
    case abandoned
    /// MHD reported the request complete; the connection pointer may be gone.
    case finished
}

/// Per-request state, from the first access-handler call to the request-completed callback.
///
/// Retain rule: the access handler stores one `passRetained` reference in MHD's per-request slot
/// (`*con_cls`) on its first call; `engineRequestCompleted` takes it back (`takeRetainedValue`).
/// The engine's live-request registry holds a second reference over the same span.
///
/// `@unchecked Sendable`: the `var`s are touched only by MHD callbacks for this request, which MHD runs
/// on one event thread at a time and never while the connection is suspended (completion after
/// `MHD_stop_daemon` runs once the event threads were joined). The worker thread gets copies of what
/// it needs (`Request`, head, sink) and touches only `handoff`, which is a Mutex.
final class RequestContext: @unchecked Sendable {
    enum Phase {
        /// Collecting the body in memory for a `.buffered` route.
        case buffering(maxBodyBytes: Int, handler: @Sendable (Request) throws -> Response, runner: Runner)
        /// A streamed route's `open` runs on a worker (connection suspended).
        case opening(StreamedRoute)
        /// Passing body pieces to the sink a streamed route's `open` returned.
        case streaming(OpenedStream.Body)
        /// Reading and dropping an empty or small body, then answering `Response` (no handler).
        case discarding(Response)
        /// A protocol switch, answered `101` on the call after the (empty) body.
        case upgrading(UpgradeRoute)
        /// A body went over its limit: the sink's abort runs on a worker (the connection suspended), what
        /// else arrives is read and dropped, and the 413 the worker prepared is queued at the body's end.
        case abortingOverLimit
        /// The handler was handed to the worker pool.
        case dispatched
        /// A response was queued.
        case responded
    }

    /// Where a buffered request's handler runs.
    enum Runner {
        /// The worker pool (`.buffered`).
        case worker
        /// The local pool (`.local`).
        case local
        /// The event thread (`.inline`).
        case inline
    }

    let head: RequestHead
    let started: ContinuousClock.Instant
    /// The client sent `Transfer-Encoding: chunked` or a positive `Content-Length`.
    let declaresBody: Bool
    /// The client sent `Expect: 100-continue` and waits for it before sending its body.
    let expectsContinue: Bool

    var phase: Phase = .responded
    var body: [UInt8] = []
    var bodyBytes = 0
    /// `bodyBytes` when the `.discarding` phase began (0 for a refusal before the body).
    var discardingSince = 0
    var sink: (any RequestBodySink)?
    /// The client's side of the connection, given to `sink` (detached when the request completes).
    var peer: PeerConnection?
    var handlerStarted = false
    var sinkAborted = false
    /// A queued `101`'s upgrade handler state, kept until the request completes (see `UpgradeBox`).
    var upgradeBox: UpgradeBox?
    /// The status queued, nil until a response is queued.
    var status: Int?

    let handoff = Mutex(Handoff.engine)

    init(head: RequestHead, chunked: Bool, expectsContinue: Bool) {
        self.head = head
        self.started = .now
        self.declaresBody = chunked || (head.contentLength ?? 0) > 0
        self.expectsContinue = expectsContinue
    }
}
