internal import CMicroHTTPD
internal import CMHDShim
internal import Dispatch
import PhotoWallCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on libmicrohttpd that answers requests through a `Router`.
///
/// Event threads (poll(2); see CMHDShim for why not epoll) parse requests and move bytes; route handlers run on a separate pool of
/// `workerThreads` OS threads, so they may block (at most `activeWorkerThreads` of them run at once
/// outside the waits marked `WorkerPool.blocking`). Request bodies are limited per route and streamed
/// or buffered as the route's `RoutePlan` says; every response carries `X-Request-Id`.
///
/// ```swift
/// var router = Router()
/// router.add("GET", "/health") { _ in .immediate(.json(["status": "ok"])) }
/// let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 1337), router: router)
/// let port = try server.start()
/// server.runUntilSignal()          // until SIGINT/SIGTERM, then a graceful shutdown
/// ```
///
/// Lifecycle: initial → running → shuttingDown → stopped. A server starts at most once.
public final class HTTPServer: Sendable {
    public let configuration: Configuration
    /// The routes: given at init, or set once by `route(_:)` after `start()`.
    let routes: Routes

    private enum Lifecycle {
        case initial
        case running(Running)
        case shuttingDown(port: Int)
        case stopped(port: Int)
    }

    /// What exists while the daemon runs.
    ///
    /// `@unchecked Sendable`: `daemon` (a `CMHDShim_Daemon *`) is used only by `start()` (under
    /// `lifecycle`) and by the one caller that moves the lifecycle from `.running` to `.shuttingDown`.
    private struct Running: @unchecked Sendable {
        let daemon: OpaquePointer
        let engine: Engine
        /// The +1 handed to MHD as the callbacks' `cls`; released after `CMHDShim_stop_daemon`.
        let engineReference: Unmanaged<Engine>
        let port: Int
    }

    private let lifecycle = Mutex(Lifecycle.initial)
    /// Run by `shutdown` once new connections are refused, before libmicrohttpd stops (see `beforeStop`).
    private let stopHooks = Mutex<[@Sendable () -> Void]>([])
    /// Entered by `start()`, left once stopped; `runUntilSignal()` waits on it.
    private let stoppedGroup = DispatchGroup()

    /// - Parameters:
    ///   - configuration: fixed for the server's life.
    ///   - router: routes to answer; immutable once handed over.
    public init(configuration: Configuration = Configuration(), router: Router) {
        self.configuration = configuration
        self.routes = Routes(fixed: router)
    }

    /// A server whose routes are given after `start()`, for routes that need the bound port (a public
    /// URL with port 0): until `route(_:)`, every request is answered `whileStarting` (e.g. 503 with
    /// `Retry-After`), without reading its body.
    public init(configuration: Configuration = Configuration(), whileStarting: Response) {
        self.configuration = configuration
        self.routes = Routes(whileStarting: Router(fallback: { _ in .immediate(whileStarting) }))
    }

    /// Sets the routes of a server made with `init(configuration:whileStarting:)`, once; requests from
    /// then on are routed by `router`. Calling it twice, or on a server given its router at init, is a
    /// programming error (trap).
    public func route(_ router: Router) {
        routes.set(router)
    }

    deinit {
        shutdown(gracePeriodSeconds: 0)
    }

    /// The bound TCP port: 0 before `start()`, then the real port (also after shutdown).
    public var port: Int {
        lifecycle.withLock { state in
            switch state {
            case .initial: return 0
            case .running(let running): return running.port
            case .shuttingDown(let port), .stopped(let port): return port
            }
        }
    }

    /// Connections closed so far because their request head missed `requestHeadTimeoutSeconds`
    /// (0 when not running).
    public var requestHeadTimeouts: Int {
        lifecycle.withLock { state in
            guard case .running(let running) = state else { return 0 }
            return Int(CMHDShim_daemon_head_timeouts(running.daemon))
        }
    }

