import PhotoWallCore
import PhotoWallStorage

/// The result of a create: what the REST layer answers with 201.
public struct CreateResult: Sendable {
    public var objectId: String
    public var createdAt: ParseDate
    /// Values of fields changed by operators or hooks, echoed in the response.
    public var changed: [String: JSON]
}

/// Parse objects: create, get, update, delete and find with ACLs, field operators, `include`,
/// `keys` and `excludeKeys`. `_User` and `_Session` get their special rules from `UserService`.
///
/// Reads (get, find, count, `include` at every depth; batch and `_method` arrive here too) pass
/// three filters, all here: the ACL, the class's read scope (`ObjectServiceExtension.readScope`, with the
/// `RestrictedView.revealedThrough` exception for `include`), and the class's `FieldPolicy` and
/// `RestrictedView` for fields, in results and in the fields a query may name.
/// - Source: parse-rest-api.md §2 (rows 2–7), §3.
public final class ObjectService: Sendable {
    /// The objects of every class.
    let store: any ObjectStore
    /// File records, to check that a File value a client writes is its own upload.
    let fileRecords: any FileRecordStore
    public let config: ServerConfig
    public let coding: ValueCoding
    let parser: QueryParser
    /// The app's classes and rules (see `ObjectServiceExtension`), installed at init.
    let installed: (any ObjectServiceExtension)?
    /// Protected fields per class (`FieldPolicy.defaults`), fixed at init.
    public let fieldPolicies: [String: FieldPolicy]
    /// Where committed saves and deletes are published (LiveQuery listens).
    public let events: ObjectEventBus
    /// Resolved sessions (`UserService.authenticate`), invalidated by every write of `store` to
    /// `_Session` or `_User`.
    public let sessionCache: SessionCache
    /// `_User` objects by objectId, whole, as `include` reads them (`includeTargets`): the authors every
    /// feed page and every `include=user` names again and again. Invalidated by every write of `store`
    /// to `_User` (`CacheInvalidatingStore`); the read rules are applied to each use, never cached.
    let userRows: ExpiringCache<String, StoredObject>

    /// - Parameters:
    ///   - store: the objects; `fileRecords`: file metadata (the ownership check of File values).
    ///   - installing: the app's extension (its write rules, read filter, save and delete
    ///     hooks, cloud functions, file access); nil for a plain Parse server.
    ///   - events: the bus committed saves and deletes go to (share it with the extension's own deletes).
    ///   - sessionCacheSeconds: how long a resolved session may be served from memory (see
    ///     `SessionCache` for the bound); 0, the default, caches nothing. Only for a database no other
    ///     process writes sessions or users to.
    ///   - userCacheSeconds: how long a user's row read for `include` may be served from memory
    ///     (`userRows`, at most `userCacheCapacity` of them); 0, the default, caches nothing. The same
    ///     condition: a write by another process is seen only when the entry ends.
    public init(store: any ObjectStore, fileRecords: any FileRecordStore, config: ServerConfig, installing: (any ObjectServiceExtension)? = nil,
                events: ObjectEventBus = ObjectEventBus(), sessionCacheSeconds: Double = 0, userCacheSeconds: Double = 0) {
        self.events = events
        let cache = SessionCache(ttlSeconds: sessionCacheSeconds)
        self.sessionCache = cache
        let users = ExpiringCache<String, StoredObject>(ttlSeconds: userCacheSeconds, capacity: Self.userCacheCapacity)
        self.userRows = users
        self.store = CacheInvalidatingStore(base: store, sessions: cache, users: users)
        self.fileRecords = fileRecords
        self.config = config
        self.coding = ValueCoding(config: config)
        self.parser = QueryParser(coding: coding)
        self.installed = installing
        self.fieldPolicies = FieldPolicy.defaults
    }

    /// The system classes' write rules (`ClassWriteRules.defaults`), then the extension's.
    func writeRules(for className: String) -> ClassWriteRules? {
        ClassWriteRules.defaults[className] ?? installed?.writeRules(for: className)
    }

