import PhotoWallCore

/// A failed S3 request: S3's own error code from the `<Error><Code>` body (e.g. `NoSuchKey`,
/// `SignatureDoesNotMatch`), or a local code for failures without an S3 answer.
///
/// `catch` by code: `catch let e as S3Error where e.code == .noSuchKey`.
/// - Source: Amazon S3 API reference, "Error responses" (list of error codes).
public struct S3Error: Error, Sendable, CustomStringConvertible {
    /// S3's error code string, an open set.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let noSuchKey = Code(rawValue: "NoSuchKey")
        public static let noSuchBucket = Code(rawValue: "NoSuchBucket")
        public static let noSuchUpload = Code(rawValue: "NoSuchUpload")
        public static let accessDenied = Code(rawValue: "AccessDenied")
        public static let invalidAccessKeyId = Code(rawValue: "InvalidAccessKeyId")
        public static let signatureDoesNotMatch = Code(rawValue: "SignatureDoesNotMatch")
        public static let invalidRange = Code(rawValue: "InvalidRange")
        public static let invalidPart = Code(rawValue: "InvalidPart")
        public static let entityTooSmall = Code(rawValue: "EntityTooSmall")
        public static let bucketAlreadyOwnedByYou = Code(rawValue: "BucketAlreadyOwnedByYou")

        // Local codes (no S3 error body).
        /// No connection could be made (refused, DNS, connect timeout). Retried.
        public static let connectionFailed = Code(rawValue: "PhotoWall.ConnectionFailed")
        /// The connection broke, stalled or timed out mid-request. Retried when idempotent.
        public static let transport = Code(rawValue: "PhotoWall.Transport")
        /// A local file could not be read or written; `systemError` is the errno.
        public static let fileError = Code(rawValue: "PhotoWall.FileError")
        /// The response was not what the S3 API promises (bad XML, missing ETag).
        public static let invalidResponse = Code(rawValue: "PhotoWall.InvalidResponse")
        /// An HTTP error status without an S3 error body (e.g. a HEAD 403), named `HTTP<status>`.
        public static func http(_ status: Int) -> Code { Code(rawValue: "HTTP\(status)") }
        /// libcurl refused an option or could not allocate.
        public static let internalError = Code(rawValue: "PhotoWall.InternalError")
    }

    public var code: Code
    /// S3's `<Message>`, or a local explanation. Never contains credentials.
    public var message: String
    /// The HTTP status, when a response arrived.
    public var httpStatus: Int?
    /// The operation, e.g. `PutObject photos/files/x.jpg`.
    public var operation: String
    /// errno, for `fileError` and socket failures.
    public var systemError: Int32?
    /// How many attempts were made.
    public var attempts = 1

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, operation: String, systemError: Int32? = nil) {
        self.code = code; self.message = message; self.httpStatus = httpStatus; self.operation = operation; self.systemError = systemError
    }

    /// True for failures that say nothing about the request itself: no connection, a broken
    /// transfer, or an S3 5xx (`InternalError`, `SlowDown`, `ServiceUnavailable`).
    public var isTransient: Bool {
        code == .connectionFailed || code == .transport || (httpStatus ?? 0) >= 500
    }

    /// True when the credentials were refused (wrong key id or secret, or no permission).
    public var isAuthorizationFailure: Bool {
        code == .accessDenied || code == .invalidAccessKeyId || code == .signatureDoesNotMatch || httpStatus == 403
    }

    public var description: String {
        "\(operation): \(code)" + (httpStatus.map { " (HTTP \($0))" } ?? "") + (message.isEmpty ? "" : ": \(message)")
            + (attempts > 1 ? " after \(attempts) attempts" : "")
    }

    /// The `ParseError` for this failure at the `FileStore` boundary: 130 for writes, 153 for
    /// deletes, 100 when the store was unreachable on a read, 1 otherwise. The S3 details stay
    /// in `cause` (logged, never sent).
    public func parseError(_ kind: FileOperation, name: String) -> ParseError {
        switch kind {
        case .write: return ParseError(.fileSaveError, "Could not store file: \(name).", cause: self)
        case .delete: return ParseError(.fileDeleteError, "Could not delete file.", cause: self)
        case .read:
            if code == .connectionFailed || code == .transport {
                return ParseError(.connectionFailed, "The file store is unreachable.", cause: self)
            }
            return ParseError(.internalServerError, "Internal server error.", cause: self)
        }
    }

    /// Which kind of `FileStore` call failed (picks the Parse code).
    public enum FileOperation: Sendable { case read, write, delete }
}
