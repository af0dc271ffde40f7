import PhotoWallCore
import PhotoWallStorage

/// What clients may write on one class, declared once at start and enforced by
/// `ObjectService.create` and `update` for every caller but the master key — so every route that
/// writes objects (REST `POST`/`PUT`, `/batch`, `_method`, sign-up and `PUT /users`) passes it.
///
/// - Server-owned fields (`serverOwned`; every `_`-prefixed field is refused as an invalid field
///   name anyway) are set by the server alone. A client value *equal* to the stored one (on
///   create: to what the server sets, `createValues`) is accepted and ignored, because Parse SDKs
///   send whole objects back; any other value is refused with 119. Pointers compare by
///   `className` + `objectId`, Files by `name` (a `url`, signed or not, is not part of the value).
/// - Immutable fields (`immutable`) are the client's on create and fixed afterwards (same rule).
/// - A declared schema (`declaredFields`: the client-writable fields and their types, created at
///   start) closes the class to new fields: a client write naming a field the schema doesn't have is
///   refused with parse-server's `addField` class-level-permission error (119 `Permission denied for
///   action addField on class C.`); the declared types make a mistyped value 111.
///
/// Independently of the class, a File value a client writes must be the caller's own upload
/// (`FileRecord.owner`) or the value already stored in that field; otherwise the answer is the
/// same as for a file that doesn't exist (101 `File not found: <name>.`), so file names don't leak.
/// - Source: parse-server SchemaController `validatePermission` (CLP `addField`), `protectedFields`.
public struct ClassWriteRules: Sendable {
    public var serverOwned: Set<String>
    public var immutable: Set<String>
    /// Client-writable fields and types; nil: the class takes new fields from any writer (Parse's default).
    public var declaredFields: [String: FieldType]?
    /// What the server sets on create for this body and caller, in wire form (e.g. `user`,
    /// `userFBId`); asked only when a create carries a server-owned field.
    public var createValues: (@Sendable (_ body: [String: JSON], _ auth: AuthContext) throws(ParseError) -> [String: JSON])?

    public init(serverOwned: Set<String> = [], immutable: Set<String> = [], declaredFields: [String: FieldType]? = nil,
                createValues: (@Sendable (_ body: [String: JSON], _ auth: AuthContext) throws(ParseError) -> [String: JSON])? = nil) {
        self.serverOwned = serverOwned; self.immutable = immutable
        self.declaredFields = declaredFields; self.createValues = createValues
    }

    /// `_User`: identity and verification come from the server (the login/link flow in `UserService`).
    public static let user = ClassWriteRules(serverOwned: ["fbId", "name", "authData", "emailVerified", "sessionToken"])

    /// The system classes' rules, applied by every `ObjectService` before an extension's.
    public static let defaults: [String: ClassWriteRules] = ["_User": .user]
}

extension ObjectService {
    /// The body a client write may apply, after the class's write rules and the file-ownership rule:
    /// values equal to the stored ones (server-owned, immutable, Files) are dropped.
    /// - Parameters:
    ///   - original: the stored object (nil on create).
    /// - Throws: 119 for a change of a server-owned or immutable field; 101 for a File that isn't the
    ///   caller's; what `createValues` throws.
    func checkClientWrite(className: String, body: [String: JSON], original: StoredObject?,
                          auth: AuthContext) throws(ParseError) -> [String: JSON] {
        guard !auth.isMaster else { return body }
        var body = body
        let rules = writeRules(for: className)
        var createValues: [String: JSON]?
        for key in body.keys.sorted() where !FieldOperations.builtins.contains(key) {
            let value = body[key]!
            if let rules, rules.serverOwned.contains(key) || (original != nil && rules.immutable.contains(key)) {
                let reference: JSON?
                if let original {
                    reference = original.fields[key]
                } else {
                    if createValues == nil { createValues = try rules.createValues?(body, auth) ?? [:] }
                    reference = try createValues![key].map { (v: JSON) throws(ParseError) -> JSON in try coding.toStored(v) }
                }
                if original == nil && reference == nil {
                    throw ParseError(.operationForbidden, "\(className).\(key) is set by the server.")
                }
                guard try sameValue(value, reference) else {
                    throw ParseError(.operationForbidden, rules.immutable.contains(key)
                                     ? "\(className).\(key) can't be changed."
                                     : "\(className).\(key) is set by the server and can't be changed.")
                }
                body[key] = nil
                continue
            }
            // A File field sent back unchanged (with its signed URL) is no write at all.
            if value.parseType == "File", let stored = original?.fields[key], try sameValue(value, stored) {
                body[key] = nil
                continue
            }
            let kept = Set(Self.fileNames(in: original?.fields[key]))
            for name in Self.fileNames(in: value) where !kept.contains(name) {
                guard let owner = try fileRecords.file(named: name)?.owner, owner == auth.userId else {
                    throw ParseError(.objectNotFound, "File not found: \(name).")
                }
            }
        }
        return body
    }

    /// Whether a wire value leaves the stored value `stored` as it is (Files by name, Pointers by
    /// class and id; `null` and `Delete` equal a missing field).
    func sameValue(_ value: JSON, _ stored: JSON?) throws(ParseError) -> Bool {
        if value.isNull || value["__op"]?.stringValue == "Delete" { return stored == nil }
        if value["__op"] != nil { return false }
        guard let stored else { return false }
        return try coding.toStored(value) == stored
    }

    /// Names of the File values in a wire or stored value, at any depth (operators' `objects` included).
    static func fileNames(in value: JSON?) -> [String] {
        guard let value else { return [] }
        if value.parseType == "File" { return value["name"]?.stringValue.map { [$0] } ?? [] }
        if let a = value.arrayValue { return a.flatMap { fileNames(in: $0) } }
        if let o = value.objectValue { return o.values.flatMap { fileNames(in: $0) } }
        return []
    }

    /// Refuses fields a declared class doesn't have (parse-server's CLP `addField`, master key only).
    /// - Throws: 119 `Permission denied for action addField on class C.`
    func checkAddField(className: String, fields: [String: JSON], auth: AuthContext) throws(ParseError) {
        guard !auth.isMaster, writeRules(for: className)?.declaredFields != nil else { return }
        let known = try store.schema(of: className)?.fields ?? [:]
        for key in fields.keys where known[key] == nil && !key.hasPrefix("_") {
            throw ParseError(.operationForbidden, "Permission denied for action addField on class \(className).")
        }
    }

    /// Whether the ACL lets `auth` write `object` (the adapters enforce it again when writing).
    static func mayWrite(_ object: StoredObject, _ auth: AuthContext) -> Bool {
        guard let acl = object.acl else { return true }
        return permissionsAdmit(auth.permissions, acl.entries.lazy.filter { $0.value.write }.map(\.key))
    }
}
