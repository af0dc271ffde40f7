import PhotoWallCore

/// The server side of Facebook's authorization-code login (the browser wall's redirect flow).
extension FacebookGraphProvider {
    /// What a code exchange yields: enough for `authData.facebook`.
    public struct Exchanged: Sendable, Equatable {
        /// The user's Facebook id (from `GET /me`).
        public var id: String
        public var name: String?
        /// The user access token the code was exchanged for.
        public var accessToken: String
        /// Seconds the token stays valid, when Graph says.
        public var expiresInSeconds: Int?
    }

    /// Exchanges an authorization code from the OAuth dialog for a user token, then asks `/me` who it is.
    ///
    /// Calls `GET /oauth/access_token?client_id&redirect_uri&client_secret&code` (with the first configured
    /// app id and the app secret, which never reach the browser), then `GET /me?fields=id,name`.
    /// - Parameters:
    ///   - code: The `code` the dialog redirected back with; it works once.
    ///   - redirectURI: Exactly the `redirect_uri` given to the dialog.
    /// - Returns: The Facebook id, name and access token.
    /// - Throws: `ParseError` 101 when Graph refuses the code or the token; 252 when no app id is
    ///   configured; 141 when Graph can't be reached.
    /// - Source: Graph "Manually Build a Login Flow", "Confirming identity" / "Exchanging code for an access token".
    public func exchange(code: String, redirectURI: String) throws(ParseError) -> Exchanged {
        guard let appId = appIds.first else {
            throw ParseError(.unsupportedService, "Facebook login needs --facebook-app-id for the code exchange.")
        }
        var items = [("client_id", appId), ("redirect_uri", redirectURI), ("code", code)]
        if let appSecret { items.append(("client_secret", appSecret)) }
        let url = baseURL + "/oauth/access_token?" + percentEncodedQuery(items)
        let answer = try fetch(url)
        guard let token = answer["access_token"]?.stringValue, !token.isEmpty else {
            let message = answer["error"]?["message"]?.stringValue ?? "no access token"
            throw ParseError(.objectNotFound, "Facebook refused the login code: \(message)")
        }
        let me = try get("/me", token: token, query: ["fields": "id,name"])
        guard let id = me["id"]?.stringValue, !id.isEmpty else { throw Self.invalid }
        return Exchanged(id: id, name: me["name"]?.stringValue, accessToken: token,
                         expiresInSeconds: answer["expires_in"]?.intValue)
    }
}
