import PhotoWallCore
import PhotoWallCrypto
import PhotoWallStorage

/// Users and sessions: sign-up with username and password, login, logout, session look-up,
/// and the rules for changing `_User` objects.
///
/// Passwords are stored only as bcrypt hashes in `_hashed_password` (parse-server's field).
/// Session tokens are `r:<32 hex>`; sessions live in `_Session` with `expiresAt`.
/// - Source: parse-rest-api.md §2 (rows 11–19), §6.
public final class UserService: Sendable {
    public let objects: ObjectService
    /// Identity providers by `authData` key (`facebook`).
    public let providers: [String: any IdentityProvider]
    let logger: Logger
    /// The object service's store (`_User`, `_Session`), for what the object rules don't cover.
    var database: any ObjectStore { objects.store }
    var config: ServerConfig { objects.config }

    /// `GET /sessions`: the caller's own sessions (every session with the master key), found with `options`.
    /// - Throws: 209 without a session; what `ObjectService.find` throws.
    public func findSessions(options: FindOptions, auth: AuthContext) throws(ParseError) -> JSON {
        var extra: Predicate?
        if !auth.isMaster {
            guard let uid = auth.userId else { throw ParseError(.invalidSessionToken, "Session token required.") }
            extra = .compare("user", .eq, .pointer(className: "_User", objectId: uid))
        }
        return try objects.find(className: "_Session", options: options, auth: auth, extraPredicate: extra)
    }

    public init(objects: ObjectService, providers: [String: any IdentityProvider] = [:],
                logger: Logger = Logger(label: "users")) throws(ParseError) {
        self.objects = objects
        self.providers = providers
        self.logger = logger
        try database.ensureClass("_User", fields: ["username": .string, "email": .string, "authData": .object, "fbId": .string, "name": .string],
                                 indexedFields: ["fbId"], uniqueFields: ["username", "email", "authData.facebook.id"])
        try database.ensureClass("_Session", fields: ["sessionToken": .string, "user": .pointer("_User"), "expiresAt": .date,
                                                      "createdWith": .object, "installationId": .string],
                                 indexedFields: ["user.objectId"], uniqueFields: ["sessionToken"])
    }

    // MARK: sessions

    /// Resolves a session token to its user: the one place every route's session look-up goes
    /// through, served from `objects.sessionCache` while fresh (every write of a session or user in
    /// this process invalidates it at once; see `SessionCache`).
    /// - Throws: 209 `Invalid session token` (unknown token or deleted user) or `Session token is expired.`
    public func authenticate(sessionToken: String) throws(ParseError) -> AuthContext {
        let cache = objects.sessionCache
        if let cached = cache.lookup(sessionToken) { return cached }
        let generation = cache.generation()
        let (auth, sessionObjectId, expiresAt) = try readSession(sessionToken)
        cache.store(sessionToken, auth, sessionObjectId: sessionObjectId, expiresAt: expiresAt, generation: generation)
        return auth
    }

    /// `authenticate` from the database: the session, its expiry and its user.
    func readSession(_ sessionToken: String) throws(ParseError) -> (AuthContext, sessionObjectId: String, expiresAt: ParseDate?) {
        guard let session = try database.find(StoredQuery(className: "_Session",
                                                           predicate: .compare("sessionToken", .eq, .string(sessionToken)),
                                                           limit: 1, readers: nil)).first else {
            throw ParseError.invalidSessionToken()
        }
        let expiresAt = session.fields["expiresAt"].flatMap { ParseDate(json: $0) }
        if let exp = expiresAt, exp < ParseDate.now() {
            throw ParseError(.invalidSessionToken, "Session token is expired.")
        }
        guard let userId = session.fields["user"]?["objectId"]?.stringValue,
              let user = try objects.fetchStored(className: "_User", objectId: userId) else {
            throw ParseError.invalidSessionToken()
        }
        let auth = AuthContext(isMaster: false, user: user, sessionToken: sessionToken,
                               installationId: session.fields["installationId"]?.stringValue)
        return (auth, session.objectId, expiresAt)
    }