    /// Binds, starts the event and worker threads, and returns at once.
    ///
    /// - Returns: the bound port (the kernel's choice when `configuration.port` is 0).
    /// - Throws: `HTTPServerError` `.alreadyStarted` when called twice, `.invalidConfiguration` for
    ///   out-of-range settings, `.startFailed` (with `systemError`, e.g. `EADDRINUSE`) when
    ///   libmicrohttpd cannot start.
    @discardableResult
    public func start() throws -> Int {
        try lifecycle.withLock { state throws(HTTPServerError) -> Int in
            guard case .initial = state else {
                throw HTTPServerError(code: .alreadyStarted, message: "HTTP server was already started")
            }
            let running = try launch()
            stoppedGroup.enter()
            state = .running(running)
            configuration.logger.notice("HTTP server listening",
                                        ["host": configuration.host, "port": "\(running.port)"])
            return running.port
        }
    }

    private func launch() throws(HTTPServerError) -> Running {
        let c = configuration
        func invalid(_ message: String) -> HTTPServerError { HTTPServerError(code: .invalidConfiguration, message: message) }
        guard (0...65535).contains(c.port) else { throw invalid("port must be 0–65535, got \(c.port)") }
        guard (1...1024).contains(c.eventThreads) else { throw invalid("eventThreads must be 1–1024") }
        guard (1...4096).contains(c.workerThreads) else { throw invalid("workerThreads must be 1–4096") }
        guard c.activeWorkerThreads >= 1 else { throw invalid("activeWorkerThreads must be at least 1") }
        guard (1...4096).contains(c.localWorkerThreads) else { throw invalid("localWorkerThreads must be 1–4096") }
        guard c.localQueueWaitLimit >= .zero else { throw invalid("localQueueWaitLimit must not be negative") }
        guard c.connectionMemoryLimitBytes >= 4096 else { throw invalid("connectionMemoryLimitBytes must be at least 4096") }
        guard c.connectionLimit >= 1, c.connectionLimit <= Int(UInt32.max), c.perIPConnectionLimit >= 0,
              c.perIPConnectionLimit <= Int(UInt32.max), c.idleTimeoutSeconds >= 0,
              c.idleTimeoutSeconds <= Int(UInt32.max), c.listenBacklog >= 0, c.listenBacklog <= Int(UInt32.max)
        else { throw invalid("connection limits, timeout and backlog must be non-negative 32-bit values") }
        guard c.requestHeadTimeoutSeconds >= 0, c.requestHeadTimeoutSeconds * 1000 <= Double(UInt32.max)
        else { throw invalid("requestHeadTimeoutSeconds must be 0–4294967") }

        let engine = Engine(routes: routes, configuration: c)
        // Retain rule: MHD's callbacks get this +1 as `cls`; it is released after MHD_stop_daemon.
        let reference = Unmanaged.passRetained(engine)
        var errorNumber: Int32 = 0
        let daemon: OpaquePointer? = c.host.withCString { host in
            var shim = CMHDShim_Config()
            shim.bind_address = host
            shim.port = UInt16(c.port)
            shim.thread_pool_size = UInt32(c.eventThreads)
            shim.connection_memory_limit = c.connectionMemoryLimitBytes
            shim.connection_limit = UInt32(c.connectionLimit)
            shim.per_ip_connection_limit = UInt32(c.perIPConnectionLimit)
            shim.connection_timeout_seconds = UInt32(c.idleTimeoutSeconds)
            shim.listen_backlog = UInt32(c.listenBacklog)
            // A positive deadline under 1 ms still gets one.
            shim.head_timeout_ms = c.requestHeadTimeoutSeconds > 0 ? max(1, UInt32(c.requestHeadTimeoutSeconds * 1000)) : 0
            shim.raw_url = 1
            shim.access_handler = engineAccessHandler
            shim.access_handler_cls = reference.toOpaque()
            shim.completed_callback = engineRequestCompleted
            shim.completed_callback_cls = reference.toOpaque()
            shim.log_function = engineLog
            shim.log_cls = reference.toOpaque()
            return CMHDShim_start_daemon(&shim, &errorNumber)
        }
        guard let daemon else {
            engine.localWorkers.stop()  // first: its watchdog hands late jobs to the worker pool
            engine.workers.stop()
            reference.release()
            if errorNumber == EINVAL {
                throw invalid("host must be an IPv4 address, got \"\(c.host)\"")
            }
            throw HTTPServerError(code: .startFailed,
                                  message: "cannot start HTTP server on \(c.host):\(c.port)", systemError: errorNumber)
        }
        let port = Int(CMHDShim_daemon_bind_port(daemon))
        return Running(daemon: daemon, engine: engine, engineReference: reference, port: port)
    }

