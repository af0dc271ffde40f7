/// A fixture that cannot be read, parsed or trusted (duplicate id, unknown friend, …).
public struct FixtureError: Error, Sendable, CustomStringConvertible {
    /// One line naming what is wrong and where (a path, a user id).
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
