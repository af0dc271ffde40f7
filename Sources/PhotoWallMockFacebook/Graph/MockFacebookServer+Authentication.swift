import PhotoWallCrypto

/// Who is calling, decided from the access token.
enum GraphCaller: Sendable {
    /// A valid user token; `index` is the user's position in the fixture.
    case user(AccessTokenRecord, index: Int)
    /// The app token `APP_ID|APP_SECRET` (Graph's app access token form).
    case app

    var userIndex: Int? { if case .user(_, let index) = self { return index }; return nil }
    var record: AccessTokenRecord? { if case .user(let record, _) = self { return record }; return nil }
}

extension MockFacebookServer {
    /// Checks the call's access token the way Graph does, in this order:
    /// 1. none → `missing`;
    /// 2. `APP_ID|SECRET` → the app (secret checked when configured), else 190;
    /// 3. a token the mock never issued → 190 (no subcode);
    /// 4. `appsecret_proof` missing (when required) or wrong → 100 `GraphMethodException`;
    /// 5. revoked / logged out / app removed → 190/460, 467, 458; expired → 190/463.
    func authenticate(_ call: GraphCall, missing: GraphError) throws(GraphError) -> GraphCaller {
        guard let token = call.accessToken else { throw missing }
        if let bar = token.firstIndex(of: "|") {
            let app = token[..<bar], secret = token[token.index(after: bar)...]
            guard app == configuration.appID, configuration.appSecret.map({ $0 == secret }) ?? true else {
                throw GraphError(message: "Invalid OAuth access token signature.", code: 190)
            }
            return .app
        }
        guard let record = state.token(token), let index = fixture.indexByID[record.userID] else { throw GraphError.invalidToken }
        try checkProof(call, token: token)
        try checkValid(record)
        return .user(record, index: index)
    }

    /// Throws 190 with the subcode a revoked or expired token gets.
    func checkValid(_ record: AccessTokenRecord) throws(GraphError) {
        if let reason = record.invalidation { throw GraphError.invalidated(reason, appID: configuration.appID) }
        let now = WallClock.now()
        if now >= record.expiresAt { throw GraphError.expired(at: record.expiresAt, now: now) }
    }

    /// `appsecret_proof` = hex HMAC-SHA256(app secret, token); case-insensitive hex, compared in constant time.
    func checkProof(_ call: GraphCall, token: String) throws(GraphError) {
        guard let secret = configuration.appSecret else { return }
        guard let proof = call.parameter("appsecret_proof"), !proof.isEmpty else {
            if configuration.requireAppSecretProof { throw GraphError.missingProof }
            return
        }
        let expected = MockFacebookServer.appSecretProof(accessToken: token, appSecret: secret)
        guard Crypto.constantTimeEquals(Array(proof.lowercased().utf8), Array(expected.utf8)) else { throw GraphError.wrongProof }
    }

    /// A user token is required (e.g. `/me`): the app token gets `missing` too.
    func authenticateUser(_ call: GraphCall, missing: GraphError) throws(GraphError) -> (AccessTokenRecord, Int) {
        let caller = try authenticate(call, missing: missing)
        guard case .user(let record, let index) = caller else { throw missing }
        return (record, index)
    }

    /// `me` → the caller's index; a numeric id → that user's index.
    func resolveNode(_ id: String, caller: GraphCaller) throws(GraphError) -> Int {
        if id == "me" {
            guard let index = caller.userIndex else { throw GraphError.needsUserToken }
            return index
        }
        guard let index = fixture.indexByID[id] else { throw GraphError.noSuchObject(id) }
        return index
    }
}