    /// Stops gracefully: stops accepting (new connections are refused at once), lets requests in
    /// progress finish for up to `gracePeriodSeconds`, then closes every connection and stops.
    ///
    /// Responses sent meanwhile carry `Connection: close`. Handlers still running after the grace
    /// period finish on their worker thread, but their responses are dropped and their connections
    /// closed. Blocks until stopped; safe to call more than once and from several threads (later calls
    /// wait for the first one). Before `start()` it just marks the server stopped.
    ///
    /// - Parameter gracePeriodSeconds: ≥ 0; how long to wait for requests in progress.
    public func shutdown(gracePeriodSeconds: Double = 10) {
        enum Step { case nothing, waitForOther, stop(Running) }
        let step = lifecycle.withLock { state -> Step in
            switch state {
            case .initial:
                state = .stopped(port: 0)
                return .nothing
            case .running(let running):
                state = .shuttingDown(port: running.port)
                return .stop(running)
            case .shuttingDown:
                return .waitForOther
            case .stopped:
                return .nothing
            }
        }
        switch step {
        case .nothing:
            return
        case .waitForOther:
            stoppedGroup.wait()
        case .stop(let running):
            stop(running, gracePeriodSeconds: gracePeriodSeconds)
            lifecycle.withLock { $0 = .stopped(port: running.port) }
            stoppedGroup.leave()
        }
    }

    /// Registers `hook` to run during `shutdown`, after new connections are refused and before
    /// libmicrohttpd stops: where owners of upgraded connections (WebSocket) close them, since
    /// libmicrohttpd must not stop with upgraded connections open. The hook may block briefly.
    public func beforeStop(_ hook: @escaping @Sendable () -> Void) {
        stopHooks.withLock { $0.append(hook) }
    }

