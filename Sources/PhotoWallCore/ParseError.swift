/// An error the Parse REST API reports to its client as `{"code":N,"error":"…"}`.
///
/// The HTTP status follows the code (1 → 500, 101 → 404, every other code → 400) unless a
/// factory sets an exception (119 on a file GET → 403). `cause` is logged, never sent.
/// `retryAfterSeconds`, when set, is sent as `Retry-After` (RFC 9110 §10.2.3): the server did nothing
/// and says when trying again may succeed.
/// - Source: parse-rest-api.md §4; Parse-SDK-JS `ParseError.ts` for the codes.
public struct ParseError: Error, Sendable, CustomStringConvertible {
    public var code: Code
    public var message: String
    public var status: Int
    public var cause: (any Error)?
    public var location: String
    /// Seconds after which the same request may succeed (`Retry-After`); nil: not said.
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ message: String, status: Int? = nil, cause: (any Error)? = nil,
                retryAfterSeconds: Int? = nil, fileID: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.status = status ?? code.defaultStatus
        self.cause = cause
        self.retryAfterSeconds = retryAfterSeconds
        self.location = "\(fileID):\(line)"
    }

    public var description: String { "ParseError(\(code.rawValue), \(status)): \(message)" }

    /// The body sent to the client.
    public var json: JSON {
        if code == .internalServerError { return ["code": 1, "message": .string(message)] }
        return ["code": .number(Double(code.rawValue)), "error": .string(message)]
    }

    /// An open set of Parse error codes, named as in the Parse SDKs.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let otherCause = Code(rawValue: -1)
        public static let internalServerError = Code(rawValue: 1)
        public static let connectionFailed = Code(rawValue: 100)
        public static let objectNotFound = Code(rawValue: 101)
        public static let invalidQuery = Code(rawValue: 102)
        public static let invalidClassName = Code(rawValue: 103)
        public static let missingObjectId = Code(rawValue: 104)
        public static let invalidKeyName = Code(rawValue: 105)
        public static let invalidPointer = Code(rawValue: 106)
        public static let invalidJSON = Code(rawValue: 107)
        public static let commandUnavailable = Code(rawValue: 108)
        public static let incorrectType = Code(rawValue: 111)
        public static let operationForbidden = Code(rawValue: 119)
        public static let invalidFileName = Code(rawValue: 122)
        public static let invalidACL = Code(rawValue: 123)
        /// The request took longer than the server allows (Parse's `TIMEOUT`).
        public static let timeout = Code(rawValue: 124)
        public static let invalidEmailAddress = Code(rawValue: 125)
        public static let fileSaveError = Code(rawValue: 130)
        public static let duplicateValue = Code(rawValue: 137)
        public static let scriptFailed = Code(rawValue: 141)
        public static let validationError = Code(rawValue: 142)
        public static let fileDeleteError = Code(rawValue: 153)
        public static let usernameMissing = Code(rawValue: 200)
        public static let passwordMissing = Code(rawValue: 201)
        public static let usernameTaken = Code(rawValue: 202)
        public static let emailTaken = Code(rawValue: 203)
        public static let sessionMissing = Code(rawValue: 206)
        public static let accountAlreadyLinked = Code(rawValue: 208)
        public static let invalidSessionToken = Code(rawValue: 209)
        public static let unsupportedService = Code(rawValue: 252)

        /// HTTP status for the code: 1 → 500, 101 → 404, anything else → 400 (parse-server `handleParseErrors`).
        public var defaultStatus: Int {
            switch rawValue {
            case 1: return 500
            case 101: return 404
            default: return 400
            }
        }

        public static func ~= (lhs: Code, rhs: any Error) -> Bool {
            (rhs as? ParseError)?.code == lhs
        }
    }
}

extension ParseError {
    public static func objectNotFound() -> ParseError { ParseError(.objectNotFound, "Object not found.") }
    public static func internalError(_ cause: any Error) -> ParseError {
        ParseError(.internalServerError, "Internal server error.", cause: cause)
    }
    public static func invalidSessionToken() -> ParseError { ParseError(.invalidSessionToken, "Invalid session token") }
    public static func invalidClassName(_ name: String) -> ParseError {
        ParseError(.invalidClassName, "Invalid classname: \(name), classnames can only have alphanumeric characters and _, and must start with an alpha character ")
    }
    public static func invalidFieldName(_ name: String) -> ParseError {
        ParseError(.invalidKeyName, "Invalid field name: \(name).")
    }
}