    /// The ACL permissions plus the class's read scope for `auth`.
    func readPredicate(_ className: String, _ auth: AuthContext) throws(ParseError) -> Predicate? {
        guard !auth.isMaster, let installed else { return nil }
        return try installed.readScope(className: className, auth: auth)
    }

    /// Whether `auth` owns `object` by its class's `FieldPolicy` (never for classes without one).
    func isOwner(_ object: StoredObject, _ auth: AuthContext) -> Bool {
        fieldPolicies[object.className]?.isOwner(object, auth) ?? false
    }

    /// Refuses a query that names a field `auth` may not query: in `where` or `order`, one of the
    /// class's `FieldPolicy` fields or one outside its `RestrictedView`; in `keys`, `excludeKeys` or
    /// `include`, a `FieldPolicy` field or a `_` column (the renderer already leaves fields outside the
    /// view out of each row, so naming those there reads nothing). Dotted paths count by their first
    /// part (`authData.facebook.access_token` is `authData`). So one rule holds wherever a field can
    /// be named (issue 11: "a query naming a protected field is refused").
    /// - Throws: 119 `This user is not allowed to query <field> on class <className>`, or `… to sort
    ///   by …` for `order` (HTTP 400); 105 `Invalid key name: <field>` for a `_` column in `keys`,
    ///   `excludeKeys` or `include`. Nothing is logged: the refusal names only the field.
    /// - Source: parse-server `RestQuery.denyProtectedFields`; see `FieldPolicy`.
    func checkQueryable(className: String, options: FindOptions, auth: AuthContext) throws(ParseError) {
        guard !auth.isMaster else { return }
        let policy = fieldPolicies[className]
        for path in (options.keys ?? []) + options.excludeKeys + options.include {
            let field = path.split(separator: ".", maxSplits: 1).first.map(String.init) ?? path
            if field.hasPrefix("_") { throw ParseError(.invalidKeyName, "Invalid key name: \(field)") }
            if let policy, !policy.isQueryable(field) {
                throw ParseError(.operationForbidden, "This user is not allowed to query \(field) on class \(className)")
            }
        }
        let whereJSON = options.whereJSON, order = options.order
        let view = installed?.restrictedView(for: className)
        guard policy != nil || view != nil else { return }
        func refused(_ path: String) -> String? {
            let field = path.split(separator: ".", maxSplits: 1).first.map(String.init) ?? path
            if let policy, !policy.isQueryable(field) { return field }
            if let view, field != "objectId", !view.fields.contains(field) { return field }
            return nil
        }
        for path in QueryParser.fieldPaths(in: whereJSON) {
            if let field = refused(path) {
                throw ParseError(.operationForbidden, "This user is not allowed to query \(field) on class \(className)")
            }
        }
        for key in order {
            if let field = refused(key.path) {
                throw ParseError(.operationForbidden, "This user is not allowed to sort by \(field) on class \(className)")
            }
        }
    }

    public func validateClassName(_ name: String) throws(ParseError) {
        guard ObjectNames.isValidClassName(name) else { throw ParseError.invalidClassName(name) }
    }

    // MARK: create

