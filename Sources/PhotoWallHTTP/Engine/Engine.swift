internal import CMicroHTTPD
internal import CMHDShim
#if canImport(Glibc)
import Glibc
#endif
import PhotoWallCore
import Synchronization

/// The request state machine behind `HTTPServer`: libmicrohttpd's callbacks land here.
///
/// One `Engine` per running daemon. `HTTPServer` keeps it retained (as the callbacks' `cls`) from
/// `MHD_start_daemon` until `MHD_stop_daemon` has returned.
final class Engine: Sendable {
    /// The server's routes (set once after start by `HTTPServer.route(_:)` for a starting server).
    let routes: Routes
    let configuration: HTTPServer.Configuration
    let logger: Logger
    let workers: WorkerPool
    /// Runs `.local` handlers: as many threads as cores by default, first in, first out; a request
    /// that waited `localQueueWaitLimit` moves to `workers`.
    let localWorkers: WorkerPool
    /// Set by shutdown: responses then carry `Connection: close`.
    let closing = Atomic<Bool>(false)

    /// Requests between their first access-handler call and their completion.
    private let registry = Mutex([ObjectIdentifier: RequestContext]())
    /// Set when shutdown gives up waiting: no further handler may be dispatched.
    private let stopping = Atomic<Bool>(false)
    /// Workers between handing a result over (`complete`, under the request's lock) and the end of their
    /// `MHD_resume_connection` call (outside it). Shutdown waits for none before `MHD_stop_daemon`.
    private let resumesInFlight = Atomic<Int>(0)

    init(routes: Routes, configuration: HTTPServer.Configuration) {
        self.routes = routes
        self.configuration = configuration
        self.logger = configuration.logger
        self.workers = WorkerPool(threadCount: configuration.workerThreads,
                                  activeLimit: min(configuration.activeWorkerThreads, configuration.workerThreads),
                                  name: "http-worker")
        self.localWorkers = WorkerPool(threadCount: configuration.localWorkerThreads, name: "http-local",
                                       overflow: .init(pool: workers, after: configuration.localQueueWaitLimit))
    }

    /// Recovers the engine from a callback's `cls` (unretained: `HTTPServer` holds the reference).
    static func from(_ cls: UnsafeMutableRawPointer) -> Engine {
        Unmanaged<Engine>.fromOpaque(cls).takeUnretainedValue()
    }

    /// Requests between their first access-handler call and their completion.
    var inFlightCount: Int { registry.withLock { $0.count } }

    // MARK: - Access handler

    /// One call of MHD's access handler (see `engineAccessHandler`).
    func access(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>,
                requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        if let existing = requestSlot.pointee {
            let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()
            return proceed(context, connection: connection, uploadData: uploadData, uploadDataSize: uploadDataSize)
        }
        // First call: the head is complete, no body byte has been read (nor `100 Continue` sent).
        var (head, chunked, expectsContinue) = readHead(connection: connection, url: url, method: method)
        let framingError = Engine.framingError(head.headers)
        let plan = framingError == nil ? routes.current.resolve(&head) : .immediate(Response())
        let context = RequestContext(head: head, chunked: chunked, expectsContinue: expectsContinue)
        registry.withLock { $0[ObjectIdentifier(context)] = context }
        // Retain rule: this +1 lives in MHD's per-request slot until engineRequestCompleted, which MHD
        // calls exactly once for every request whose access handler ran, balances it.
        requestSlot.pointee = Unmanaged.passRetained(context).toOpaque()
        if let framingError {
            // Where the body ends is ambiguous, so nothing after the head can be trusted: answer at once
            // (0.9.75 closes a connection answered from the headers-only first call) and say so.
            logger.notice("ambiguous request framing, closing", ["request.id": head.requestID, "reason": framingError])
            var response = render(HTTPError(status: 400, message: framingError), head)
            response.headers.set("Connection", "close")
            return queueNow(context, response, connection: connection)
        }
        return begin(context, plan: plan, connection: connection)
    }

