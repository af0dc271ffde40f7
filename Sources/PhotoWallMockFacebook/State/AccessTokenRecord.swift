/// A user access token the mock issued, and what has happened to it since.
public struct AccessTokenRecord: Sendable, Equatable {
    /// Why a token stopped working before (or regardless of) its expiry time. Each maps to the
    /// Graph error subcode a real token would produce (notes §2.6).
    public enum Invalidation: Sendable, Equatable {
        /// 460: "The session has been invalidated because the user changed their password …".
        case passwordChanged
        /// 467: the user logged out.
        case loggedOut
        /// 458: the user removed the app (`DELETE /me/permissions`, or the control endpoint).
        case appRemoved

        /// The `error_subcode` Graph sends for it.
        public var subcode: Int {
            switch self {
            case .passwordChanged: return 460
            case .loggedOut: return 467
            case .appRemoved: return 458
            }
        }

        /// The inverse of `subcode`; nil for a subcode the mock does not produce this way.
        public init?(subcode: Int) {
            switch subcode {
            case 460: self = .passwordChanged
            case 467: self = .loggedOut
            case 458: self = .appRemoved
            default: return nil
            }
        }
    }

    public var token: String
    /// Fixture user id the token acts for.
    public var userID: String
    /// Granted permissions, e.g. `["public_profile", "user_friends"]`.
    public var scopes: [String]
    /// Unix seconds.
    public var issuedAt: Int
    /// Unix seconds; at or after this instant the token fails with 190/463.
    public var expiresAt: Int
    /// Set by a revoke, log-out or app removal; such a token fails with 190 and `invalidation.subcode`.
    public var invalidation: Invalidation?
}