    /// Creates an object from a REST body.
    /// - Parameters:
    ///   - writtenBy: the caller whose field writes the class's `ClassWriteRules` check, when
    ///     `auth` is the master key acting for a client (sign-up); default `auth`.
    /// - Throws: 103, 105 (`objectId is an invalid field name.`), 111, 119 (class creation by a
    ///   client, a server-owned field, a field a declared class doesn't have), 101 (a File that isn't
    ///   the caller's), 123, 137.
    public func create(className: String, body: [String: JSON], auth: AuthContext,
                       internalFields: [String: JSON] = [:], defaultACL: ACL? = nil,
                       writtenBy: AuthContext? = nil) throws(ParseError) -> CreateResult {
        try validateClassName(className)
        if body["objectId"] != nil { throw ParseError(.invalidKeyName, "objectId is an invalid field name.") }
        if !auth.isMaster, !config.allowClientClassCreation, try store.schema(of: className) == nil {
            throw ParseError(.operationForbidden, "This user is not allowed to access non-existent class: \(className)")
        }
        let writer = writtenBy ?? auth
        var body = try checkClientWrite(className: className, body: body, original: nil, auth: writer)
        let outcome = try installed?.beforeSave(className: className, body: body, auth: auth, original: nil)
        for (k, v) in outcome?.fields ?? [:] { body[k] = v }
        do {
            let acl = try body["ACL"].map { (j: JSON) throws(ParseError) -> ACL in try ACL(json: j) } ?? defaultACL
            var fields: [String: JSON] = [:]
            var changed = try FieldOperations(coding: coding).apply(body, to: &fields)
            try checkAddField(className: className, fields: fields, auth: writer)
            for (k, v) in internalFields { fields[k] = v }
            for (k, v) in outcome?.fields ?? [:] where k != "ACL" { changed[k] = v }
            let now = ParseDate.now()
            let object = StoredObject(className: className, objectId: ParseIdentifier.alphanumeric(10),
                                      createdAt: now, updatedAt: now, fields: fields, acl: acl)
            try store.insert(object)
            outcome?.afterSave?()
            events.publish(.saved(original: nil, current: object))
            installed?.render(&changed, className: className)
            return CreateResult(objectId: object.objectId, createdAt: now, changed: changed)
        } catch {
            outcome?.undo?()
            throw error
        }
    }

    // MARK: get

    /// One object readable by `auth`, in wire form, with `include`d pointers and `keys` applied.
    /// - Throws: 101 `Object not found.` when missing or not readable; 119/105 for `keys`, `excludeKeys` or
    ///   `include` naming a protected field (`checkQueryable`).
    public func get(className: String, objectId: String, options: FindOptions = FindOptions(),
                    auth: AuthContext) throws(ParseError) -> [String: JSON] {
        let q = try getQuery(className: className, objectId: objectId, options: options, auth: auth)
        guard let object = try store.find(q).first else { throw ParseError.objectNotFound() }
        return try render([object], options: options, auth: auth)[0]
    }

    /// The query `get` runs: the object by id, if the ACL and the class's read scope let `auth` read it.
    func getQuery(className: String, objectId: String, options: FindOptions, auth: AuthContext) throws(ParseError) -> StoredQuery {
        try validateClassName(className)
        try checkQueryable(className: className, options: options, auth: auth)
        var predicate = Predicate.compare("objectId", .eq, .string(objectId))
        if let scope = try readPredicate(className, auth) { predicate = .and([predicate, scope]) }
        return StoredQuery(className: className, predicate: predicate, limit: 1, readers: auth.permissions)
    }

    /// The stored object, unfiltered by ACL (internal use).
    public func fetchStored(className: String, objectId: String) throws(ParseError) -> StoredObject? {
        try store.find(StoredQuery(className: className, predicate: .compare("objectId", .eq, .string(objectId)),
                                      limit: 1, readers: nil)).first
    }

    // MARK: update

