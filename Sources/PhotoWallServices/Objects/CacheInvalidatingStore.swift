import PhotoWallCore
import PhotoWallStorage

/// `ObjectStore` that tells the caches of `ObjectService` about every write that may change what they
/// hold, after the write (also when it failed: it may have happened before the failure was reported):
/// the session cache (`SessionCache`) of every write to `_Session` and `_User`, and the user rows
/// `include` reads (`ObjectService.includeTargets`) of every write to `_User`. `ObjectService` holds its
/// store through this, and `UserService` writes through `ObjectService`'s store; nothing else in the
/// process writes sessions or users (the wall's cascades delete photos and comments through their own
/// handle), so no write of a session or user in this process escapes it.
struct CacheInvalidatingStore: ObjectStore {
    let base: any ObjectStore
    let sessions: SessionCache
    /// `ObjectService.userRows`: `_User` objects by objectId.
    let users: ExpiringCache<String, StoredObject>

    /// Forgets what a write to `className` may have changed (`objectId` nil: a predicate delete, any row).
    func invalidate(className: String, objectId: String?) {
        sessions.invalidate(className: className, objectId: objectId)
        guard className == "_User" else { return }
        if let objectId { users.invalidate(objectId) } else { users.invalidate() }
    }

    func schema(of className: String) throws(ParseError) -> ClassSchema? { try base.schema(of: className) }

    func ensureClass(_ className: String, fields: [String: FieldType], indexedFields: [String], uniqueFields: [String]) throws(ParseError) {
        try base.ensureClass(className, fields: fields, indexedFields: indexedFields, uniqueFields: uniqueFields)
    }

    /// A new object changes no cached session: its objectId is new (a duplicate fails), and a new
    /// session's token is looked up in the database the first time. A new user's objectId is forgotten
    /// all the same, so that no read racing the insert can keep an older answer for it.
    func insert(_ object: StoredObject) throws(ParseError) {
        defer { if object.className == "_User" { users.invalidate(object.objectId) } }
        try base.insert(object)
    }

    func find(_ query: StoredQuery) throws(ParseError) -> [StoredObject] { try base.find(query) }

    func forEachStoredRow(_ query: StoredQuery, _ body: (StoredRowView) -> Void) throws(ParseError) -> Bool {
        try base.forEachStoredRow(query, body)
    }

    func count(_ query: StoredQuery) throws(ParseError) -> Int { try base.count(query) }

    func update(className: String, objectId: String, writers: PermissionSet,
                _ transform: (inout StoredObject) throws(ParseError) -> Void) throws(ParseError) -> StoredObject {
        defer { invalidate(className: className, objectId: objectId) }
        return try base.update(className: className, objectId: objectId, writers: writers, transform)
    }

    func delete(className: String, objectId: String, writers: PermissionSet) throws(ParseError) {
        defer { invalidate(className: className, objectId: objectId) }
        try base.delete(className: className, objectId: objectId, writers: writers)
    }

    func deleteAll(className: String, predicate: Predicate) throws(ParseError) -> Int {
        defer { invalidate(className: className, objectId: nil) }
        return try base.deleteAll(className: className, predicate: predicate)
    }
}
