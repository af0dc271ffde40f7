import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

extension HTTPServer {
    /// Settings of one `HTTPServer`; fixed once the server starts.
    ///
    /// Defaults follow notes/http-and-infra.md §8 (64 KiB per connection, about 4096 connections,
    /// 30 s idle timeout, one poll(2) event thread per core).
    public struct Configuration: Sendable {
        /// IPv4 address to bind, dotted quad (`127.0.0.1`, `0.0.0.0`). IPv6 is not supported.
        public var host: String = "127.0.0.1"
        /// TCP port, 0–65535; 0 lets the kernel pick a free one (read it back from `start()` or `port`).
        public var port: Int = 0
        /// libmicrohttpd event (poll) threads. They only parse and move bytes; never blocked by handlers.
        public var eventThreads: Int = Configuration.processorCount
        /// OS threads that run route handlers (which may block on SQLite, fsync, libcurl).
        public var workerThreads: Int = 32
        /// Handlers that may run at once on those threads outside `WorkerPool.blocking` regions (the
        /// adapters mark their waits on the world outside: fsync, a libpq or libcurl round trip); a
        /// handler in such a wait lets the next one start. The others wait their turn first in, first
        /// out: more admitted than the cores can serve only slows each down, and the threads they wait
        /// for (thumbnail renders, the SQLite writer) with them. Default two per core; at most
        /// `workerThreads` apply.
        public var activeWorkerThreads: Int = 2 * Configuration.processorCount
        /// OS threads that run `.local` route handlers (CPU and local pages only, first in, first out);
        /// default one per core.
        public var localWorkerThreads: Int = Configuration.processorCount
        /// A `.local` request still queued after this long runs on the worker pool instead: handlers
        /// that run long (a slow query) then delay the requests queued behind them by at most this
        /// much, not by their whole run. Longer keeps more of a burst first in, first out (each request
        /// at full speed); shorter bounds the wait behind a stall. Default 50 ms.
        public var localQueueWaitLimit: Duration = .milliseconds(50)
        /// Memory pool per connection in bytes; it bounds header size and each body piece. 32–64 KiB is
        /// the sweet spot (notes pitfall 8c): RSS grows by this much per open connection.
        public var connectionMemoryLimitBytes: Int = 64 * 1024
        /// Open connections in total; further clients wait in the listen backlog.
        public var connectionLimit: Int = 4096
        /// Open connections per client IP (libmicrohttpd's `MHD_OPTION_PER_IP_CONNECTION_LIMIT`); over it a
        /// new connection from that address is closed at once, unanswered. 0 = no limit. Behind a reverse
        /// proxy every client shares the proxy's address: raise it or set 0 there.
        public var perIPConnectionLimit: Int = 64
        /// Seconds a client has to send a whole request head (request line and headers), counted from the
        /// connection's start; on a kept-alive connection, from the end of the previous response plus
        /// `idleTimeoutSeconds` (a connection idle that long is closed by the idle timeout anyway). Unlike
        /// `idleTimeoutSeconds`, arriving bytes do not restart it, so a client trickling a header byte at a
        /// time is closed at the deadline. Bodies are not covered (they have the idle timeout). 0 = none.
        public var requestHeadTimeoutSeconds: Double = 10
        /// A connection idle (no bytes in or out) this many seconds is closed; 0 = never.
        /// Connections whose handler is running are not timed out.
        public var idleTimeoutSeconds: Int = 30
        /// A request refused before its body was read (a route's `.immediate` answer or `open` returning
        /// `.respond`, such as tus's `423 Locked`) with a `Content-Length` up to this many bytes has its body
        /// read and dropped, then the answer is sent and the connection stays open. Bigger, chunked or
        /// `Expect: 100-continue` bodies get the answer at once and the connection is closed: closing with
        /// unread bytes makes the kernel send a reset, which can destroy the answer before the client reads
        /// it, and which a proxy such as nginx counts against the server (`max_fails`). Default 16 MiB: a
        /// whole tus chunk from the project's clients (4 MiB CLI, 2 MiB browser).
        public var discardBodyLimitBytes: Int = 16 << 20
        /// `listen(2)` backlog.
        public var listenBacklog: Int = 1024
        /// Used by `runUntilSignal()`: how long to wait for requests in progress after SIGINT/SIGTERM.
        public var shutdownGracePeriodSeconds: Double = 10
        /// Engine messages and access lines; its `level` filters them (access lines are `.info`).
        public var logger: Logger = Logger(label: "http")
        /// Write one access line per request (method, path without query, status, ms, request id).
        public var accessLog: Bool = true
        /// Called once per finished request, after its access line: on an event thread, or on the thread
        /// calling `shutdown` for requests cut off by it. Must not block. For metrics and tests.
        public var onRequestCompleted: (@Sendable (AccessLogEntry) -> Void)? = nil
        /// Tests only: called on the worker after it handed a result over and before it resumes the
        /// connection (the window shutdown must wait out; see `Engine.complete`).
        var beforeResumeForTesting: (@Sendable () -> Void)? = nil
        /// The one place errors become responses: what handlers and `open` throw, `.refuse` plans, and the
        /// engine's own refusals (`HTTPError`: 400 ambiguous framing, 404 no route, 413 body too large,
        /// 500). Runs on a worker or an event thread; must not block. The default renders `HTTPError` as
        /// `{"error": message}` and anything else as 500 `{"error":"internal server error"}`.
        public var errorRenderer: @Sendable (_ error: any Error, _ head: RequestHead) -> Response = Configuration.renderPlainError

        public init(host: String = "127.0.0.1", port: Int = 0, logger: Logger = Logger(label: "http")) {
            self.host = host
            self.port = port
            self.logger = logger
        }

        /// The default `errorRenderer`.
        public static func renderPlainError(_ error: any Error, _ head: RequestHead) -> Response {
            ((error as? HTTPError) ?? .internalServerError).response
        }

        /// Online processors (at least 1).
        public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
    }
}