    /// Applies a REST body to an existing object writable by `auth`.
    /// - Returns: `updatedAt` and the values of operator-changed fields.
    /// - Parameters:
    ///   - writtenBy: see `create`.
    /// - Throws: 101 when missing or not writable (or a File that isn't the caller's); 105, 108,
    ///   111, 123; 119 for a change of a server-owned or immutable field or a new field of a declared class.
    public func update(className: String, objectId: String, body: [String: JSON], auth: AuthContext,
                       internalFields: [String: JSON?] = [:], writtenBy: AuthContext? = nil) throws(ParseError) -> (ParseDate, [String: JSON]) {
        try validateClassName(className)
        if let id = body["objectId"]?.stringValue, id != objectId {
            throw ParseError(.invalidKeyName, "objectId is an invalid field name.")
        }
        let newACL = try body["ACL"].map { (j: JSON) throws(ParseError) -> ACL? in j.isNull ? nil : try ACL(json: j) }
        let ops = FieldOperations(coding: coding)
        let writer = writtenBy ?? auth
        // The stored object, for the write rules and the hook (missing or not writable: 101 first).
        guard let original = try fetchStored(className: className, objectId: objectId), Self.mayWrite(original, auth) else {
            throw ParseError.objectNotFound()
        }
        var body = try checkClientWrite(className: className, body: body, original: original, auth: writer)
        let outcome = try installed?.beforeSave(className: className, body: body, auth: auth, original: original)
        for (k, v) in outcome?.fields ?? [:] { body[k] = v }
        var changed: [String: JSON] = [:]
        do {
            // New fields of a declared class, checked on the stored object as it would become
            // (outside the transaction: the schema look-up may need its own connection).
            var preview = original.fields
            _ = try ops.apply(body, to: &preview)
            try checkAddField(className: className, fields: preview, auth: writer)
            let stored = try store.update(className: className, objectId: objectId, writers: auth.permissions) { (object: inout StoredObject) throws(ParseError) in
                changed = try ops.apply(body, to: &object.fields)
                for (k, v) in internalFields { object.fields[k] = v }
                if let newACL { object.acl = newACL }
                object.updatedAt = ParseDate.now()
            }
            outcome?.afterSave?()
            events.publish(.saved(original: original, current: stored))
            for (k, v) in outcome?.fields ?? [:] { changed[k] = v }
            installed?.render(&changed, className: className)
            return (stored.updatedAt, changed)
        } catch {
            outcome?.undo?()
            throw error
        }
    }

    // MARK: delete

    /// Deletes an object, then runs the extension's `afterDelete` (e.g. a photo's comments and files go too).
    /// - Throws: 101 when missing or not writable.
    public func delete(className: String, objectId: String, auth: AuthContext) throws(ParseError) {
        try validateClassName(className)
        let object = try fetchStored(className: className, objectId: objectId)
        if !auth.isMaster, let installed, let object, try installed.mayDelete(object, auth: auth) {
            try store.delete(className: className, objectId: objectId, writers: nil)
        } else {
            try store.delete(className: className, objectId: objectId, writers: auth.permissions)
        }
        if let object { afterDeleted(object, auth: auth) }
    }

    /// Publishes the delete, then runs the extension's `afterDelete` for a deleted object (for services
    /// that delete objects themselves).
    public func afterDeleted(_ object: StoredObject, auth: AuthContext) {
        events.publish(.deleted(object))
        installed?.afterDelete(object, auth: auth)
    }

    // MARK: find

    /// Runs a query. - Returns: `{"results":[…]}` plus `"count"` when asked.
    /// - Throws: 102, 105, 107 for a bad query; 119 for a `where` or `order` on a field the caller
    ///   may not query (`checkQueryable`).
    public func find(className: String, options: FindOptions, auth: AuthContext,
                     extraPredicate: Predicate? = nil) throws(ParseError) -> JSON {
        let (query, limit) = try findQuery(className: className, options: options, auth: auth, extraPredicate: extraPredicate)
        var out: [String: JSON] = [:]
        if limit > 0 {
            let objects = try store.find(query)
            out["results"] = .array(try render(objects, options: options, auth: auth).map { .object($0) })
        } else {
            out["results"] = .array([])
        }
        if options.count { out["count"] = .number(Double(try store.count(query))) }
        return .object(out)
    }

    /// The query `find` runs, with the ACL and the class's read scope, and its limit.
    /// - Throws: 102, 105, 107 for a bad query; 119 (`checkQueryable`).
    func findQuery(className: String, options: FindOptions, auth: AuthContext,
                   extraPredicate: Predicate?) throws(ParseError) -> (StoredQuery, limit: Int) {
        try validateClassName(className)
        var predicate = try parser.predicate(options.whereJSON)
        try checkQueryable(className: className, options: options, auth: auth)
        if let extraPredicate { predicate = .and([predicate, extraPredicate]) }
        if let scope = try readPredicate(className, auth) { predicate = .and([predicate, scope]) }
        let limit = min(options.limit ?? config.defaultLimit, config.maxLimit)
        return (StoredQuery(className: className, predicate: predicate, order: options.order,
                            limit: limit, skip: options.skip, readers: auth.permissions), limit)
    }

    // MARK: rendering

