import PhotoWallCore
import PhotoWallHTTP

/// TEST-ONLY endpoints under `/__control` (never part of Graph; no authentication; turn off with
/// `Configuration.enableControlEndpoints = false` or `--no-control`). Parameters come from the query,
/// a form body or a JSON body. Errors: `{"error":{"message","type":"MockControlException","code"}}`
/// with HTTP 400 (bad input) or 404 (unknown user or token).
///
/// | Method and path | Effect | Answer |
/// |---|---|---|
/// | `GET /__control` | this list | `{"endpoints":[…]}` |
/// | `POST /__control/login` `{user_id｜userId｜name, scope?, expires_in?}` | mint a token (no dialog) | `{"access_token","token_type","expires_in","user_id","name","scopes"}` |
/// | `GET /__control/tokens/{token}` | inspect | `{"token":{…,"status"}}` |
/// | `POST /__control/tokens/{token}/expire` | expire now → 190/463 | `{"success":true,"token":{…}}` |
/// | `POST /__control/tokens/{token}/revoke` `{subcode?: 460｜467｜458}` | invalidate → 190/460 (default) | same |
/// | `POST /__control/tokens/{token}/logout` | invalidate → 190/467 | same |
/// | `DELETE /__control/friendships/{a}/{b}` | end a friendship (both ways) | `{"success":true,"changed":Bool}` |
/// | `PUT /__control/friendships/{a}/{b}` | make a friendship | same |
/// | `GET /__control/users` | every user with `app_user`, `friend_count` | `{"data":[…]}` |
/// | `GET /__control/users/{id}` | one user with all current `friends` | `{…}` |
/// | `POST /__control/users/{id}/app-user` `{app_user: Bool}` | set app-user status | `{"success":true}` |
/// | `POST /__control/users/{id}/remove-app` | tokens → 190/458, not an app user | `{"success":true}` |
/// | `POST /__control/reset` | forget tokens and codes, restore the fixture | `{"success":true}` |
extension MockFacebookServer {
    static let controlEndpoints: [String] = [
        "GET /__control",
        "POST /__control/login {user_id|userId|name, scope?, expires_in?}",
        "GET /__control/tokens/{token}",
        "POST /__control/tokens/{token}/expire",
        "POST /__control/tokens/{token}/revoke {subcode?: 460|467|458}",
        "POST /__control/tokens/{token}/logout",
        "DELETE /__control/friendships/{a}/{b}",
        "PUT /__control/friendships/{a}/{b}",
        "GET /__control/users",
        "GET /__control/users/{id}",
        "POST /__control/users/{id}/app-user {app_user: true|false}",
        "POST /__control/users/{id}/remove-app",
        "POST /__control/reset",
    ]

    func control(_ call: GraphCall, _ path: [String]) throws(GraphError) -> Response {
        switch (call.method, path.count) {
        case ("GET", 0):
            return .json(["note": "TEST-ONLY controls of the mock Facebook provider; not part of the Graph API.",
                          "endpoints": .array(MockFacebookServer.controlEndpoints.map { .string($0) })])
        case ("POST", 1) where path[0] == "login":
            return try controlLogin(call)
        case ("POST", 1) where path[0] == "reset":
            reset()
            return .json(["success": true])
        case ("GET", 2) where path[0] == "tokens":
            return .json(["token": try tokenJSON(path[1])])
        case ("POST", 3) where path[0] == "tokens":
            return try controlToken(call, token: path[1], action: path[2])
        case ("PUT", 3) where path[0] == "friendships", ("DELETE", 3) where path[0] == "friendships":
            do {
                let changed = try setFriendship(path[1], path[2], friends: call.method == "PUT")
                return .json(["success": true, "changed": .bool(changed)])
            } catch {
                throw controlError(error.message, status: fixture.indexByID[path[1]] == nil || fixture.indexByID[path[2]] == nil ? 404 : 400)
            }
        case ("GET", 1) where path[0] == "users":
            let (friends, appUsers) = state.world.withLock { ($0.friends, $0.appUsers) }
            return .json(["data": .array(fixture.users.indices.map { i in
                ["id": .string(fixture.users[i].id), "name": .string(fixture.users[i].name),
                 "app_user": .bool(appUsers[i]), "friend_count": .number(Double(friends[i].count))]
            })])
        case ("GET", 2) where path[0] == "users":
            guard let user = fixture.user(id: path[1]) else { throw controlError("no fixture user \"\(path[1])\"", status: 404) }
            return .json(["id": .string(user.id), "name": .string(user.name), "app_user": .bool(isAppUser(user.id)),
                          "friends": .array(friendIDs(of: user.id).map { .string($0) })])
        case ("POST", 3) where path[0] == "users" && path[2] == "app-user":
            guard let value = call.parameter("app_user").flatMap({ ["true": true, "false": false][$0] }) else {
                throw controlError("app_user must be true or false", status: 400)
            }
            do { try setAppUser(path[1], value) } catch { throw controlError(error.message, status: 404) }
            return .json(["success": true])
        case ("POST", 3) where path[0] == "users" && path[2] == "remove-app":
            do { try removeApp(forUser: path[1]) } catch { throw controlError(error.message, status: 404) }
            return .json(["success": true])
        default:
            throw controlError("unknown control endpoint \(call.method) /__control/\(path.joined(separator: "/")); GET /__control lists them", status: 404)
        }
    }