    private func begin(_ context: RequestContext, plan: RoutePlan, connection: OpaquePointer) -> MHD_Result {
        let head = context.head
        switch plan {
        case .immediate(let response):
            return answerWithoutBody(context, response, connection: connection)
        case .refuse(let error):
            return answerWithoutBody(context, render(error, head), connection: connection)
        case .upgrade(let route):
            guard !context.declaresBody else {
                return answerWithoutBody(context, render(HTTPError(status: 400, message: "An upgrade request has no body."), head),
                                         connection: connection)
            }
            context.phase = .upgrading(route)
            return .YES
        case .buffered(let maxBodyBytes, let handler), .inline(let maxBodyBytes, let handler), .local(let maxBodyBytes, let handler):
            if let length = head.contentLength, length > maxBodyBytes {
                return queueNow(context, render(HTTPError.payloadTooLarge, head), connection: connection)
            }
            context.body.reserveCapacity(min(head.contentLength ?? 0, 1 << 20))
            let runner: RequestContext.Runner
            switch plan {
            case .inline: runner = .inline
            case .local: runner = .local
            default: runner = .worker
            }
            context.phase = .buffering(maxBodyBytes: maxBodyBytes, handler: handler, runner: runner)
            return .YES
        case .stream(let route):
            if let length = head.contentLength, length > route.maxBodyBytes {
                return queueNow(context, render(HTTPError.payloadTooLarge, head), connection: connection)
            }
            if let length = head.contentLength, length <= route.wholeBodiesUpTo, !context.expectsContinue {
                // Small enough to read whole first (often it came in with the head): `open`, the sink and
                // the handler then run as one worker job, as a buffered route's handler.
                context.body.reserveCapacity(length)
                context.phase = .buffering(maxBodyBytes: length, handler: { request in try route.runWhole(request) }, runner: .worker)
                return .YES
            }
            // `open` may look up a session or a record (a network round trip on PostgreSQL): it runs on a
            // worker while the connection is suspended. After the resume MHD calls the access handler
            // again, still before any body byte (and before `100 Continue`), and `opened` takes over.
            return suspendAndRun(context, connection: connection, phase: .opening(route)) {
                let outcome = Result { try route.open(head) }
                if case .success(.stream(let body)) = outcome, let length = head.contentLength, length > body.maxBodyBytes {
                    // Declared over the sink's own limit: aborted here, on the worker, before `opened`
                    // queues the 413 (see `bodyOverLimit` for why first, and why not on the event thread).
                    body.sink.abort()
                    return .opened(.failure(HTTPError.payloadTooLarge))
                }
                return .opened(outcome)
            }
        }
    }

    /// The access-handler call after a streamed route's `open` returned on a worker.
    private func opened(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        enum Next { case wait, go(Result<OpenedStream, any Error>), close }
        let next = context.handoff.withLock { state -> Next in
            switch state {
            case .opened(let outcome):
                state = .engine
                return .go(outcome)
            case .suspended:
                return .wait
            case .engine, .ready, .abandoned, .finished:
                return .close
            }
        }
        let head = context.head
        switch next {
        case .wait:
            return .YES
        case .close:
            return .NO
        case .go(.failure(let error as HTTPError)) where error.status == HTTPError.payloadTooLarge.status:
            return queueNow(context, render(error, head), connection: connection)
        case .go(.failure(let error)):
            return answerWithoutBody(context, render(error, head), connection: connection)
        case .go(.success(.respond(let response))):
            return answerWithoutBody(context, response, connection: connection)
        case .go(.success(.stream(let body))):
            context.sink = body.sink
            let peer = PeerConnection(socket: CMHDShim_connection_fd(connection))
            context.peer = peer
            body.sink.attach(peer)
            context.phase = .streaming(body)
            return .YES
        }
    }

    /// Answers without running a handler. Normally after reading and dropping the body, on the call that
    /// ends it: 0.9.75 closes the connection after a response queued from the headers-only first call
    /// (notes pitfall 8a), and closing with unread body bytes resets the connection, which can lose the
    /// answer (see `Configuration.discardBodyLimitBytes`). Right now (and so closing) only when the
    /// client is about to send a body over that limit, chunked, or held back for `100 Continue`.
    private func answerWithoutBody(_ context: RequestContext, _ response: Response, connection: OpaquePointer) -> MHD_Result {
        let smallBody = (context.head.contentLength ?? Int.max) <= configuration.discardBodyLimitBytes
        if !context.declaresBody || (smallBody && !context.expectsContinue) {
            context.phase = .discarding(response)
            return .YES
        }
        return queueNow(context, response, connection: connection)
    }

