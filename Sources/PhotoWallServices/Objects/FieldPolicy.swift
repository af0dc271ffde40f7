import PhotoWallCore
import PhotoWallStorage

/// Who may read and query the fields of one class: declared once per class, applied by
/// `ObjectService` on every read path (GET, find, count, `include` at every depth, batch and
/// `_method`, which all reach it), never by a route.
///
/// - Reading: a protected field is left out of every object a caller may not see it in
///   (results, `include` targets, `/users/me`, login responses); `keys` can't bring it back.
/// - Querying: a `where` (at any depth of `$or`/`$and`/`$nor`, dotted paths by their first part)
///   or an `order` naming a field the caller may not query is refused with 119
///   `This user is not allowed to query <field> on class <className>` (`… to sort by …` for
///   `order`), never answered as "no match": a `$regex` or `order` on a hidden field is an
///   oracle that reads it out one character at a time.
/// - Every class: `_`-prefixed internal columns (`_hashed_password`, `_rperm`, …) are never
///   rendered, and `QueryParser` refuses them as keys (105 `Invalid key name`, as parse-server's
///   `validateQuery` does for non-master queries).
///
/// The master key bypasses all of it.
/// - Source: parse-server `RestQuery.denyProtectedFields` (119 `This user is not allowed to query
///   ${key} on class ${className}`, extended to `$or`/`$and`/`$nor` and dot notation by
///   GHSA-72hp-qff8-4pvv and GHSA-r2m8-pxm9-9c4g), `DatabaseController.addProtectedFields` and
///   `filterSensitiveData` (`authData` and session tokens stripped, default `protectedFields`
///   `{_User: {"*": ["email"]}}` with the owner exempt).
public struct FieldPolicy: Sendable {
    /// Read and queried by the master key alone.
    public var masterOnly: Set<String>
    /// Read by the object's owner and the master key; queried by the master key alone, because a
    /// `where` from the owner can't be known to match only the owner's own row.
    public var ownerOnly: Set<String>
    /// Whether `auth` (never the master key) owns `object`.
    public var isOwner: @Sendable (_ object: StoredObject, _ auth: AuthContext) -> Bool

    public init(masterOnly: Set<String>, ownerOnly: Set<String> = [],
                isOwner: @escaping @Sendable (_ object: StoredObject, _ auth: AuthContext) -> Bool = { _, _ in false }) {
        self.masterOnly = masterOnly; self.ownerOnly = ownerOnly; self.isOwner = isOwner
    }

    /// Whether a non-master caller may name `field` (a top-level field name) in a query.
    public func isQueryable(_ field: String) -> Bool { !masterOnly.contains(field) && !ownerOnly.contains(field) }

    /// `_User`: `authData` (provider tokens) and `sessionToken` for the master key alone; `email` for
    /// the user itself too. The owner is the user itself.
    public static let user = FieldPolicy(masterOnly: ["authData", "sessionToken", "password"], ownerOnly: ["email"],
                                         isOwner: { object, auth in auth.userId == object.objectId })

    /// `_Session`: a `sessionToken` is read in the session the request was made with, and by the master key.
    public static let session = FieldPolicy(masterOnly: [], ownerOnly: ["sessionToken"], isOwner: { object, auth in
        guard let token = auth.sessionToken else { return false }
        return object.fields["sessionToken"]?.stringValue == token
    })

    /// The policies of the system classes; other classes only have the `_` rule.
    public static let defaults: [String: FieldPolicy] = ["_User": .user, "_Session": .session]
}

/// What a caller who neither owns an object nor holds the master key sees of a class, beyond its
/// `FieldPolicy`: only `fields` (in results and `include` targets), and only those may be named
/// in its queries (a `where` or `order` on another field would read it out over the rows the
/// caller may see). The owner is the one of the class's `FieldPolicy`.
///
/// The wall's private users are this for `_User` (the wall module's `restrictedView(for:)`): like parse-server
/// 7's `enforcePrivateUsers`, with the fields the wall needs still visible.
public struct RestrictedView: Sendable {
    /// The fields shown, e.g. `["objectId", "name", "fbId"]`. `createdAt`, `updatedAt` and `ACL`
    /// are shown only when listed.
    public var fields: Set<String>
    /// Pointer fields, as `"<className>.<field>"`, whose targets `include` shows in this view to
    /// anyone who may read the pointing object, although the target class's read scope would hide
    /// them (a post's author, named by the server-set `user` field of a readable post). Other
    /// pointers follow the read scope and stay bare pointers when it hides their target.
    public var revealedThrough: Set<String>

    public init(fields: Set<String>, revealedThrough: Set<String> = []) {
        self.fields = fields; self.revealedThrough = revealedThrough
    }
}

/// Which top-level fields of one class's objects a viewer sees, by its `FieldView`: the one test
/// `ObjectService.wireObject` applies to every field it renders (GET, find, `include` targets, the
/// feed's authors, live events), so no read path decides it on its own.
/// - Never a `_` column.
/// - `.unrestricted` (the master key, or a class without rules): every other field.
/// - `.owner`: all but the `FieldPolicy`'s master-only fields.
/// - `.other`: neither master-only nor owner-only fields, and, where the class has a `RestrictedView`,
///   only its fields (`createdAt`, `updatedAt` and `ACL` only when it lists them).
/// `objectId` is always shown (`wireObject` adds it; it is never asked here).
struct FieldRule {
    let view: FieldView
    /// The class's `RestrictedView`, for `.other` only.
    let restricted: RestrictedView?
    /// The class's `FieldPolicy`, unless `.unrestricted`.
    let policy: FieldPolicy?

    func shows(_ field: String) -> Bool {
        if field.utf8.first == UInt8(ascii: "_") { return false }
        if let policy {
            if policy.masterOnly.contains(field) { return false }
            if view != .owner, policy.ownerOnly.contains(field) { return false }
        }
        if let restricted { return restricted.fields.contains(field) }
        return true
    }
}