    /// Wire form of objects (all of one class) with `include`, `keys`, `excludeKeys` and the field
    /// rules (`wireObject`) applied.
    public func render(_ objects: [StoredObject], options: FindOptions, auth: AuthContext) throws(ParseError) -> [[String: JSON]] {
        var viewer = RenderViewer(service: self, auth: auth)
        return try render(objects, options: options, viewer: &viewer)
    }

    /// `render` asking `viewer` everything that depends on who reads (`RenderViewer`): the field
    /// view of each object and whether `include` shows each target. Nothing else of the caller is read.
    func render(_ objects: [StoredObject], options: FindOptions, viewer: inout RenderViewer) throws(ParseError) -> [[String: JSON]] {
        var wire = objects.map { wireObject($0, view: viewer.fieldView($0)) }
        if !options.include.isEmpty, let className = objects.first?.className {
            try resolveIncludes(&wire, from: className, tree: IncludeTree(paths: options.include), viewer: &viewer, depth: 0)
        }
        if let keys = options.keys {
            let keep = Set(keys.map { String($0.split(separator: ".").first ?? "") }).union(["objectId", "createdAt", "updatedAt", "ACL"])
            wire = wire.map { $0.filter { keep.contains($0.key) } }
        }
        if !options.excludeKeys.isEmpty {
            let drop = Set(options.excludeKeys).subtracting(["objectId"])
            wire = wire.map { $0.filter { !drop.contains($0.key) } }
        }
        return wire
    }

    /// Whether any field rule (a `FieldPolicy`, a `RestrictedView`) may hide a field of `className`
    /// from `auth`: the one test both `wireObject` and the stored-text renderer (`rendersStoredText`)
    /// take, so a rule added here reaches every read.
    func fieldRulesApply(className: String, auth: AuthContext) -> Bool {
        !auth.isMaster && (fieldPolicies[className] != nil || installed?.restrictedView(for: className) != nil)
    }

    /// Which of `o`'s fields its class's rules show `auth` (see `FieldView`).
    public func fieldView(_ o: StoredObject, auth: AuthContext) -> FieldView {
        guard fieldRulesApply(className: o.className, auth: auth) else { return .unrestricted }
        return isOwner(o, auth) ? .owner : .other
    }

    /// The object as `auth` may see it: without `_` columns; without its class's `FieldPolicy`
    /// fields unless the master key asks (or the owner, for owner-only ones); only its
    /// `RestrictedView` fields for anyone but the owner and the master key. Then the extension's `render`.
    public func wireObject(_ o: StoredObject, auth: AuthContext) -> [String: JSON] {
        wireObject(o, view: fieldView(o, auth: auth))
    }

    /// `o` in wire form as a viewer with field view `view` sees it (`wireObject(_:auth:)`): in one pass,
    /// each field `FieldRule` shows, converted by `ValueCoding.toWire` (only those: a user's `authData`
    /// is never converted for a viewer who can't see it), then `objectId` and the system fields the rule shows.
    func wireObject(_ o: StoredObject, view: FieldView) -> [String: JSON] {
        let rule = fieldRule(className: o.className, view: view)
        var w = [String: JSON](minimumCapacity: o.fields.count + 4)  // not `reserveCapacity`: see `JSONParser.object`
        for (k, v) in o.fields where rule.shows(k) { w[k] = coding.toWire(v) }
        addSystemFields(of: o, rule: rule, to: &w)
        installed?.render(&w, className: o.className)
        return w
    }

    /// `objectId`, and `createdAt`, `updatedAt` and `ACL` (when set) where `rule` shows them.
    private func addSystemFields(of o: StoredObject, rule: FieldRule, to w: inout [String: JSON]) {
        w["objectId"] = .string(o.objectId)
        if rule.shows("createdAt") { w["createdAt"] = .string(o.createdAt.iso) }
        if rule.shows("updatedAt") { w["updatedAt"] = .string(o.updatedAt.iso) }
        if let acl = o.acl, rule.shows("ACL") { w["ACL"] = acl.json }
    }