    /// Every call after the first: a body piece, the end of the body, or the call after a resume.
    private func proceed(_ context: RequestContext, connection: OpaquePointer, uploadData: UnsafePointer<CChar>?,
                         uploadDataSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        let size = uploadDataSize.pointee
        if size > 0 {
            uploadDataSize.pointee = 0 // consumed (notes pitfall 8b); MHD calls again with the next piece
            guard let uploadData else { return .NO }
            return receive(context, UnsafeRawBufferPointer(start: uploadData, count: size), connection: connection,
                           uploadDataSize: uploadDataSize)
        }
        let head = context.head
        switch context.phase {
        case .discarding(let response):
            return queueNow(context, response, connection: connection)
        case .upgrading(let route):
            return queueUpgrade(context, route, connection: connection)
        case .buffering(_, let handler, let runner):
            let request = Request(head: head, body: context.body)
            context.body = []
            switch runner {
            case .inline:
                context.handlerStarted = true
                return queueNow(context, respond(head) { try handler(request) }, connection: connection)
            case .local:
                return dispatch(context, connection: connection, on: localWorkers) { [self] in respond(head) { try handler(request) } }
            case .worker:
                return dispatch(context, connection: connection) { [self] in respond(head) { try handler(request) } }
            }
        case .opening:
            return opened(context, connection: connection)
        case .streaming(let body):
            return dispatch(context, connection: connection) { [self] in respond(head) { try body.finish(head) } }
        case .dispatched, .abortingOverLimit:
            return queueHandlerResponse(context, connection: connection)
        case .responded:
            return .YES
        }
    }

    private func receive(_ context: RequestContext, _ bytes: UnsafeRawBufferPointer, connection: OpaquePointer,
                         uploadDataSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        context.bodyBytes += bytes.count
        switch context.phase {
        case .buffering(let maxBodyBytes, _, _):
            guard context.bodyBytes <= maxBodyBytes else {
                return bodyOverLimit(context, maxBodyBytes, connection: connection, uploadDataSize: uploadDataSize, piece: bytes.count)
            }
            context.body.append(contentsOf: bytes)
        case .streaming(let body):
            guard context.bodyBytes <= body.maxBodyBytes else {
                return bodyOverLimit(context, body.maxBodyBytes, connection: connection, uploadDataSize: uploadDataSize, piece: bytes.count)
            }
            do {
                try body.sink.write(bytes)
            } catch {
                logger.notice("request body sink failed, closing connection",
                              ["request.id": context.head.requestID, "error": "\(error)"])
                return .NO
            }
        case .discarding, .abortingOverLimit:
            guard context.bodyBytes - context.discardingSince <= configuration.discardBodyLimitBytes else { return .NO }
        case .opening, .upgrading, .dispatched, .responded:
            return .NO // no body before `open` returned, nor after the final call; refuse rather than guess
        }
        return .YES
    }

    /// MHD 0.9.75 cannot queue a response mid-body (notes pitfall 8d). So the sink is aborted and the
    /// rest of the body read and dropped, up to `discardBodyLimitBytes` more, then `413` is sent: a
    /// chunked body (whose size nobody knew up front) gets its answer too. A body longer still closes
    /// the connection.
    ///
    /// A sink's abort may sync and commit what arrived (a tus `PATCH` keeps it, after waiting for the
    /// `PATCH` before it), so it runs on a worker while the connection is suspended, never on the event
    /// thread, where it would stall every connection that thread serves. The sink hears at once that the
    /// request is ending (`disconnected`), so a request asking for its outcome meanwhile waits for the
    /// abort. The 413 is queued only after the abort returned (the call after the resume that ends the
    /// body): a client that reads it may act at once (retry, ask the offset), and must find what the
    /// abort keeps or removes already done.
    ///
    /// The piece that went over is left unconsumed while the connection is suspended (`piece` bytes,
    /// given back through `uploadDataSize`): MHD's body loop then stops for this pass, so no chunk after
    /// it is parsed and no call (a final one included) comes while the connection is suspended. 0.9.75
    /// already ends the loop after each call with data; this keeps it so whatever the loop does. MHD
    /// hands the piece over again after the resume, and it is dropped then, counted against the discard
    /// limit.
    private func bodyOverLimit(_ context: RequestContext, _ maxBodyBytes: Int, connection: OpaquePointer,
                               uploadDataSize: UnsafeMutablePointer<Int>, piece: Int) -> MHD_Result {
        logger.notice("request body over limit, discarding the rest",
                      ["request.id": context.head.requestID, "limit.bytes": "\(maxBodyBytes)"])
        let head = context.head
        let response = render(HTTPError.payloadTooLarge, head)
        context.body = []
        guard let sink = context.sink, !context.sinkAborted else {
            context.discardingSince = context.bodyBytes
            context.phase = .discarding(response)
            return .YES
        }
        context.bodyBytes -= piece
        context.discardingSince = context.bodyBytes
        sink.disconnected()
        let result = suspendAndRun(context, connection: connection, phase: .abortingOverLimit) { [self] in
            sink.abort()
            return .ready(prepare(response, head: head))
        }
        // Refused only while shutting down: the connection closes, and its completion aborts the sink
        // (off the event thread, as for a client that left).
        guard result == .YES else { return result }
        context.sinkAborted = true
        uploadDataSize.pointee = piece
        return .YES
    }

