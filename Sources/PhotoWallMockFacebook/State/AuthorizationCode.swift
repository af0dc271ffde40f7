/// A code handed out by the OAuth dialog, exchanged once at `/oauth/access_token`.
struct AuthorizationCode: Sendable {
    var userID: String
    var clientID: String
    /// Must equal the exchange's `redirect_uri` exactly (manual-flow docs; notes §2.1).
    var redirectURI: String
    var scopes: [String]
    /// Unix seconds.
    var expiresAt: Int
    /// Set by the first successful exchange; a second exchange fails ("has been used").
    var used = false
}