    /// Creates a session for a user and publishes its `create` (`ObjectEventBus`). - Returns: the new `r:<32 hex>` token.
    public func createSession(userId: String, action: String, authProvider: String, installationId: String?) throws(ParseError) -> String {
        let token = "r:" + Crypto.randomBytes(16).hexString
        let now = ParseDate.now()
        var fields: [String: JSON] = [
            "sessionToken": .string(token),
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(userId)],
            "createdWith": ["action": .string(action), "authProvider": .string(authProvider)],
            "expiresAt": ParseDate(millisecondsSince1970: now.millisecondsSince1970 + config.sessionLengthSeconds * 1000).json,
        ]
        if let installationId { fields["installationId"] = .string(installationId) }
        let session = StoredObject(className: "_Session", objectId: ParseIdentifier.alphanumeric(10), createdAt: now,
                                   updatedAt: now, fields: fields, acl: .privateTo(userId))
        try database.insert(session)
        // A `create` for LiveQuery subscriptions to `_Session`, as parse-server's RestWrite raises for a
        // live class (its sessions are saved through RestWrite too); by `_Session`'s ACL only the user
        // (and the master key) sees it.
        objects.events.publish(.saved(original: nil, current: session))
        return token
    }

    /// Deletes the caller's session (`POST /logout`).
    /// - Throws: 209 when the request carries no valid session.
    public func logout(auth: AuthContext) throws(ParseError) {
        guard let token = auth.sessionToken else { throw ParseError(.invalidSessionToken, "Session token required.") }
        _ = try database.deleteAll(className: "_Session", predicate: .compare("sessionToken", .eq, .string(token)))
        if let userId = auth.userId { objects.events.publish(.sessionsEnded(userId: userId, sessionToken: token)) }
    }

    /// `GET /sessions/me`. - Throws: 209 `Session token required.` without a session.
    public func currentSession(auth: AuthContext) throws(ParseError) -> [String: JSON] {
        guard let token = auth.sessionToken else { throw ParseError(.invalidSessionToken, "Session token required.") }
        guard let s = try database.find(StoredQuery(className: "_Session", predicate: .compare("sessionToken", .eq, .string(token)),
                                                    limit: 1, readers: nil)).first else {
            throw ParseError(.invalidSessionToken, "Session token not found.")
        }
        var w = objects.wireObject(s, auth: auth)
        w["sessionToken"] = .string(token)
        return w
    }

    // MARK: sign-up and login

    /// `POST /users` with `username` and `password` (other fields allowed; the server-owned ones of
    /// `ClassWriteRules.user` are refused, as on every client write).
    /// - Returns: `{objectId, createdAt, sessionToken}`.
    /// - Throws: 200 missing username, 201 missing password, 202 username taken, 203 email taken,
    ///   252 for `authData` of a provider this server does not support, 105/111 for bad fields,
    ///   119 for a server-owned field (`fbId`, `name`, `emailVerified`, `sessionToken`).
    public func signUp(body: [String: JSON], auth: AuthContext) throws(ParseError) -> (objectId: String, response: [String: JSON], created: Bool) {
        var body = body
        if let authData = body["authData"] {
            return try logIn(authData: authData, auth: auth)
        }
        guard let username = body["username"]?.stringValue, !username.isEmpty else {
            throw ParseError(.usernameMissing, "bad or missing username")
        }
        guard let password = body["password"]?.stringValue, !password.isEmpty else {
            throw ParseError(.passwordMissing, "password is required.")
        }
        if let email = body["email"] {
            guard let e = email.stringValue, Self.isEmail(e) else { throw ParseError(.invalidEmailAddress, "Email address format is invalid.") }
        }
        body["password"] = nil
        try checkUnique(username: username, email: body["email"]?.stringValue, excluding: nil)
        let hash: String
        do { hash = try PasswordHasher.hash(password) } catch { throw ParseError.internalError(error) }
        let created: CreateResult
        do {
            created = try objects.create(className: "_User", body: body, auth: .master,
                                         internalFields: ["_hashed_password": .string(hash)],
                                         defaultACL: nil, writtenBy: auth)
        } catch ParseError.Code.duplicateValue {
            throw ParseError(.usernameTaken, "Account already exists for this username.")
        }
        // Public read, owner write, unless the client set an ACL.
        if body["ACL"] == nil {
            _ = try database.update(className: "_User", objectId: created.objectId, writers: nil) { (o: inout StoredObject) throws(ParseError) in
                o.acl = ACL(entries: ["*": .init(read: true, write: false), created.objectId: .init(read: true, write: true)])
            }
        }
        let token = try createSession(userId: created.objectId, action: "signup", authProvider: "password", installationId: auth.installationId)
        return (created.objectId, ["objectId": .string(created.objectId), "createdAt": .string(created.createdAt.iso), "sessionToken": .string(token)], true)
    }

    // MARK: authData (Facebook)

    /// The single provider entry of an `authData` body, validated with its provider.
    /// - Throws: 252 for a provider without `id`, `null`, or not configured; what the provider throws.
    func validateAuthData(_ authData: JSON) throws(ParseError) -> (provider: any IdentityProvider, data: [String: JSON], profile: ProviderProfile) {
        let unsupported = ParseError(.unsupportedService, "This authentication method is unsupported.")
        guard let entries = authData.objectValue, entries.count == 1, let (key, value) = entries.first,
              let data = value.objectValue, data["id"]?.stringValue?.isEmpty == false,
              let provider = providers[key] else { throw unsupported }
        return (provider, data, try provider.validate(data))
    }

    /// `POST /users` with `authData`: signs up (201) or logs in (200), after the provider confirmed
    /// the token. Both answer the user as its owner sees it (a random 25-character `username` on
    /// sign-up, `fbId`, `name`, `objectId`, `createdAt`, `updatedAt`, `ACL`; never `authData`) plus
    /// `sessionToken`. The user's `fbId` and `name` come from the provider, never from the client;
    /// friends are synced.
    /// - Throws: 208 when the id is linked to another user than the caller's session; 252; 101; 141.
    /// - Source: parse-rest-api.md §6 ("Sign-up or login with authData").
    func logIn(authData: JSON, auth: AuthContext) throws(ParseError) -> (objectId: String, response: [String: JSON], created: Bool) {
        let (provider, data, profile) = try validateAuthData(authData)
        let matches = try database.find(StoredQuery(className: "_User",
                                                    predicate: .compare("authData.\(provider.name).id", .eq, .string(profile.id)),
                                                    limit: 2, readers: nil))
        if matches.count > 1 { throw ParseError(.accountAlreadyLinked, "this auth is already used") }
        if let current = auth.user, let m = matches.first, m.objectId != current.objectId {
            throw ParseError(.accountAlreadyLinked, "this auth is already used")
        }
        var stored = data
        stored["id"] = .string(profile.id)
        if let existing = matches.first {
            let user = try database.update(className: "_User", objectId: existing.objectId, writers: nil) { (o: inout StoredObject) throws(ParseError) in
                var all = o.fields["authData"]?.objectValue ?? [:]
                all[provider.name] = .object(stored)
                o.fields["authData"] = .object(all)
                o.fields["fbId"] = .string(profile.id)
                if let name = profile.name { o.fields["name"] = .string(name) }
                o.updatedAt = ParseDate.now()
            }
            objects.events.publish(.saved(original: existing, current: user))
            let token = try createSession(userId: user.objectId, action: "login", authProvider: provider.name, installationId: auth.installationId)
            syncFriends(provider: provider, data: data, fbId: profile.id)
            var w = objects.wireObject(user, auth: AuthContext(user: user, sessionToken: token))
            w["sessionToken"] = .string(token)
            return (user.objectId, w, false)
        }
        var fields: [String: JSON] = ["authData": .object([provider.name: .object(stored)]), "fbId": .string(profile.id),
                                      "username": .string(ParseIdentifier.alphanumeric(25))]
        if let name = profile.name { fields["name"] = .string(name) }
        let now = ParseDate.now()
        let id = ParseIdentifier.alphanumeric(10)
        let user = StoredObject(className: "_User", objectId: id, createdAt: now, updatedAt: now, fields: fields,
                                acl: ACL(entries: ["*": .init(read: true, write: false), id: .init(read: true, write: true)]))
        do {
            try database.insert(user)
        } catch {
            // Two first logins racing: the unique index on authData.<provider>.id lets one win.
            if error.code == .duplicateValue { throw ParseError(.accountAlreadyLinked, "this auth is already used") }
            throw error
        }
        objects.events.publish(.saved(original: nil, current: user))
        let token = try createSession(userId: id, action: "login", authProvider: provider.name, installationId: auth.installationId)
        syncFriends(provider: provider, data: data, fbId: profile.id)
        // Every field the server set (fbId, name, username, …), as the 200 login answers, so an SDK
        // merging this 201 into its current user has them from the start.
        var w = objects.wireObject(user, auth: AuthContext(user: user, sessionToken: token))
        w["sessionToken"] = .string(token)
        return (id, w, true)
    }

    /// Links or unlinks a provider on `PUT /users/:id` (`{"authData":{"facebook":{…}}}` or `…:null`).
    func changeAuthData(userId: String, authData: JSON) throws(ParseError) -> [String: JSON?] {
        guard let entries = authData.objectValue, entries.count == 1, let (key, value) = entries.first else {
            throw ParseError(.unsupportedService, "This authentication method is unsupported.")
        }
        if value.isNull {
            guard providers[key] != nil else { throw ParseError(.unsupportedService, "This authentication method is unsupported.") }
            guard let user = try objects.fetchStored(className: "_User", objectId: userId) else { throw ParseError.objectNotFound() }
            var all = user.fields["authData"]?.objectValue ?? [:]
            all[key] = nil
            // `Optional<JSON>.none` removes a field (a bare `nil` would become JSON null).
            let remaining: JSON? = all.isEmpty ? Optional<JSON>.none : .object(all)
            let fbId: JSON? = key == "facebook" ? Optional<JSON>.none : user.fields["fbId"]
            return ["authData": remaining, "fbId": fbId]
        }
        let (provider, data, profile) = try validateAuthData(authData)
        let others = try database.find(StoredQuery(className: "_User", predicate: .compare("authData.\(provider.name).id", .eq, .string(profile.id)),
                                                   limit: 2, readers: nil))
        if others.contains(where: { $0.objectId != userId }) { throw ParseError(.accountAlreadyLinked, "this auth is already used") }
        guard let user = try objects.fetchStored(className: "_User", objectId: userId) else { throw ParseError.objectNotFound() }
        var all = user.fields["authData"]?.objectValue ?? [:]
        var stored = data
        stored["id"] = .string(profile.id)
        all[provider.name] = .object(stored)
        syncFriends(provider: provider, data: data, fbId: profile.id)
        var changes: [String: JSON?] = ["authData": .object(all), "fbId": .string(profile.id)]
        if let name = profile.name { changes["name"] = .string(name) }
        return changes
    }

    // MARK: friends

    /// Tells the installed extension that a provider confirmed this identity (the wall syncs the friend list).
    func syncFriends(provider: any IdentityProvider, data: [String: JSON], fbId: String) {
        objects.identityConfirmed(provider: provider, authData: data, providerUserId: fbId)
    }

    /// `GET|POST /login`. - Returns: the full user plus `sessionToken`.
    /// - Throws: 200 `username/email is required.`, 201 `password is required.`, 101 `Invalid username/password.`
    public func logIn(username: String?, email: String?, password: String?, installationId: String?) throws(ParseError) -> [String: JSON] {
        guard (username ?? email).map({ !$0.isEmpty }) == true else { throw ParseError(.usernameMissing, "username/email is required.") }
        guard let password, !password.isEmpty else { throw ParseError(.passwordMissing, "password is required.") }
        let predicate: Predicate = username.map { .compare("username", .eq, .string($0)) } ?? .compare("email", .eq, .string(email ?? ""))
        let invalid = ParseError(.objectNotFound, "Invalid username/password.")
        guard let user = try database.find(StoredQuery(className: "_User", predicate: predicate, limit: 1, readers: nil)).first else {
            _ = PasswordHasher.verify(password, hash: Self.dummyHash)  // same cost whether or not the user exists
            throw invalid
        }
        guard let hash = user.fields["_hashed_password"]?.stringValue, PasswordHasher.verify(password, hash: hash) else { throw invalid }
        let token = try createSession(userId: user.objectId, action: "login", authProvider: "password", installationId: installationId)
        var w = objects.wireObject(user, auth: AuthContext(user: user, sessionToken: token))
        w["sessionToken"] = .string(token)
        return w
    }

    /// A valid bcrypt hash of a random password, verified against when the user is unknown.
    static let dummyHash = (try? PasswordHasher.hash(ParseIdentifier.hex())) ?? ""

    /// `GET /users/me`. - Throws: 209 without a valid session.
    public func me(auth: AuthContext) throws(ParseError) -> [String: JSON] {
        guard let user = auth.user, let token = auth.sessionToken else { throw ParseError.invalidSessionToken() }
        var w = objects.wireObject(user, auth: auth)
        w["sessionToken"] = .string(token)
        return w
    }

    // MARK: changing users

    /// `PUT /users/:id`: only the user or the master key; a new `password` is hashed and other
    /// sessions of the user are revoked. `authData` different from the stored one links or unlinks
    /// a provider (the only way `authData`, `fbId` and `name` change); the other server-owned fields
    /// follow `ClassWriteRules.user` (an equal value, e.g. a whole user sent back, is accepted).
    /// - Throws: 206 `Cannot modify user X.`, 202/203 for taken names, 101, 119 for a changed server-owned field.
    public func update(userId: String, body: [String: JSON], auth: AuthContext) throws(ParseError) -> (ParseDate, [String: JSON]) {
        guard auth.isMaster || auth.userId == userId else { throw ParseError(.sessionMissing, "Cannot modify user \(userId).") }
        var body = body
        var hidden: [String: JSON?] = [:]
        if let p = body["password"] {
            guard let pw = p.stringValue, !pw.isEmpty else { throw ParseError(.passwordMissing, "password is required.") }
            do { hidden["_hashed_password"] = .string(try PasswordHasher.hash(pw)) } catch { throw ParseError.internalError(error) }
            body["password"] = nil
        }
        if let authData = body["authData"] {
            // Sent back unchanged (a whole-object save) it is no link: the write rules drop it.
            let stored = try objects.fetchStored(className: "_User", objectId: userId)?.fields["authData"]
            if try !objects.sameValue(authData, stored) {
                for (k, v) in try changeAuthData(userId: userId, authData: authData) { hidden[k] = v }
                body["authData"] = nil
            }
        }
        // The session token is the caller's, not a field of the user: only the caller's own is accepted (and ignored).
        if let token = body["sessionToken"] {
            guard auth.isMaster || token.stringValue == auth.sessionToken else {
                throw ParseError(.operationForbidden, "_User.sessionToken is set by the server and can't be changed.")
            }
            body["sessionToken"] = nil
        }

        if let u = body["username"] {
            guard let s = u.stringValue, !s.isEmpty else { throw ParseError(.usernameMissing, "bad or missing username") }
        }
        if let e = body["email"], !e.isNull {
            guard let s = e.stringValue, Self.isEmail(s) else { throw ParseError(.invalidEmailAddress, "Email address format is invalid.") }
        }
        try checkUnique(username: body["username"]?.stringValue, email: body["email"]?.stringValue, excluding: userId)
        let result: (ParseDate, [String: JSON])
        do {
            result = try objects.update(className: "_User", objectId: userId, body: body, auth: .master, internalFields: hidden,
                                        writtenBy: auth)
        } catch ParseError.Code.duplicateValue {
            throw ParseError(.usernameTaken, "Account already exists for this username.")
        }
        if hidden["_hashed_password"] != nil {
            let keep = auth.sessionToken ?? ""
            _ = try database.deleteAll(className: "_Session", predicate: .and([
                .compare("user", .eq, .pointer(className: "_User", objectId: userId)),
                .compare("sessionToken", .ne, .string(keep)),
            ]))
            objects.events.publish(.sessionsEnded(userId: userId, sessionToken: nil))
        }
        return result
    }

    /// `DELETE /users/:id`: only the user or the master key; the user's sessions go too, then what
    /// the `_User` after-delete hook removes (on the wall: their photos, comments and files).
    public func delete(userId: String, auth: AuthContext) throws(ParseError) {
        guard auth.isMaster || auth.userId == userId else { throw ParseError(.sessionMissing, "Insufficient auth to delete user") }
        let user = try objects.fetchStored(className: "_User", objectId: userId)
        try database.delete(className: "_User", objectId: userId, writers: nil)
        _ = try database.deleteAll(className: "_Session", predicate: .compare("user", .eq, .pointer(className: "_User", objectId: userId)))
        objects.events.publish(.sessionsEnded(userId: userId, sessionToken: nil))
        if let user { objects.afterDeleted(user, auth: auth) }
    }

    func checkUnique(username: String?, email: String?, excluding: String?) throws(ParseError) {
        if let username {
            let found = try database.find(StoredQuery(className: "_User", predicate: .compare("username", .eq, .string(username)), limit: 1, readers: nil))
            if let f = found.first, f.objectId != excluding { throw ParseError(.usernameTaken, "Account already exists for this username.") }
        }
        if let email {
            let found = try database.find(StoredQuery(className: "_User", predicate: .compare("email", .eq, .string(email)), limit: 1, readers: nil))
            if let f = found.first, f.objectId != excluding { throw ParseError(.emailTaken, "Account already exists for this email address.") }
        }
    }

    static func isEmail(_ s: String) -> Bool {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !s.contains(" ")
    }
}