    // MARK: - Worker hand-off

    /// The handler's response, or what it threw as `errorRenderer` renders it.
    private func respond(_ head: RequestHead, _ handler: () throws -> Response) -> Response {
        do { return try handler() } catch { return render(error, head) }
    }

    /// Runs a handler on `pool` (the worker pool unless given; see `suspendAndRun`); its response is
    /// queued when MHD calls the access handler after the resume.
    private func dispatch(_ context: RequestContext, connection: OpaquePointer, on pool: WorkerPool? = nil,
                          _ work: @escaping @Sendable () -> Response) -> MHD_Result {
        let head = context.head
        let result = suspendAndRun(context, connection: connection, phase: .dispatched, on: pool ?? workers) { [self] in
            .ready(prepare(work(), head: head))
        }
        // Read only by this request's MHD callbacks, which cannot run before the resume.
        if result == .YES { context.handlerStarted = true }
        return result
    }

    /// Suspends the connection, enters `phase` and runs `work` on `pool` (the worker pool unless given);
    /// its result comes back through `context.handoff`, and MHD calls the access handler again after the resume.
    private func suspendAndRun(_ context: RequestContext, connection: OpaquePointer, phase: RequestContext.Phase,
                               on pool: WorkerPool? = nil, _ work: @escaping @Sendable () -> Handoff) -> MHD_Result {
        let connectionBits = UInt(bitPattern: connection)
        // `stopping` is read under the context's lock, which shutdown's sweep takes after setting it: the
        // sweep either finds this connection suspended (and resumes it) or this call sees `stopping`.
        let accepted = context.handoff.withLock { state -> Bool in
            guard !stopping.load(ordering: .sequentiallyConsistent) else { return false }
            state = .suspended(connectionBits: connectionBits)
            MHD_suspend_connection(connection)
            return true
        }
        guard accepted else { return .NO }
        context.phase = phase
        (pool ?? workers).submit { [self] in
            complete(context, with: work())
        }
        return .YES
    }

    /// Worker thread: hands the result to the event thread and resumes the connection, unless the
    /// request was abandoned or finished meanwhile (then the result is released here).
    ///
    /// The resume runs after the lock is released: its wake-up runs the event thread, whose first step
    /// (`queueHandlerResponse`) takes this lock, and under the lock it waited for the resume to return.
    /// The connection stays suspended until the resume, so nothing else touches it meanwhile; shutdown,
    /// which no longer finds it `.suspended`, waits for `resumesInFlight` before stopping the daemon.
    private func complete(_ context: RequestContext, with result: Handoff) {
        let connectionBits = context.handoff.withLock { state -> UInt? in
            guard case .suspended(let connectionBits) = state else { return nil }
            state = result
            // Counted while the lock is held: shutdown's sweep, which takes it after setting `stopping`,
            // either finds `.suspended` (and resumes it itself) or sees this count.
            resumesInFlight.add(1, ordering: .sequentiallyConsistent)
            return connectionBits
        }
        if let connectionBits {
            configuration.beforeResumeForTesting?()
            MHD_resume_connection(OpaquePointer(bitPattern: connectionBits))
            resumesInFlight.subtract(1, ordering: .sequentiallyConsistent)
            return
        }
        switch result {
        case .ready(let prepared): prepared.destroy()
        case .opened(.success(.stream(let body))): body.sink.abort()  // already on the worker
        default: break
        }
    }

    private func queueHandlerResponse(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        enum Next { case wait, queue(PreparedResponse), close }
        let next = context.handoff.withLock { state -> Next in
            switch state {
            case .ready(let prepared):
                state = .engine
                return .queue(prepared)
            case .suspended:
                return .wait // not resumed by us: nothing to send yet
            case .engine, .opened, .abandoned, .finished:
                return .close
            }
        }
        switch next {
        case .wait: return .YES
        case .queue(let prepared): return queue(context, prepared, connection: connection)
        case .close: return .NO
        }
    }

