import PhotoWallCore

/// Who an identity provider says a user is.
public struct ProviderProfile: Sendable, Equatable {
    /// The provider's user id (for Facebook, the app-scoped id as a digit string).
    public var id: String
    public var name: String?
    public init(id: String, name: String?) { self.id = id; self.name = name }
}

/// An external identity provider behind `authData.<name>` (parse-server's auth adapters).
///
/// Implementations talk to the provider; the services see only this protocol.
public protocol IdentityProvider: Sendable {
    /// The `authData` key, e.g. `facebook`.
    var name: String { get }

    /// Checks `authData` with the provider and returns who it is.
    /// - Throws: 101 `<Provider> auth is invalid for this user.` when the provider rejects the token
    ///   or it belongs to someone else; 141 when the provider can't be reached (with the reason).
    func validate(_ authData: [String: JSON]) throws(ParseError) -> ProviderProfile

    /// The ids of the user's friends who use the app, following every page.
    /// - Throws: as `validate`.
    func friendIDs(_ authData: [String: JSON]) throws(ParseError) -> [String]
}
