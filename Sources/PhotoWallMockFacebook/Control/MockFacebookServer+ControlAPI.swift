/// The Swift face of the test-only controls: the same operations as the `/__control` endpoints, for
/// tests that hold the server object. None of this exists at the real Facebook.
extension MockFacebookServer {
    /// The permissions a minted token gets unless told otherwise.
    public static let defaultScopes = ["public_profile", "user_friends"]

    /// Mints a user token without the dialog, as if `user` had approved the app.
    ///
    /// - Parameters:
    ///   - user: a fixture id, or an exact (then case-insensitive) name.
    ///   - scopes: granted permissions; `public_profile` is added. With `user_friends` the user becomes an app user.
    ///   - lifetimeSeconds: ≥ 0; default `configuration.tokenLifetimeSeconds`. 0 gives an already expired token.
    /// - Returns: the record, whose `token` is the access token.
    /// - Throws: `MockFacebookError` for an unknown user or a negative lifetime.
    @discardableResult
    public func issueToken(forUser user: String, scopes: [String] = MockFacebookServer.defaultScopes,
                           lifetimeSeconds: Int? = nil) throws(MockFacebookError) -> AccessTokenRecord {
        guard let index = userIndex(idOrName: user) else { throw MockFacebookError("no fixture user \"\(user)\"") }
        let lifetime = lifetimeSeconds ?? configuration.tokenLifetimeSeconds
        guard lifetime >= 0 else { throw MockFacebookError("lifetime must be ≥ 0 seconds") }
        var granted = ["public_profile"]
        for scope in scopes where !granted.contains(scope) { granted.append(scope) }
        return state.issueToken(userIndex: index, scopes: granted, lifetimeSeconds: lifetime)
    }

    /// The token's record as it stands now (nil if the mock never issued it).
    public func tokenRecord(_ token: String) -> AccessTokenRecord? { state.token(token) }

    /// Makes the token expire now: Graph calls then fail with 190/463.
    /// - Returns: false for a token the mock never issued.
    @discardableResult
    public func expireToken(_ token: String) -> Bool {
        let now = WallClock.now()
        return state.updateToken(token) { $0.expiresAt = min($0.expiresAt, now) } != nil
    }

    /// Invalidates the token: 190/460 (`.passwordChanged`, the default), 190/467 (`.loggedOut`) or 190/458 (`.appRemoved`).
    /// - Returns: false for a token the mock never issued.
    @discardableResult
    public func revokeToken(_ token: String, reason: AccessTokenRecord.Invalidation = .passwordChanged) -> Bool {
        state.updateToken(token) { $0.invalidation = reason } != nil
    }

    /// Ends or makes a friendship at the provider (both directions).
    /// - Returns: true if something changed.
    /// - Throws: `MockFacebookError` for an unknown id or a user paired with themself.
    @discardableResult
    public func setFriendship(_ a: String, _ b: String, friends: Bool) throws(MockFacebookError) -> Bool {
        guard let i = fixture.indexByID[a] else { throw MockFacebookError("no fixture user \"\(a)\"") }
        guard let j = fixture.indexByID[b] else { throw MockFacebookError("no fixture user \"\(b)\"") }
        guard i != j else { throw MockFacebookError("a user cannot be their own friend") }
        return state.setFriendship(i, j, friends: friends)
    }

    /// Current friends of `id` (app users or not), in numeric id order; empty for an unknown id.
    public func friendIDs(of id: String) -> [String] {
        guard let i = fixture.indexByID[id] else { return [] }
        return state.world.withLock { $0.friends[i] }.map { fixture.users[$0].id }
    }

    /// Whether `id` currently counts as an app user (listed in friends' `/me/friends`).
    public func isAppUser(_ id: String) -> Bool {
        guard let i = fixture.indexByID[id] else { return false }
        return state.world.withLock { $0.appUsers[i] }
    }

    /// Sets whether `id` is an app user, without touching tokens.
    /// - Throws: `MockFacebookError` for an unknown id.
    public func setAppUser(_ id: String, _ value: Bool) throws(MockFacebookError) {
        guard let i = fixture.indexByID[id] else { throw MockFacebookError("no fixture user \"\(id)\"") }
        state.setAppUser(userIndex: i, value)
    }

    /// The user removes the app: their tokens fail with 190/458 and they stop being an app user.
    /// - Throws: `MockFacebookError` for an unknown id.
    public func removeApp(forUser id: String) throws(MockFacebookError) {
        guard let i = fixture.indexByID[id] else { throw MockFacebookError("no fixture user \"\(id)\"") }
        state.removeApp(userIndex: i)
    }

    /// Forgets all codes and tokens and restores the fixture's friendships and app users.
    public func reset() { state.reset() }
}
