import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

/// The photo wall's rules.
///
/// Ownership: a `WallImage` or `WallImageComment` belongs to the session's user. The server sets
/// `user` (Pointer to `_User`) and `userFBId` (the user's Facebook id, or their objectId when no
/// Facebook account is linked) on create; a client-supplied different value is refused, and the
/// owner can't be changed afterwards. New objects get the ACL "everyone reads, the owner writes".
///
/// Visibility (`Visibility.friends`, the default): an image and its comments are seen only by the
/// owner and the owner's friends — in GET, queries, counts and `include` (`readScope`). A comment
/// records its image's owner (`imageUserFBId`) so this holds for comments too; you may comment only
/// on images you can see; you delete your own comments and the image's owner may delete any
/// comment on it (`mayDelete`). The master key may do anything (seeding, admin).
///
/// Private users (whatever the wall's visibility; parse-server 7's `enforcePrivateUsers`): a
/// `_User` is seen in full (less its protected fields, `FieldPolicy.user`) by itself and the
/// master key. Its friends see `objectId`, `name` and `fbId` (`restrictedView(for:)`), by GET, find and
/// count (`readScope`). Anyone who may read a `WallImage` or `WallImageComment` sees the same three
/// fields of its author through `include=user` (`RestrictedView.revealedThrough`) and in the feed,
/// so a commenter's name shows under a friend's photo; a direct GET or find of that commenter still
/// follows the friends rule (101 / no result) when they aren't the viewer's friend, since the grant
/// comes from the post, not from the user. Strangers and anonymous callers see no user: find and
/// count return none, GET gives 101, and `include` of any other pointer leaves it a bare pointer.
public struct WallRules: Sendable {
    public enum Visibility: String, Sendable { case friends, `public` }

    let database: any ObjectStore
    public let friends: FriendService?
    public let visibility: Visibility

    public init(database: any ObjectStore, friends: FriendService?, visibility: Visibility = .friends) {
        self.database = database; self.friends = friends; self.visibility = visibility
    }

    /// The read scope of `className` (never asked for the master key): the wall classes' (friends
    /// visibility only) and the private users' (always): a caller reads itself and its friends, an
    /// anonymous caller nobody. nil for other classes.
    ///
    /// A user with a Facebook id gets `Predicate.friendOf` its id: the store checks the friend graph
    /// as the query runs (a GET probes one friendship; a find selects from the viewer's friend rows),
    /// so a read costs the same for 5,000 friends as for 50. The list is synced from the provider
    /// first when stale (`FriendService.refreshIfStale`). - Throws: what reading the sync time throws.
    public func readScope(className: String, auth: AuthContext) throws(ParseError) -> Predicate? {
        let field: String
        switch className {
        case "_User":
            guard let user = auth.user else { return .inList("objectId", [], negated: false) }
            return .or([.compare("objectId", .eq, .string(user.objectId)), try audienceScope("fbId", of: user)])
        case WallSchema.imageClass where visibility == .friends: field = WallSchema.authorField
        case WallSchema.commentClass where visibility == .friends: field = WallSchema.commentImageAuthorField
        default: return nil
        }
        guard let user = auth.user else { return .inList(field, [], negated: false) }
        return try audienceScope(field, of: user)
    }

    /// `field` is one of the wall ids `user` may see (its own and its friends'): `friendOf` the user's
    /// Facebook id, or without one (or without a friend graph) its own wall id only.
    func audienceScope(_ field: String, of user: StoredObject) throws(ParseError) -> Predicate {
        guard let friends, let fbId = user.fields["fbId"]?.stringValue else {
            return .compare(field, .eq, .string(Self.wallId(of: user)))
        }
        try friends.refreshIfStale(user)
        return .friendOf(field, FriendScope(viewer: fbId) { () throws(ParseError) -> [String] in try friends.audience(of: user) })
    }

    /// What the wall shows of a user to anyone but itself and the master key: its `objectId`, `name`
    /// and `fbId` (no `username`, `email`, `createdAt`, `updatedAt` or `ACL`), also through the
    /// server-set `user` of a post the caller may read.
    public static let publicUser = RestrictedView(fields: ["objectId", "name", "fbId"],
                                                  revealedThrough: [WallSchema.imageClass + ".user", WallSchema.commentClass + ".user"])

    /// Restricted views: private users.
    public func restrictedView(for className: String) -> RestrictedView? {
        className == "_User" ? Self.publicUser : nil
    }

    /// The delete grant: an image's owner may delete comments on it.
    public func mayDelete(_ object: StoredObject, auth: AuthContext) -> Bool {
        guard object.className == WallSchema.commentClass, let user = auth.user,
              let owner = object.fields[WallSchema.commentImageAuthorField]?.stringValue else { return false }
        return owner == Self.wallId(of: user)
    }

    /// The `userFBId` the server records for `user`.
    public static func wallId(of user: StoredObject) -> String {
        user.fields["fbId"]?.stringValue ?? user.objectId
    }

    /// What clients may write on `WallImage` and `WallImageComment`: the server-owned fields
    /// (`WallSchema.serverFields`, plus `imageUserFBId` on both), a comment's `imageObjectId` fixed
    /// after create, and the declared schema.
    public var writeRules: [String: ClassWriteRules] {
        var out: [String: ClassWriteRules] = [:]
        for className in [WallSchema.imageClass, WallSchema.commentClass] {
            out[className] = ClassWriteRules(
                serverOwned: Set(WallSchema.serverFields[className]!.keys).union([WallSchema.commentImageAuthorField]),
                immutable: className == WallSchema.commentClass ? [WallSchema.commentImageField] : [],
                declaredFields: WallSchema.clientFields[className]!,
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
            WallSchema.authorField: .string(Self.wallId(of: user)),
        ]
        if className == WallSchema.commentClass {
            guard let imageId = body[WallSchema.commentImageField] else { throw ParseError(.incorrectType, "A comment needs an imageObjectId.") }
            // Looked up as GET reads it: the caller's ACL readers and the class's read scope, so an image
            // the caller can't see is reported as missing.
            let scope = try readScope(className: WallSchema.imageClass, auth: auth)
            let image = try imageId.stringValue.flatMap { (id: String) throws(ParseError) -> StoredObject? in
                let byId = Predicate.compare("objectId", .eq, .string(id))
                return try database.find(StoredQuery(className: WallSchema.imageClass, predicate: scope.map { .and([byId, $0]) } ?? byId,
                                                     limit: 1, readers: auth.permissions)).first
            }
            guard let image, let owner = image.fields[WallSchema.authorField]?.stringValue else {
                throw ParseError(.objectNotFound, "The image to comment on does not exist.")
            }
            fields[WallSchema.commentImageAuthorField] = .string(owner)
        }
        return fields
    }

    /// The save hook of `WallImage` and `WallImageComment`: on create, sets the server's fields
    /// (`serverValues`) and the default ACL "everyone reads, the owner writes". The write rules
    /// (`writeRules`) have already refused a client's different value for any of them.
    /// - Throws: 209 `Session token required.` without a user; 101 when a comment's image doesn't exist.
    public func ownership(className: String, body: [String: JSON], auth: AuthContext, original: StoredObject?) throws(ParseError) -> SaveHookOutcome {
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