    private func controlLogin(_ call: GraphCall) throws(GraphError) -> Response {
        guard let who = call.parameter("user_id") ?? call.parameter("userId") ?? call.parameter("name"), !who.isEmpty else {
            throw controlError("give user_id (or userId, or name)", status: 400)
        }
        var scopes = MockFacebookServer.defaultScopes
        if let text = call.parameter("scope") {
            scopes = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        }
        var lifetime: Int?
        if let text = call.parameter("expires_in") {
            guard let n = Int(text), n >= 0 else { throw controlError("expires_in must be a whole number of seconds ≥ 0", status: 400) }
            lifetime = n
        }
        let record: AccessTokenRecord
        do { record = try issueToken(forUser: who, scopes: scopes, lifetimeSeconds: lifetime) } catch {
            throw controlError(error.message, status: 404)
        }
        let user = fixture.user(id: record.userID)!
        return .json(["access_token": .string(record.token), "token_type": "bearer",
                      "expires_in": .number(Double(record.expiresAt - record.issuedAt)),
                      "user_id": .string(user.id), "name": .string(user.name), "scopes": .array(record.scopes.map { .string($0) })])
    }

    private func controlToken(_ call: GraphCall, token: String, action: String) throws(GraphError) -> Response {
        let found: Bool
        switch action {
        case "expire":
            found = expireToken(token)
        case "revoke":
            var reason = AccessTokenRecord.Invalidation.passwordChanged
            if let text = call.parameter("subcode") {
                guard let code = Int(text), let r = AccessTokenRecord.Invalidation(subcode: code) else {
                    throw controlError("subcode must be 460, 467 or 458", status: 400)
                }
                reason = r
            }
            found = revokeToken(token, reason: reason)
        case "logout":
            found = revokeToken(token, reason: .loggedOut)
        default:
            throw controlError("unknown token action \"\(action)\" (expire, revoke, logout)", status: 404)
        }
        guard found else { throw controlError("unknown token", status: 404) }
        return .json(["success": true, "token": try tokenJSON(token)])
    }

    private func tokenJSON(_ token: String) throws(GraphError) -> JSON {
        guard let record = tokenRecord(token) else { throw controlError("unknown token", status: 404) }
        let status: String
        if let reason = record.invalidation {
            switch reason {
            case .passwordChanged: status = "revoked"
            case .loggedOut: status = "logged_out"
            case .appRemoved: status = "app_removed"
            }
        } else {
            status = WallClock.now() >= record.expiresAt ? "expired" : "valid"
        }
        var object: [String: JSON] = ["user_id": .string(record.userID), "scopes": .array(record.scopes.map { .string($0) }),
                                      "issued_at": .number(Double(record.issuedAt)), "expires_at": .number(Double(record.expiresAt)),
                                      "status": .string(status)]
        if let reason = record.invalidation { object["error_subcode"] = .number(Double(reason.subcode)) }
        return .object(object)
    }

    private func controlError(_ message: String, status: Int) -> GraphError {
        GraphError(message: message, type: "MockControlException", code: status == 404 ? 803 : 100, status: status)
    }
}