    /// The rule `wireObject` applies to `className`'s objects for a viewer with field view `view`.
    func fieldRule(className: String, view: FieldView) -> FieldRule {
        FieldRule(view: view, restricted: view == .other ? installed?.restrictedView(for: className) : nil,
                  policy: view == .unrestricted ? nil : fieldPolicies[className])
    }

    /// Whether the object's ACL lets `auth` read it (no ACL: everyone; the master key: always). The
    /// one in-memory form of the `readers` filter the adapters apply in SQL.
    static func mayRead(_ object: StoredObject, _ auth: AuthContext) -> Bool {
        guard let acl = object.acl else { return true }
        return permissionsAdmit(auth.permissions, acl.entries.lazy.filter { $0.value.read }.map(\.key))
    }

    /// Whether `include` through the pointer field `via` (`"<className>.<field>"`) shows `auth` the
    /// object `o`: its ACL lets `auth` read it, and its class's read scope allows it unless `via` is one
    /// of the class's `RestrictedView.revealedThrough`.
    /// - Parameter scopes: `auth`'s read scopes by class, filled here as needed, so one rendering or one
    ///   batch of targets computes each class's scope once (a friends-only scope reads the friend list).
    /// - Throws: what the read scope throws (e.g. the friend list can't be read).
    func includes(_ o: StoredObject, via: String, auth: AuthContext, scopes: inout [String: Predicate?]) throws(ParseError) -> Bool {
        guard Self.mayRead(o, auth) else { return false }
        if installed?.restrictedView(for: o.className)?.revealedThrough.contains(via) == true { return true }
        let scope: Predicate?
        if let known = scopes[o.className] {
            scope = known
        } else {
            scope = try readPredicate(o.className, auth)?.loadingFriendScopes()
            scopes[o.className] = .some(scope)
        }
        guard let scope else { return true }
        return scope.matches(o)
    }

    /// The objects of `className` with these ids, whoever may read them (no ACL, no read scope): what
    /// `include` filters per viewer with `includes(_:via:auth:scopes:)`. Users come from `userRows` where
    /// it holds them, the others from one read, which then fills it.
    /// - Parameter generation: `includeCacheGeneration()` taken before the caller's reads began, for a
    ///   caller reading inside one snapshot of several statements (the feed): a user written after the
    ///   snapshot began but before this read would otherwise be cached as the snapshot saw it. nil: taken
    ///   here, right for a read that is a statement of its own.
    func includeTargets(className: String, ids: Set<String>, generation: UInt64? = nil) throws(ParseError) -> [StoredObject] {
        guard ObjectNames.isValidClassName(className), !ids.isEmpty else { return [] }
        guard cachesIncludes(of: className) else { return try store.find(Self.byIds(className, ids)) }
        let generation = generation ?? userRows.generation()
        var found: [StoredObject] = []
        found.reserveCapacity(ids.count)
        var missing = Set<String>()
        for id in ids {
            if let o = userRows.lookup(id) { found.append(o) } else { missing.insert(id) }
        }
        guard !missing.isEmpty else { return found }
        for o in try store.find(Self.byIds(className, missing)) {
            userRows.store(o.objectId, o, generation: generation)
            found.append(o)
        }
        return found
    }

    /// Whether `includeTargets` serves `className` from `userRows`: users, when the cache is on.
    func cachesIncludes(of className: String) -> Bool { className == "_User" && userRows.isEnabled }

    /// At most this many users in `userRows` (emptied when full): a few MB for users as the wall stores them.
    static let userCacheCapacity = 10_000

    /// The generation of the user rows `include` caches, to pass to `includedMembers(…readsSince:)` by a
    /// caller that takes it before opening one read snapshot for several statements.
    public func includeCacheGeneration() -> UInt64 { userRows.generation() }

    /// The objects of `className` with these ids, whoever may read them (`readers` nil).
    static func byIds(_ className: String, _ ids: Set<String>) -> StoredQuery {
        StoredQuery(className: className, predicate: .inList("objectId", ids.sorted().map { .string($0) }, negated: false), readers: nil)
    }

