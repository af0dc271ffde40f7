/// How a request ended, from libmicrohttpd's request-completed callback.
public enum RequestTermination: String, Sendable {
    /// The response was sent completely.
    case completed
    /// The engine or a sink gave up on the request (body over the limit mid-body, sink write failed).
    case error
    /// The client was idle longer than `idleTimeoutSeconds`.
    case timeout
    /// The server stopped while the request was in progress.
    case shutdown
    /// Reading from the socket failed.
    case readError = "read_error"
    /// The client closed the connection before the response was sent.
    case clientAbort = "client_abort"
}

/// One finished request, as written to the access log. Carries no query string and no body.
public struct AccessLogEntry: Sendable {
    public var method: String
    /// Path only; the query string is left out because it may carry secrets.
    public var path: String
    /// Status sent, or nil when the connection ended without a response.
    public var status: Int?
    /// From the first header byte seen by the handler to the end of the response, in milliseconds.
    public var durationMilliseconds: Double
    public var requestID: String
    public var remoteAddress: String
    public var termination: RequestTermination
    /// Request body bytes received (after de-chunking).
    public var bodyBytes: Int
}