    private func stop(_ running: Running, gracePeriodSeconds: Double) {
        let logger = configuration.logger
        let engine = running.engine
        engine.closing.store(true, ordering: .relaxed)
        // Refuse new connections at once: the shim's accept thread stops and its listening socket closes.
        // (Not MHD_quiesce_daemon: with epoll and internal threads it races MHD's event loop and can
        // abort the process; see CMHDShim.h.)
        CMHDShim_stop_accepting(running.daemon)
        for hook in stopHooks.withLock({ $0 }) { hook() }
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, gracePeriodSeconds) * 1000))
        while engine.inFlightCount > 0 && ContinuousClock.now < deadline {
            usleep(5_000)
        }
        let unfinished = engine.inFlightCount
        let abandoned = engine.abandonRunningHandlers()
        if unfinished > 0 {
            logger.warning("grace period over, closing requests in progress",
                           ["requests": "\(unfinished)", "handlers.abandoned": "\(abandoned)"])
        }
        CMHDShim_stop_daemon(running.daemon)
        engine.localWorkers.stop()  // first: its watchdog hands late jobs to the worker pool
        engine.workers.stop()
        running.engineReference.release()
        logger.notice("HTTP server stopped", ["port": "\(running.port)"])
    }

    /// Blocks until the server has stopped, shutting it down gracefully on SIGINT or SIGTERM
    /// (grace period: `configuration.shutdownGracePeriodSeconds`).
    ///
    /// Call after `start()`, from the main thread of a CLI. While it runs, the two signals' action is
    /// a handler that writes the signal's number to a pipe this thread waits on: whichever thread the
    /// kernel picks (a process-directed signal goes to any thread that doesn't block it, and threads
    /// started by Foundation block nothing) wakes it. The previous actions are restored when it returns.
    /// Also returns when another thread calls `shutdown`. Returns at once if never started.
    public func runUntilSignal() {
        runUntilSignal(onSignalHandlersInstalled: nil)
    }

    /// `runUntilSignal()` with a hook called once the signal handlers are installed (for tests).
    func runUntilSignal(onSignalHandlersInstalled ready: (@Sendable () -> Void)?) {
        let grace = configuration.shutdownGracePeriodSeconds
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            configuration.logger.error("cannot create the signal pipe; waiting without signals", ["errno": "\(errno)"])
            stoppedGroup.wait()
            return
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)  // the handler never blocks on a full pipe
        }
        shutdownSignalPipe.store(fds[1], ordering: .sequentiallyConsistent)
        var previous: [(Int32, sigaction)] = []
        for signalNumber in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = shutdownSignalHandler
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            var old = sigaction()
            sigaction(signalNumber, &action, &old)
            previous.append((signalNumber, old))
        }
        // This thread takes them too, even when it inherited a mask that blocks them (a parent that
        // spawned us from a thread blocking signals): a process-directed signal then always has a taker.
        var shutdownSignals = sigset_t(), previousMask = sigset_t()
        sigemptyset(&shutdownSignals)
        sigaddset(&shutdownSignals, SIGINT)
        sigaddset(&shutdownSignals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &shutdownSignals, &previousMask)
        ready?()
        while stoppedGroup.wait(timeout: .now()) == .timedOut {
            var p = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }  // timeout or EINTR: look at the group again
            var byte: UInt8 = 0
            guard read(fds[0], &byte, 1) == 1 else { continue }
            configuration.logger.notice("signal received, shutting down", ["signal": "\(byte)", "grace.seconds": "\(grace)"])
            shutdown(gracePeriodSeconds: grace)  // returns once stopped (a second signal meanwhile only fills the pipe)
        }
        for (signalNumber, old) in previous {
            var old = old
            sigaction(signalNumber, &old, nil)
        }
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        shutdownSignalPipe.store(-1, ordering: .sequentiallyConsistent)
        close(fds[0]); close(fds[1])
    }
}

/// The write end of `runUntilSignal`'s pipe, or -1; read by the signal handler (a lock-free load).
private let shutdownSignalPipe = Atomic<Int32>(-1)

/// SIGINT/SIGTERM while `runUntilSignal` runs: one byte (the signal's number) into its pipe. Only
/// async-signal-safe work: an atomic load and `write`; `errno` is kept for the interrupted code.
private func shutdownSignalHandler(_ signalNumber: Int32) {
    let savedErrno = errno
    let fd = shutdownSignalPipe.load(ordering: .sequentiallyConsistent)
    if fd >= 0 {
        var byte = UInt8(truncatingIfNeeded: signalNumber)
        _ = write(fd, &byte, 1)
    }
    errno = savedErrno
}

/// A server's routes: fixed at init, or a "starting" router until `set` is called once. Read on every
/// request with one atomic load (no lock).
final class Routes: Sendable {
    final class Box: Sendable {
        let router: Router
        init(_ router: Router) { self.router = router }
    }

    private let initial: Box
    private let later = AtomicLazyReference<Box>()
    private let acceptsLater: Bool

    init(fixed router: Router) { initial = Box(router); acceptsLater = false }
    init(whileStarting router: Router) { initial = Box(router); acceptsLater = true }

    /// The router requests are routed by now.
    var current: Router { (later.load() ?? initial).router }

    func set(_ router: Router) {
        precondition(acceptsLater, "HTTPServer.route(_:) is for a server made with init(configuration:whileStarting:)")
        let box = Box(router)
        precondition(later.storeIfNil(box) === box, "HTTPServer.route(_:) may be called once")
    }
}