    // MARK: - Queueing

    private func queueNow(_ context: RequestContext, _ response: Response, connection: OpaquePointer) -> MHD_Result {
        queue(context, prepare(response, head: context.head), connection: connection)
    }

    private func queue(_ context: RequestContext, _ prepared: PreparedResponse, connection: OpaquePointer) -> MHD_Result {
        let result = MHD_queue_response(connection, UInt32(prepared.status), prepared.raw)
        prepared.destroy() // MHD keeps its own reference while sending
        context.phase = .responded
        if result == .YES {
            context.status = prepared.status
        } else {
            logger.warning("MHD_queue_response failed", ["request.id": context.head.requestID])
        }
        return result
    }

    // MARK: - Completion

    /// MHD's request-completed callback, for every termination code.
    func requestCompleted(_ context: RequestContext, code: MHD_RequestTerminationCode) {
        // Before libmicrohttpd closes the socket, whose number the kernel may then reuse.
        context.peer?.detach()
        let leftover = context.handoff.withLock { state -> Handoff in
            defer { state = .finished }
            return state
        }
        switch leftover {
        case .ready(let prepared): prepared.destroy()
        case .opened(.success(.stream(let body))): abortOffEventThread(body.sink)
        default: break
        }
        if let box = context.upgradeBox, box.claim() { box.route.onAbandoned() }
        if let sink = context.sink, !context.handlerStarted, !context.sinkAborted {
            context.sinkAborted = true
            abortOffEventThread(sink)
        }
        registry.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(context)) }
        writeAccessLog(context, termination: RequestTermination(code))
    }

    /// Runs `sink.abort()` on a worker, for a request whose client is gone (nobody waits for an answer
    /// that the abort must precede): an abort may sync and commit what arrived (a tus `PATCH` keeps it,
    /// after waiting for the `PATCH` before it), and on the event thread that would stall every
    /// connection the thread serves. A body over its limit is aborted before its 413 instead. After
    /// shutdown has stopped the pool (the completions that `MHD_stop_daemon` reports run on the thread
    /// stopping it), it runs on the calling thread. The sink is told first, here (`disconnected`), so
    /// that the request is seen ending while its abort waits for a worker.
    private func abortOffEventThread(_ sink: any RequestBodySink) {
        sink.disconnected()
        guard workers.trySubmit({ sink.abort() }) else {
            sink.abort()
            return
        }
    }

    // MARK: - Shutdown

    /// Stops dispatching handlers and resumes every suspended connection so `MHD_stop_daemon` can close
    /// it (0.9.75 panics when stopped with connections still suspended), then waits for the resumes
    /// workers are making (`complete`). Handlers still running finish on their worker; their responses
    /// are dropped.
    /// - Returns: how many running handlers were abandoned.
    func abandonRunningHandlers() -> Int {
        stopping.store(true, ordering: .sequentiallyConsistent)
        let live = registry.withLock { Array($0.values) }
        var abandoned = 0
        for context in live {
            context.handoff.withLock { state in
                if case .suspended(let connectionBits) = state {
                    state = .abandoned
                    MHD_resume_connection(OpaquePointer(bitPattern: connectionBits))
                    abandoned += 1
                }
            }
        }
        // Resumes that workers began before the sweep (their requests were no longer `.suspended`) end
        // before the daemon stops: resuming a connection of a stopped daemon would touch freed memory.
        while resumesInFlight.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
        return abandoned
    }

    /// A libmicrohttpd error-log line.
    func logLibraryMessage(_ message: String) {
        logger.notice("libmicrohttpd: \(message)")
    }
}

extension RequestTermination {
    init(_ code: MHD_RequestTerminationCode) {
        switch code {
        case .REQUEST_TERMINATED_COMPLETED_OK: self = .completed
        case .REQUEST_TERMINATED_WITH_ERROR: self = .error
        case .REQUEST_TERMINATED_TIMEOUT_REACHED: self = .timeout
        case .REQUEST_TERMINATED_DAEMON_SHUTDOWN: self = .shutdown
        case .REQUEST_TERMINATED_READ_ERROR: self = .readError
        case .REQUEST_TERMINATED_CLIENT_ABORT: self = .clientAbort
        }
    }
}
