import PhotoWallCore
import PhotoWallStorage

/// The photo wall's rules.
///
/// Ownership: a `WallImage` or `WallImageComment` belongs to the session's user. The server sets
/// `user` (Pointer to `_User`) and `userFBId` (the user's Facebook id, or their objectId when no
/// Facebook account is linked) on create; a client-supplied different value is refused, and the
/// owner can't be changed afterwards. New objects get the ACL "everyone reads, the owner writes".
///
/// Visibility (`Visibility.friends`, the default): an image and its comments are seen only by the
/// owner and the owner's friends — in GET, queries, counts and `include` (`readScopes`). A comment
/// records its image's owner (`imageUserFBId`) so this holds for comments too; you may comment only
/// on images you can see; you delete your own comments and the image's owner may delete any
/// comment on it (`deleteGrants`). The master key may do anything (seeding, admin).
///
/// Private users (whatever the wall's visibility; parse-server 7's `enforcePrivateUsers`): a
/// `_User` is seen in full (less its protected fields, `FieldPolicy.user`) by itself and the
/// master key. Its friends see `objectId`, `name` and `fbId` (`restrictedViews`), by GET, find and
/// count (`readScopes`). Anyone who may read a `WallImage` or `WallImageComment` sees the same three
/// fields of its author through `include=user` (`RestrictedView.revealedThrough`) and in the feed,
/// so a commenter's name shows under a friend's photo; a direct GET or find of that commenter still
/// follows the friends rule (101 / no result) when they aren't the viewer's friend, since the grant
/// comes from the post, not from the user. Strangers and anonymous callers see no user: find and
/// count return none, GET gives 101, and `include` of any other pointer leaves it a bare pointer.
public struct WallRules: Sendable {
    public enum Visibility: String, Sendable { case friends, `public` }

    let database: any ObjectStore
    let fileRecords: any FileRecordStore
    public let friends: FriendService?
    public let visibility: Visibility

    public init(database: any ObjectStore, fileRecords: any FileRecordStore, friends: FriendService?, visibility: Visibility = .friends) {
        self.database = database; self.fileRecords = fileRecords; self.friends = friends; self.visibility = visibility
    }

    /// The wall ids whose posts `user` may see (own and friends').
    public func audience(of user: StoredObject) throws(ParseError) -> [String] {
        try friends?.audience(of: user) ?? [Self.wallId(of: user)]
    }

    /// Whether `auth` may see posts whose owner's wall id is `ownerWallId`.
    public func canSee(ownerWallId: String, auth: AuthContext) throws(ParseError) -> Bool {
        if auth.isMaster || visibility == .public { return true }
        guard let user = auth.user else { return false }
        return try audience(of: user).contains(ownerWallId)
    }

    /// Read scopes for `ObjectService.Rules`: the wall classes' (friends visibility only) and the
    /// private users' (always): a caller reads itself and its friends, an anonymous caller nobody.
    public var readScopes: [String: ReadScope] {
        let rules = self
        let users: ReadScope = { auth throws(ParseError) in
            guard let user = auth.user else { return .inList("objectId", [], negated: false) }
            return .or([.compare("objectId", .eq, .string(user.objectId)),
                        .inList("fbId", try rules.audience(of: user).map { .string($0) }, negated: false)])
        }
        guard visibility == .friends else { return ["_User": users] }
        let scope: (String) -> ReadScope = { field in
            { auth throws(ParseError) in
                guard let user = auth.user else { return .inList(field, [], negated: false) }
                return .inList(field, try rules.audience(of: user).map { .string($0) }, negated: false)
            }
        }
        return ["WallImage": scope("userFBId"), "WallImageComment": scope("imageUserFBId"), "_User": users]
    }

    /// What the wall shows of a user to anyone but itself and the master key: its `objectId`, `name`
    /// and `fbId` (no `username`, `email`, `createdAt`, `updatedAt` or `ACL`), also through the
    /// server-set `user` of a post the caller may read.
    public static let publicUser = RestrictedView(fields: ["objectId", "name", "fbId"],
                                                  revealedThrough: ["WallImage.user", "WallImageComment.user"])

