import PhotoWallCore
import PhotoWallHTTP

/// The dialog's validated parameters (Graph manual login flow; notes §2.1).
struct DialogRequest: Sendable {
    var clientID: String
    var redirectURI: String
    var state: String?
    /// Requested permissions, in order, without duplicates; `public_profile` is always granted.
    var scopes: [String]
    /// `code` (default) or `token`.
    var responseType: String
}

extension MockFacebookServer {
    /// How many users the dialog lists (large generated fixtures have more; any id can still be typed).
    static let dialogUserLimit = 300

    /// `GET /dialog/oauth`: the login page, or an HTML error page (400) for a bad `client_id`,
    /// `redirect_uri` or `response_type` (Graph shows an error rather than redirecting then).
    func dialog(_ call: GraphCall) throws(GraphError) -> Response {
        let request: DialogRequest
        switch validateDialog(call) {
        case .success(let r): request = r
        case .failure(let failure): return failure.page
        }
        return html(DialogPage.render(request, appName: configuration.appName, users: Array(fixture.users.prefix(MockFacebookServer.dialogUserLimit)),
                                      totalUsers: fixture.users.count, action: call.versionPrefix + "/dialog/oauth/confirm"))
    }

    /// `GET|POST /dialog/oauth/confirm` with the dialog's fields plus `user_id` (or `user`: an id or exact
    /// name) and `action=approve|cancel`. Approve: 302 to `redirect_uri?code=…&state=…` (or, for
    /// `response_type=token`, `#access_token=…&expires_in=…&state=…`). Cancel: 302 with
    /// `error_reason=user_denied&error=access_denied&error_description=Permissions+error&state=…`.
    ///
    /// Granted permissions: the requested ones, or with `grants_listed=1` only the `grant` checkboxes
    /// (plus `public_profile`). Granting `user_friends` makes the user an app user.
    func confirm(_ call: GraphCall) throws(GraphError) -> Response {
        let request: DialogRequest
        switch validateDialog(call) {
        case .success(let r): request = r
        case .failure(let failure): return failure.page
        }
        if call.parameter("action") == "cancel" {
            return redirect(request, [("error_reason", "user_denied"), ("error", "access_denied"),
                                      ("error_description", "Permissions error")], fragment: false)
        }
        guard call.parameter("action") == "approve" else { return errorPage("Choose Continue or Cancel.", status: 400) }
        // A typed `user` (id or name) wins over the radio buttons' `user_id`.
        let chosen = [call.parameter("user"), call.parameter("user_id")].compactMap { $0?.trimmedSpaces }.first { !$0.isEmpty } ?? ""
        guard let index = userIndex(idOrName: chosen) else {
            return errorPage(chosen.isEmpty ? "Choose who you are." : "No fixture user \"\(chosen)\".", status: 400)
        }
        var granted = request.scopes
        if call.parameter("grants_listed") == "1" {
            let ticked = Set(call.parameters("grant"))
            granted = request.scopes.filter { $0 == "public_profile" || ticked.contains($0) }
        }
        if request.responseType == "token" {
            let record = state.issueToken(userIndex: index, scopes: granted, lifetimeSeconds: configuration.tokenLifetimeSeconds)
            return redirect(request, [("access_token", record.token), ("data_access_expiration_time", String(record.issuedAt + 90 * 86_400)),
                                      ("expires_in", String(record.expiresAt - record.issuedAt))], fragment: true)
        }
        let code = ProviderState.newCode()
        let now = WallClock.now()
        state.world.withLock { w in
            w.codes = w.codes.filter { $0.value.expiresAt > now - 3600 } // forget long-dead codes
            w.codes[code] = AuthorizationCode(userID: fixture.users[index].id, clientID: request.clientID, redirectURI: request.redirectURI,
                                              scopes: granted, expiresAt: now + configuration.codeLifetimeSeconds)
            if granted.contains("user_friends") { w.appUsers[index] = true }
        }
        return redirect(request, [("code", code)], fragment: false)
    }

    /// A fixture user by id, or by exact (then case-insensitive) name.
    func userIndex(idOrName text: String) -> Int? {
        if let i = fixture.indexByID[text] { return i }
        if let i = fixture.users.firstIndex(where: { $0.name == text }) { return i }
        let lower = text.lowercased()
        return fixture.users.firstIndex { $0.name.lowercased() == lower }
    }

    private func validateDialog(_ call: GraphCall) -> Result<DialogRequest, DialogFailure> {
        guard let clientID = call.parameter("client_id"), !clientID.isEmpty else {
            return .failure(DialogFailure(errorPage("The parameter app_id is required", status: 400)))
        }
        guard clientID == configuration.appID else {
            return .failure(DialogFailure(errorPage("Invalid App ID: The provided app ID \"\(clientID)\" does not look like a valid app ID.", status: 400)))
        }
        guard let redirectURI = call.parameter("redirect_uri"), !redirectURI.isEmpty else {
            return .failure(DialogFailure(errorPage("The parameter redirect_uri is required", status: 400)))
        }
        let prefixes = configuration.allowedRedirectURIPrefixes
        guard redirectURI.contains("://"),
              prefixes.isEmpty || prefixes.contains(where: { redirectURI.hasPrefix($0) }) else {
            return .failure(DialogFailure(errorPage("URL blocked: This redirect failed because the redirect URI is not allow-listed in the app's Client OAuth settings.", status: 400)))
        }
        let responseType = call.parameter("response_type") ?? "code"
        guard ["code", "token"].contains(responseType) else {
            return .failure(DialogFailure(errorPage("Unsupported response_type \"\(responseType)\" (the mock offers code and token).", status: 400)))
        }
        var scopes = ["public_profile"]
        let separators: Set<Character> = [",", " "]
        for scope in (call.parameter("scope") ?? "").split(whereSeparator: { separators.contains($0) }).map(String.init)
            where !scopes.contains(scope) {
            scopes.append(scope)
        }
        return .success(DialogRequest(clientID: clientID, redirectURI: redirectURI, state: call.parameter("state"),
                                      scopes: scopes, responseType: responseType))
    }

    /// 302 to `redirect_uri` with `pairs` (+ `state`) in the query, or in the fragment for implicit grants.
    private func redirect(_ request: DialogRequest, _ pairs: [(String, String)], fragment: Bool) -> Response {
        var all = pairs
        if let state = request.state { all.append(("state", state)) }
        let separator = fragment ? "#" : (request.redirectURI.contains("?") ? "&" : "?")
        var headers = HTTPHeaders()
        headers.set("Location", request.redirectURI + separator + Encoding.query(all))
        headers.set("Cache-Control", "no-store")
        return Response(status: 302, headers: headers)
    }

    func html(_ text: String, status: Int = 200) -> Response {
        var headers = HTTPHeaders()
        headers.set("Content-Type", "text/html; charset=utf-8")
        headers.set("Cache-Control", "no-store")
        return Response(status: status, headers: headers, body: .bytes(Array(text.utf8)))
    }

    func errorPage(_ message: String, status: Int) -> Response {
        html(DialogPage.error(message, appName: configuration.appName), status: status)
    }
}

/// An HTML error page to answer instead of a dialog.
struct DialogFailure: Error, Sendable {
    var page: Response
    init(_ page: Response) { self.page = page }
}
