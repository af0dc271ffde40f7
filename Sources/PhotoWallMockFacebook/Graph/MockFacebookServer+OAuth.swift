import PhotoWallCore
import PhotoWallHTTP

extension MockFacebookServer {
    /// `GET|POST /oauth/access_token` (Graph manual login flow, "Confirming identity"; notes §2.1).
    ///
    /// - Code exchange (`client_id`, `redirect_uri`, `client_secret`, `code`) →
    ///   `{"access_token","token_type":"bearer","expires_in"}`. The code works once; `redirect_uri`
    ///   must equal the dialog's. A failed attempt does not use the code up.
    /// - `grant_type=client_credentials` → the app token `{"access_token":"APP_ID|SECRET","token_type":"bearer"}`.
    /// - `grant_type=fb_exchange_token&fb_exchange_token=T` → a new token for T's user and permissions.
    ///
    /// Errors (messages as Graph sends them; subcodes 36007–36009 as commonly reported, unverified):
    /// 101 missing or wrong `client_id`; 1 wrong `client_secret`; 100 missing `redirect_uri` or `code`,
    /// unknown code, used code (36009), expired code (36007), `redirect_uri` mismatch (36008).
    func exchange(_ call: GraphCall) throws(GraphError) -> Response {
        guard call.method == "GET" || call.method == "POST" else { throw GraphError.unsupportedMethod(call.method) }
        guard let clientID = call.parameter("client_id"), !clientID.isEmpty else {
            throw GraphError(message: "Missing client_id parameter.", code: 101)
        }
        guard clientID == configuration.appID else {
            throw GraphError(message: "Error validating application. Invalid application ID.", code: 101)
        }
        if let secret = configuration.appSecret, call.parameter("client_secret") != secret {
            throw GraphError(message: "Error validating client secret.", code: 1)
        }
        switch call.parameter("grant_type") {
        case "client_credentials":
            return .json(["access_token": .string("\(configuration.appID)|\(configuration.appSecret ?? "mock")"), "token_type": "bearer"])
        case "fb_exchange_token":
            guard let old = call.parameter("fb_exchange_token"), let record = state.token(old),
                  let index = fixture.indexByID[record.userID] else { throw GraphError.invalidToken }
            try checkValid(record)
            return tokenResponse(state.issueToken(userIndex: index, scopes: record.scopes, lifetimeSeconds: configuration.tokenLifetimeSeconds))
        default:
            break
        }
        guard let redirectURI = call.parameter("redirect_uri") else {
            throw GraphError(message: "Missing redirect_uri parameter.", code: 100)
        }
        guard let code = call.parameter("code"), !code.isEmpty else {
            throw GraphError(message: "Missing code parameter.", code: 100)
        }
        let now = WallClock.now()
        let outcome = state.world.withLock { w -> Result<AuthorizationCode, GraphError> in
            guard let entry = w.codes[code], entry.clientID == clientID else {
                return .failure(GraphError(message: "Invalid verification code format.", code: 100))
            }
            if entry.used { return .failure(GraphError(message: "This authorization code has been used.", code: 100, subcode: 36009)) }
            if now >= entry.expiresAt { return .failure(GraphError(message: "This authorization code has expired.", code: 100, subcode: 36007)) }
            guard entry.redirectURI == redirectURI else {
                return .failure(GraphError(message: "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request",
                                           code: 100, subcode: 36008))
            }
            w.codes[code]?.used = true
            return .success(entry)
        }
        let entry: AuthorizationCode
        switch outcome {
        case .success(let e): entry = e
        case .failure(let error): throw error
        }
        guard let index = fixture.indexByID[entry.userID] else { throw GraphError.invalidToken }
        return tokenResponse(state.issueToken(userIndex: index, scopes: entry.scopes, lifetimeSeconds: configuration.tokenLifetimeSeconds))
    }

    private func tokenResponse(_ record: AccessTokenRecord) -> Response {
        .json(["access_token": .string(record.token), "token_type": "bearer", "expires_in": .number(Double(record.expiresAt - record.issuedAt))])
    }

    /// `GET /debug_token?input_token=T&access_token=APP_ID|APP_SECRET` (Graph `debug_token` reference; notes §2.2).
    ///
    /// The inspecting token may be the app token or a valid user token of the app. Answer for a user token:
    /// `{"data":{"app_id","type":"USER","application","data_access_expires_at","expires_at","is_valid",
    /// "issued_at","scopes","granular_scopes":[{"scope"}],"user_id"}}`; an expired or revoked one has
    /// `is_valid:false` and `error:{code:190,message,subcode}`; an unknown one only `error`, `is_valid`, `scopes`.
    func debugToken(_ call: GraphCall) throws(GraphError) -> Response {
        let needsInspector = GraphError(message: "(#100) You must provide an app access token, or a user access token that is an owner or developer of the app",
                                        code: 100)
        _ = try authenticate(call, missing: needsInspector)
        guard let input = call.parameter("input_token"), !input.isEmpty else {
            throw GraphError.badParameter("The parameter input_token is required")
        }
        var data: [String: JSON] = [:]
        if input.contains("|") {
            let parts = input.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let valid = parts[0] == configuration.appID && configuration.appSecret.map { parts[1] == $0 } ?? true
            data = ["app_id": .string(configuration.appID), "type": "APP", "application": .string(configuration.appName), "is_valid": .bool(valid)]
            return .json(["data": .object(data)])
        }
        guard let record = state.token(input) else {
            return .json(["data": ["error": ["code": 190, "message": .string(GraphError.invalidToken.message)], "is_valid": false, "scopes": []]])
        }
        data = ["app_id": .string(configuration.appID), "type": "USER", "application": .string(configuration.appName),
                "data_access_expires_at": .number(Double(record.issuedAt + 90 * 86_400)),
                "expires_at": .number(Double(record.expiresAt)), "issued_at": .number(Double(record.issuedAt)),
                "scopes": .array(record.scopes.map { .string($0) }),
                "granular_scopes": .array(record.scopes.filter { $0 != "public_profile" }.map { ["scope": .string($0)] }),
                "user_id": .string(record.userID), "is_valid": true]
        do {
            try checkValid(record)
        } catch {
            data["is_valid"] = false
            var detail: [String: JSON] = ["code": .number(Double(error.code)), "message": .string(error.message)]
            if let subcode = error.subcode { detail["subcode"] = .number(Double(subcode)) }
            data["error"] = .object(detail)
        }
        return .json(["data": .object(data)])
    }
}