    /// Restricted views for `ObjectService.Rules`: private users.
    public var restrictedViews: [String: RestrictedView] { ["_User": Self.publicUser] }

    /// Delete grants for `ObjectService.Rules`: an image's owner may delete comments on it.
    public var deleteGrants: [String: DeleteGrant] {
        ["WallImageComment": { comment, auth throws(ParseError) in
            guard let user = auth.user, let owner = comment.fields["imageUserFBId"]?.stringValue else { return false }
            return owner == Self.wallId(of: user)
        }]
    }

    /// The `userFBId` the server records for `user`.
    public static func wallId(of user: StoredObject) -> String {
        user.fields["fbId"]?.stringValue ?? user.objectId
    }

    /// The client-writable fields of the wall classes and their types, created at start. Other
    /// fields need the master key (`ClassWriteRules.declaredFields`).
    public static let clientFields: [String: [String: FieldType]] = [
        "WallImage": ["image": .file, "caption": .string, "likes": .number],
        "WallImageComment": ["comment": .string, "imageObjectId": .string, "image": .pointer("WallImage")],
    ]

    /// The fields the server sets on the wall classes and their types.
    public static let serverFields: [String: [String: FieldType]] = [
        "WallImage": ["thumbnail": .file, "display": .file, "width": .number, "height": .number,
                      "user": .pointer("_User"), "userFBId": .string],
        "WallImageComment": ["user": .pointer("_User"), "userFBId": .string, "imageUserFBId": .string],
    ]

    /// What clients may write on `WallImage` and `WallImageComment` (for `ObjectService.Rules`):
    /// the server-owned fields (`serverFields`, plus `imageUserFBId` on both), a comment's
    /// `imageObjectId` fixed after create, and the declared schema.
    public var writeRules: [String: ClassWriteRules] {
        var out: [String: ClassWriteRules] = [:]
        for className in ["WallImage", "WallImageComment"] {
            out[className] = ClassWriteRules(
                serverOwned: Set(Self.serverFields[className]!.keys).union(["imageUserFBId"]),
                immutable: className == "WallImageComment" ? ["imageObjectId"] : [],
                declaredFields: Self.clientFields[className]!,
                createValues: { [self] body, auth throws(ParseError) in try serverValues(className, body: body, auth: auth) })
        }
        return out
    }

