internal import PhotoWallCurl
/// A failure of the PhotoWall client: what went wrong (`code`), a one-line message for people,
/// and the facts behind it (HTTP status, Parse error code, libcurl code, errno).
///
/// `catch` by code with pattern matching: `catch let e where e.code == .unauthorized`.
public struct ClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. An open set of constants, matched with `==` or `~=`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No TCP connection could be made (refused, DNS, connect timeout, bad URL). Retryable.
        public static let unreachable = Code(rawValue: "unreachable")
        /// The URL is malformed or not http(s). Not retryable.
        public static let badURL = Code(rawValue: "bad-url")
        /// The connection broke, stalled or was reset mid-request. Retryable.
        public static let transport = Code(rawValue: "transport")
        /// The caller cancelled (`CancellationToken.cancel()` or Task cancellation).
        public static let cancelled = Code(rawValue: "cancelled")
        /// No or invalid credentials: HTTP 401/403, or Parse 209 (invalid session token).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// The file is over the server's limit (`Tus-Max-Size`, HTTP 413). `limitBytes` holds the limit when known.
        public static let tooLarge = Code(rawValue: "too-large")
        /// The upload URL is unknown to the server (HTTP 404) or was terminated.
        public static let notFound = Code(rawValue: "not-found")
        /// The upload expired (HTTP 410).
        public static let gone = Code(rawValue: "gone")
        /// The server kept refusing a chunk's checksum (HTTP 460) after every retry.
        public static let checksumMismatch = Code(rawValue: "checksum-mismatch")
        /// The server refused the request for another reason (4xx, or a Parse error in the body).
        public static let rejected = Code(rawValue: "rejected")
        /// The server failed (HTTP 5xx). Retryable.
        public static let serverError = Code(rawValue: "server-error")
        /// The server's answer broke the protocol (missing `Location`, offset moved backwards…).
        public static let protocolError = Code(rawValue: "protocol-error")
        /// The local file could not be opened, read or stat'ed; `systemError` holds errno.
        public static let fileError = Code(rawValue: "file-error")
        /// A bug or resource failure inside the client (libcurl refused an option).
        public static let internalError = Code(rawValue: "internal-error")

        public static func ~= (pattern: Code, error: any Error) -> Bool {
            (error as? ClientError)?.code == pattern
        }
    }

    public var code: Code
    /// One line, no trailing period guarantees; safe to show (never contains credentials).
    public var message: String
    /// HTTP status of the response that caused it, when there was one.
    public var httpStatus: Int?
    /// Parse error code from the response body (`{"code": N, "error": …}`), when present.
    public var parseCode: Int?
    /// libcurl's `CURLcode`, for transport failures.
    public var curlCode: Int?
    /// errno, for file and socket failures.
    public var systemError: Int32?
    /// The server's limit in bytes, for `.tooLarge`.
    public var limitBytes: Int64?
    /// How many attempts were made before giving up (1 when the error was not retried).
    public var attempts: Int = 1
    /// The server's `Retry-After` in seconds (RFC 9110 §10.2.3, delay-seconds form), when sent.
    public var retryAfterSeconds: Double?

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, parseCode: Int? = nil,
                systemError: Int32? = nil, limitBytes: Int64? = nil) {
        self.code = code; self.message = message; self.httpStatus = httpStatus; self.parseCode = parseCode
        self.systemError = systemError; self.limitBytes = limitBytes
    }

    /// Whether trying again later may succeed: network failures, 5xx, 409/423 (resynchronise
    /// with HEAD first) and checksum mismatches.
    public var isRetryable: Bool {
        switch code {
        case .unreachable, .transport, .serverError, .checksumMismatch: return true
        case .rejected: return httpStatus == 409 || httpStatus == 423 || httpStatus == 429
        default: return false
        }
    }

    public var description: String {
        var s = "\(code): \(message)"
        if let httpStatus { s += " (HTTP \(httpStatus)" + (parseCode.map { ", Parse \($0)" } ?? "") + ")" }
        if attempts > 1 { s += " after \(attempts) attempts" }
        return s
    }

    /// The error for an HTTP response that was not a success.
    static func from(_ response: HTTPResponse, action: String) -> ClientError {
        let status = response.status
        let parseCode = response.json?["code"]?.intValue
        let message = "\(action): \(response.errorMessage)"
        let code: Code
        switch status {
        case 401, 403: code = .unauthorized
        case 404: code = parseCode == nil ? .notFound : .rejected
        case 410: code = .gone
        case 413: code = .tooLarge
        case 460: code = .checksumMismatch
        case 500...599: code = .serverError
        default: code = parseCode == 209 ? .unauthorized : .rejected
        }
        var e = ClientError(code, message, httpStatus: status, parseCode: parseCode)
        if status == 413, let max = response.header("Tus-Max-Size").flatMap({ Int64($0) }) { e.limitBytes = max }
        if let after = response.header("Retry-After").flatMap({ Double($0) }), after >= 0 { e.retryAfterSeconds = min(after, 120) }
        return e
    }
}