    /// The objects of `className` with these ids that `include` through the pointer field `via`
    /// (`"<className>.<field>"`) shows `auth` (`includes(_:via:auth:scopes:)`), in wire form by objectId, as
    /// `wireObject` renders them.
    public func includedObjects(className: String, ids: Set<String>, via: String, auth: AuthContext) throws(ParseError) -> [String: [String: JSON]] {
        try includedObjects(className: className, idsVia: [via: ids], auth: auth)
    }

    /// `includedObjects(className:ids:via:auth:)` for ids reached through several pointer fields, with one
    /// read: an object is shown when `include` through any field that names it shows it.
    public func includedObjects(className: String, idsVia: [String: Set<String>], auth: AuthContext) throws(ParseError) -> [String: [String: JSON]] {
        let all = idsVia.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        var out: [String: [String: JSON]] = [:]
        try forEachIncluded(try includeTargets(className: className, ids: all), idsVia: idsVia, auth: auth) { o in
            out[o.objectId] = wireObject(o, auth: auth)
        }
        return out
    }

    /// The objects `includedObjects(className:idsVia:auth:)` shows, reduced to `members`: by objectId, the
    /// wire value (`ValueCoding.toWire`) of each of `members`, in their order; nil where the object has
    /// no such field or its field view doesn't show it (`FieldRule`, the rule `wireObject` applies, asked
    /// once per view). `objectId`, `createdAt`, `updatedAt` and `ACL` may be named as well. The same
    /// ACL, read-scope and field rules as `include`; for a caller that writes a few fields of many
    /// objects (the feed's post and comment authors, as `include=user` on each shows them): the store
    /// decodes only `members` and the fields the class's read scope tests (none when every pointer field
    /// reveals its targets: the scope is then never evaluated), and no object is built in wire form.
    /// Users come whole from the cache `include` reads through (`includeTargets`), when it is on.
    /// - Parameter generation: `includeCacheGeneration()` taken before the caller's read snapshot began
    ///   (see `includeTargets`); nil for a call that is not inside one.
    /// - Throws: what the store and the read scope throw.
    public func includedMembers(className: String, idsVia: [String: Set<String>], auth: AuthContext,
                                members: [String], readsSince generation: UInt64? = nil) throws(ParseError) -> [String: [JSON?]] {
        let all = idsVia.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        guard ObjectNames.isValidClassName(className), !all.isEmpty else { return [:] }
        let revealed = installed?.restrictedView(for: className)?.revealedThrough ?? []
        let tested = idsVia.keys.allSatisfy(revealed.contains)
            ? [] : (try readPredicate(className, auth)?.paths ?? []).map { String($0.prefix { $0 != "." }) }
        let targets = cachesIncludes(of: className)
            ? try includeTargets(className: className, ids: all, generation: generation)
            : try store.find(Self.byIds(className, all), members: Set(members).union(tested))
        // An extension that renders the class gets whole wire objects, as everywhere.
        let rendered = installed?.renders(className: className) ?? false
        var shown: [FieldView: [Bool]] = [:]
        var out = [String: [JSON?]](minimumCapacity: targets.count)
        try forEachIncluded(targets, idsVia: idsVia, auth: auth) { o in
            let view = fieldView(o, auth: auth)
            if rendered {
                let w = wireObject(o, view: view)
                out[o.objectId] = members.map { w[$0] }
                return
            }
            let mask: [Bool]
            if let known = shown[view] {
                mask = known
            } else {
                let rule = fieldRule(className: className, view: view)
                mask = members.map { $0 == "objectId" || rule.shows($0) }
                shown[view] = mask
            }
            var values: [JSON?] = []
            values.reserveCapacity(members.count)
            for (i, name) in members.enumerated() {
                values.append(mask[i] ? wireValue(of: o, name) : nil)
            }
            out[o.objectId] = values
        }
        return out
    }