    /// The fields the server sets on a new wall object for a non-master caller (wire form):
    /// `user`, `userFBId`, and for a comment its image's owner `imageUserFBId`.
    /// - Throws: 209 without a user; 111 for a comment without `imageObjectId`; 101 when the
    ///   comment's image doesn't exist or the caller can't see it.
    func serverValues(_ className: String, body: [String: JSON], auth: AuthContext) throws(ParseError) -> [String: JSON] {
        guard let user = auth.user else { throw ParseError(.invalidSessionToken, "Session token required.") }
        var fields: [String: JSON] = [
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(user.objectId)],
            "userFBId": .string(Self.wallId(of: user)),
        ]
        if className == "WallImageComment" {
            guard let imageId = body["imageObjectId"] else { throw ParseError(.incorrectType, "A comment needs an imageObjectId.") }
            let image = try imageId.stringValue.flatMap { (id: String) throws(ParseError) -> StoredObject? in
                try database.find(StoredQuery(className: "WallImage", predicate: .compare("objectId", .eq, .string(id)),
                                              limit: 1, readers: nil)).first
            }
            // An image you can't see is reported as missing, as GET does.
            guard let image, let owner = image.fields["userFBId"]?.stringValue, try canSee(ownerWallId: owner, auth: auth) else {
                throw ParseError(.objectNotFound, "The image to comment on does not exist.")
            }
            fields["imageUserFBId"] = .string(owner)
        }
        return fields
    }

    /// The hook for `WallImage` and `WallImageComment`: on create, sets the server's fields
    /// (`serverValues`) and the default ACL "everyone reads, the owner writes". The write rules
    /// (`writeRules`) have already refused a client's different value for any of them.
    /// - Throws: 209 `Session token required.` without a user; 101 when a comment's image doesn't exist.
    public var hook: BeforeSaveHook {
        { [self] className, body, auth, original throws(ParseError) in
            if auth.isMaster { return SaveHookOutcome() }
            guard let user = auth.user else { throw ParseError(.invalidSessionToken, "Session token required.") }
            guard original == nil else { return SaveHookOutcome() }
            var fields = try serverValues(className, body: body, auth: auth)
            if body["ACL"] == nil {
                fields["ACL"] = ["*": ["read": true], .init(user.objectId): ["read": true, "write": true]]
            }
            return SaveHookOutcome(fields: fields)
        }
    }

    /// Clean-up after deletes (for `ObjectService.Rules.afterDelete`):
    /// - a `WallImage` takes its comments and its `image`, `thumbnail` and `display` files (records
    ///   and bytes; a file another photo also names stays);
    /// - a `_User` takes their photos (as above), their comments, and every other file they own.
    ///   (`UserService.delete` removes their sessions.)
    public func afterDelete(files: FileService, logger: Logger) -> [String: AfterDeleteHook] {
        let removePhoto: @Sendable (StoredObject) -> Void = { [database] image in
            do {
                _ = try database.deleteAll(className: "WallImageComment", predicate: .compare("imageObjectId", .eq, .string(image.objectId)))
            } catch {
                logger.warning("could not delete a photo's comments", ["objectId": image.objectId, "cause": "\(error)"])
            }
            let names = FileAccess.wallFileFields.compactMap { image.fields[$0]?["name"]?.stringValue }
            files.deleteUnreferenced(names, className: "WallImage", fields: FileAccess.wallFileFields, excluding: image.objectId, logger: logger)
        }
        return [
            "WallImage": { image, _ in removePhoto(image) },
            "_User": { [database] user, _ in
                let byUser = Predicate.compare("user", .eq, .pointer(className: "_User", objectId: user.objectId))
                do throws(ParseError) {
                    while true {
                        let photos = try database.find(StoredQuery(className: "WallImage", predicate: byUser, limit: 500, readers: nil))
                        if photos.isEmpty { break }
                        for photo in photos {
                            try database.delete(className: "WallImage", objectId: photo.objectId, writers: nil)
                            removePhoto(photo)
                        }
                    }
                    _ = try database.deleteAll(className: "WallImageComment", predicate: byUser)
                    while true {
                        let owned = try fileRecords.fileNames(ownedBy: user.objectId, limit: 500)
                        if owned.isEmpty { break }
                        for name in owned { _ = try fileRecords.deleteFile(named: name); _ = try? files.store.delete(name) }
                    }
                } catch {
                    logger.warning("could not delete a user's photos, comments or files", ["objectId": user.objectId, "cause": "\(error)"])
                }
            },
        ]
    }
}

/// Runs hooks in order, each seeing the body with the fields set by those before it; when one
/// fails, the ones that ran are undone.
public func chainHooks(_ hooks: [BeforeSaveHook]) -> BeforeSaveHook {
    let chained: BeforeSaveHook = { className, body, auth, original throws(ParseError) in
        try runHooks(hooks, className: className, body: body, auth: auth, original: original)
    }
    return chained
}

func runHooks(_ hooks: [BeforeSaveHook], className: String, body: [String: JSON], auth: AuthContext,
              original: StoredObject?) throws(ParseError) -> SaveHookOutcome {
    var body = body
    var fields: [String: JSON] = [:]
    var undos: [@Sendable () -> Void] = []
    var afters: [@Sendable () -> Void] = []
    for hook in hooks {
        let outcome: SaveHookOutcome
        do {
            outcome = try hook(className, body, auth, original)
        } catch {
            for u in undos.reversed() { u() }
            throw error
        }
        for (k, v) in outcome.fields { body[k] = v; fields[k] = v }
        if let u = outcome.undo { undos.append(u) }
        if let a = outcome.afterSave { afters.append(a) }
    }
    let all = undos, allAfter = afters
    let undoAll: @Sendable () -> Void = { for u in all.reversed() { u() } }
    let afterAll: @Sendable () -> Void = { for a in allAfter { a() } }
    let undo = all.isEmpty ? nil : undoAll
    let afterSave = allAfter.isEmpty ? nil : afterAll
    return SaveHookOutcome(fields: fields, undo: undo, afterSave: afterSave)
}
