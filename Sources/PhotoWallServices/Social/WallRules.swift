import PhotoWallCore
import PhotoWallStorage

/// Ownership rules of the photo wall's classes: a `WallImage` or `WallImageComment` belongs to the
/// session's user. The server sets `user` (Pointer to `_User`) and `userFBId` (the user's
/// Facebook id, or their objectId when no Facebook account is linked) on create; a client-supplied
/// different value is refused, and the owner can't be changed afterwards. A comment's
/// `imageObjectId` must name an existing `WallImage`. The master key may set anything (seeding, admin).
public struct WallRules: Sendable {
    let database: any DatabaseAdapter

    public init(database: any DatabaseAdapter) { self.database = database }

    /// The `userFBId` the server records for `user`.
    public static func wallId(of user: StoredObject) -> String {
        user.fields["fbId"]?.stringValue ?? user.objectId
    }

    /// The hook for `WallImage` and `WallImageComment`.
    /// - Throws: 209 `Session token required.` without a user; 119 when `user` or `userFBId` names
    ///   someone else or would change the owner; 101 when a comment's image doesn't exist.
    public var hook: BeforeSaveHook {
        { [database] className, body, auth, isNew throws(ParseError) in
            if auth.isMaster { return SaveHookOutcome() }
            guard let user = auth.user else { throw ParseError(.invalidSessionToken, "Session token required.") }
            let fbId = Self.wallId(of: user)
            if let sent = body["userFBId"], sent.stringValue != fbId {
                throw ParseError(.operationForbidden, "userFBId must be the session user's (\(fbId)).")
            }
            if let sent = body["user"], !(sent.parseType == "Pointer" && sent["className"] == "_User" && sent["objectId"]?.stringValue == user.objectId) {
                throw ParseError(.operationForbidden, "user must be a pointer to the session user.")
            }
            if className == "WallImageComment", let imageId = body["imageObjectId"] {
                guard let id = imageId.stringValue,
                      try !database.find(StoredQuery(className: "WallImage", predicate: .compare("objectId", .eq, .string(id)),
                                                     limit: 1, readers: nil)).isEmpty else {
                    throw ParseError(.objectNotFound, "The image to comment on does not exist.")
                }
            } else if className == "WallImageComment", isNew {
                throw ParseError(.incorrectType, "A comment needs an imageObjectId.")
            }
            guard isNew else { return SaveHookOutcome() }
            return SaveHookOutcome(fields: [
                "user": ["__type": "Pointer", "className": "_User", "objectId": .string(user.objectId)],
                "userFBId": .string(fbId),
            ])
        }
    }
}

/// Runs hooks in order, each seeing the body with the fields set by those before it; when one
/// fails, the ones that ran are undone.
public func chainHooks(_ hooks: [BeforeSaveHook]) -> BeforeSaveHook {
    let chained: BeforeSaveHook = { className, body, auth, isNew throws(ParseError) in
        try runHooks(hooks, className: className, body: body, auth: auth, isNew: isNew)
    }
    return chained
}

func runHooks(_ hooks: [BeforeSaveHook], className: String, body: [String: JSON], auth: AuthContext,
              isNew: Bool) throws(ParseError) -> SaveHookOutcome {
    var body = body
    var fields: [String: JSON] = [:]
    var undos: [@Sendable () -> Void] = []
    for hook in hooks {
        let outcome: SaveHookOutcome
        do {
            outcome = try hook(className, body, auth, isNew)
        } catch {
            for u in undos.reversed() { u() }
            throw error
        }
        for (k, v) in outcome.fields { body[k] = v; fields[k] = v }
        if let u = outcome.undo { undos.append(u) }
    }
    if undos.isEmpty { return SaveHookOutcome(fields: fields) }
    let all = undos
    let undo: @Sendable () -> Void = { for u in all.reversed() { u() } }
    return SaveHookOutcome(fields: fields, undo: undo)
}
