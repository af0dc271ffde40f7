/// A misuse of the mock's Swift control API (an unknown user or token).
public struct MockFacebookError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
