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
        guard Self.mayRead(object, auth) else { return false }
        if let scope = try readPredicate(object.className, auth)?.loadingFriendScopes(), !scope.matches(object) { return false }
        return predicate.matches(object)
    }

    /// A store of `include` targets for the renderings of one event (`liveObject`): each target is
    /// read once for all viewers, and filtered per viewer.
    public func includeTargets() -> IncludeTargets { IncludeTargets(service: self) }

    /// `object` in wire form for `auth`, as GET renders it (`render`: protected fields, restricted
    /// views, signed file URLs, `include`d pointers as `{"__type":"Object",…}`, `keys`), with the
    /// questions the rendering asked about `auth` and their answers: any viewer for whom
    /// `RenderTrace.holds(for:in:)` is true gets this same object.
    /// - Parameter targets: where `include` targets are read from (`includeTargets()`).
    /// - Throws: what the read scope throws while deciding an `include`.
    public func liveObject(_ object: StoredObject, include: [String], keys: [String]?, auth: AuthContext,
                           targets: IncludeTargets) throws(ParseError) -> (object: [String: JSON], trace: RenderTrace) {
        var options = FindOptions()
        options.include = include
        options.keys = keys
        var viewer = RenderViewer(service: self, auth: auth, source: targets, recording: true)
        let wire = try render([object], options: options, viewer: &viewer)[0]
        return (wire, viewer.trace ?? RenderTrace())
    }
}
