/// Why an `HTTPServer` could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `start()` was called on a server that is not in its initial state.
        public static let alreadyStarted = Code(rawValue: 1)
        /// A configuration value is out of range (bad host, port, thread count…).
        public static let invalidConfiguration = Code(rawValue: 2)
        /// libmicrohttpd refused to start (port in use, out of descriptors…); see `systemError`.
        public static let startFailed = Code(rawValue: 3)

        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? HTTPServerError)?.code == code
        }
    }

    public var code: Code
    public var message: String
    /// `errno` when the failure came from the system, e.g. `EADDRINUSE`.
    public var systemError: Int32?

    public init(code: Code, message: String, systemError: Int32? = nil) {
        self.code = code
        self.message = message
        self.systemError = systemError
    }

    public var description: String {
        systemError.map { "\(message) (errno \($0))" } ?? message
    }
}
