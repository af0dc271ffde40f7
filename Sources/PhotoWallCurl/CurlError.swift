/// A failed libcurl transfer: what went wrong (`code`), one line for logs, and the libcurl code
/// and errno behind it. HTTP statuses are not errors here: callers read `HTTPResponse.status`.
package struct CurlError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    package enum Code: Sendable, Equatable {
        /// No TCP connection could be made (refused, DNS, connect timeout). Retryable.
        case unreachable
        /// The URL is malformed or not http(s).
        case badURL
        /// The connection broke, stalled, timed out or was reset mid-request. Retryable.
        case transport
        /// The progress callback asked to stop.
        case cancelled
        /// The request body file could not be read or the response file written; see `systemError`.
        case fileError
        /// The response body exceeded `EasyHandle.maxResponseBodyBytes`.
        case responseTooLarge
        /// libcurl could not allocate a handle or refused an option.
        case internalError
    }

    package var code: Code
    /// One line; never contains credentials (URLs carry none: auth goes in headers).
    package var message: String
    /// libcurl's `CURLcode`, for transport failures.
    package var curlCode: Int?
    /// errno, for file and socket failures.
    package var systemError: Int32?

    package init(_ code: Code, _ message: String, systemError: Int32? = nil) {
        self.code = code; self.message = message; self.systemError = systemError
    }

    /// Whether the same request may succeed when sent again (connect and transport failures).
    package var isRetryable: Bool { code == .unreachable || code == .transport }

    package var description: String { "\(code): \(message)" + (curlCode.map { " (curl \($0))" } ?? "") }
}
