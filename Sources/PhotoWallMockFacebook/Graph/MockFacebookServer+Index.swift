import PhotoWallHTTP

extension MockFacebookServer {
    /// `GET /`: a plain-text summary for people who open the mock in a browser.
    func indexPage(_ call: GraphCall) -> Response {
        let base = call.baseURL
        let first = fixture.users.first
        var text = """
            Mock Facebook Graph API (PhotoWall; development and tests only)
            app id \(configuration.appID) · \(fixture.users.count) fixture users · \(fixture.friendshipCount) friendships
            appsecret_proof: \(configuration.appSecret == nil ? "not checked (no app secret)" : configuration.requireAppSecretProof ? "required" : "checked when sent")

            Login dialog:  \(base)/v19.0/dialog/oauth?client_id=\(configuration.appID)&redirect_uri=http://127.0.0.1:9/cb&state=xyz&scope=public_profile,user_friends
            Code exchange: \(base)/v19.0/oauth/access_token?client_id=…&client_secret=…&redirect_uri=…&code=…
            Graph:         /me?fields=id,name,picture  /{id}  /{id}/picture  /me/friends?limit=25  /app  /debug_token?input_token=…

            """
        if configuration.enableControlEndpoints {
            text += "Test-only controls (GET \(base)/__control):\n"
            text += MockFacebookServer.controlEndpoints.map { "  " + $0 }.joined(separator: "\n") + "\n"
            if let first {
                text += "\nToken for a script:  curl -s -X POST -d user_id=\(first.id) \(base)/__control/login\n"
            }
        }
        return .text(text, status: 200)
    }
}
