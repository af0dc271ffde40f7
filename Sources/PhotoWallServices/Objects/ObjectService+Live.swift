import PhotoWallCore
import PhotoWallStorage

extension ObjectService {
    /// A live subscription's `where` for `auth`, checked as a find's is: the class name (103), the query
    /// (102, 107) and the fields it, `keys` and `watch` name (`checkQueryable`: 119 for a protected field,
    /// 105 for a `_` column), so a subscription can't probe what a query can't.
    public func livePredicate(className: String, whereJSON: JSON, keys: [String]?, watch: [String]?,
                              auth: AuthContext) throws(ParseError) -> Predicate {
        try validateClassName(className)
        var options = FindOptions()
        options.whereJSON = whereJSON
        options.keys = (keys ?? []) + (watch ?? [])
        if options.keys?.isEmpty == true { options.keys = nil }
        try checkQueryable(className: className, options: options, auth: auth)
        return try parser.predicate(whereJSON)
    }

    /// Whether `auth` may see `object` (stored or just deleted) and it matches `predicate`, by the rules
    /// every read passes (see the type's doc): its ACL, then its class's read scope (friends-only walls,
    /// private users) as they stand now; the master key sees everything. Evaluated in memory
    /// (`Predicate.matches`), so it also answers for an update's original and a deleted object.
    public func isVisible(_ object: StoredObject, matching predicate: Predicate = .all, auth: AuthContext) throws(ParseError) -> Bool {
        if !auth.isMaster, let acl = object.acl, let permissions = auth.permissions,
           !permissions.contains(where: { acl.entries[$0]?.read == true }) {
            return false
        }
        if let scope = try readPredicate(object.className, auth), !scope.matches(object) { return false }
        return predicate.matches(object)
    }

    /// Whether `liveObject(_:include:keys:auth:)` gives every viewer (any session, anonymous, the master
    /// key) the same object of `className`: no `include` (whose targets are checked per viewer: ACL, read
    /// scope, `RestrictedView`) and no field rule of the class that could hide a field from some viewer
    /// (`fieldRulesApply`, the test `wireObject` takes: a `FieldPolicy` or a `RestrictedView`). The
    /// extension's `render` takes no viewer. So LiveQuery renders such an event once for everyone.
    public func rendersAlikeForEveryone(className: String, include: [String]) -> Bool {
        include.isEmpty && !fieldRulesApply(className: className, auth: .anonymous)
    }

    /// `object` in wire form for `auth`, as GET renders it (`render`: protected fields, restricted
    /// views, signed file URLs, `include`d pointers as `{"__type":"Object",…}`, `keys`).
    public func liveObject(_ object: StoredObject, include: [String], keys: [String]?, auth: AuthContext) throws(ParseError) -> [String: JSON] {
        var options = FindOptions()
        options.include = include
        options.keys = keys
        return try render([object], options: options, auth: auth)[0]
    }
}