    /// The field `name` of `o` in wire form, `objectId`, `createdAt`, `updatedAt` and `ACL` included
    /// (as `wireObject` renders them); nil when absent.
    func wireValue(of o: StoredObject, _ name: String) -> JSON? {
        switch name {
        case "objectId": return .string(o.objectId)
        case "createdAt": return .string(o.createdAt.iso)
        case "updatedAt": return .string(o.updatedAt.iso)
        case "ACL": return o.acl?.json
        default: return o.fields[name].map(coding.toWire)
        }
    }

    /// Calls `body` with each of `targets` that `include` through a pointer field naming it shows `auth`
    /// (`includes(_:via:auth:scopes:)`, each class's read scope computed once).
    func forEachIncluded(_ targets: [StoredObject], idsVia: [String: Set<String>], auth: AuthContext,
                         _ body: (StoredObject) throws(ParseError) -> Void) throws(ParseError) {
        var scopes: [String: Predicate?] = [:]
        let vias = idsVia.sorted(by: { $0.key < $1.key })
        for o in targets {
            for (via, ids) in vias where ids.contains(o.objectId) {
                if try includes(o, via: via, auth: auth, scopes: &scopes) {
                    try body(o)
                    break
                }
            }
        }
    }

    struct IncludeTree {
        var children: [String: IncludeTree] = [:]
        init() {}
        init(paths: [String]) {
            for p in paths { insert(p.split(separator: ".").map(String.init)) }
        }
        mutating func insert(_ parts: [String]) {
            guard let first = parts.first else { return }
            children[first, default: IncludeTree()].insert(Array(parts.dropFirst()))
        }
    }

    /// Replaces pointers named by `tree` with the objects they point to that `include` shows the
    /// viewer (`RenderViewer.includes`), as `{"__type":"Object","className":…, …fields}`; other or
    /// missing targets stay pointers.
    /// - Parameter from: the class of `objects`.
    func resolveIncludes(_ objects: inout [[String: JSON]], from sourceClass: String, tree: IncludeTree, viewer: inout RenderViewer,
                         depth: Int) throws(ParseError) {
        guard depth < 4 else { return }
        for (field, subtree) in tree.children.sorted(by: { $0.key < $1.key }) {
            let fields = field == "*" ? Set(objects.flatMap { o in o.filter { $0.value.parseType == "Pointer" }.map(\.key) }).sorted() : [field]
            for f in fields {
                var wanted: [String: Set<String>] = [:]
                for o in objects {
                    for p in Self.pointers(in: o[f]) { wanted[p.className, default: []].insert(p.objectId) }
                }
                var fetched: [String: [String: JSON]] = [:]
                for (cls, ids) in wanted.sorted(by: { $0.key < $1.key }) {
                    var targets: [[String: JSON]] = []
                    for o in try viewer.targets(className: cls, ids: ids) where try viewer.includes(o, via: sourceClass + "." + f) {
                        targets.append(wireObject(o, view: viewer.fieldView(o)))
                    }
                    if !subtree.children.isEmpty { try resolveIncludes(&targets, from: cls, tree: subtree, viewer: &viewer, depth: depth + 1) }
                    for var t in targets {
                        t["__type"] = "Object"
                        t["className"] = .string(cls)
                        fetched[cls + "/" + (t["objectId"]?.stringValue ?? "")] = t
                    }
                }
                for i in objects.indices {
                    guard let v = objects[i][f] else { continue }
                    objects[i][f] = Self.replacePointers(v, with: fetched)
                }
            }
        }
    }

    static func pointers(in value: JSON?) -> [(className: String, objectId: String)] {
        guard let value else { return [] }
        if value.parseType == "Pointer", let c = value["className"]?.stringValue, let id = value["objectId"]?.stringValue {
            return [(c, id)]
        }
        if let a = value.arrayValue { return a.flatMap { pointers(in: $0) } }
        return []
    }

    static func replacePointers(_ value: JSON, with fetched: [String: [String: JSON]]) -> JSON {
        if value.parseType == "Pointer", let c = value["className"]?.stringValue, let id = value["objectId"]?.stringValue {
            return fetched[c + "/" + id].map { .object($0) } ?? value
        }
        if let a = value.arrayValue { return .array(a.map { replacePointers($0, with: fetched) }) }
        return value
    }
}
