import PhotoWallCore

/// An object as the database adapters store it: Parse's built-in columns plus a schemaless
/// document of fields in their stored encodings (Date as `{"__type":"Date","iso"}`, Pointer as
/// `{"__type":"Pointer","className","objectId"}`, File as `{"__type":"File","name"}` — no `url`).
public struct StoredObject: Sendable {
    public var className: String
    /// 10 characters of `[A-Za-z0-9]`.
    public var objectId: String
    public var createdAt: ParseDate
    public var updatedAt: ParseDate
    /// Every other field, `ACL` excluded. Keys starting with `_` are internal (e.g. `_hashed_password`).
    public var fields: [String: JSON]
    /// nil means public read and write (Parse's default when no ACL is set).
    public var acl: ACL?

    public init(className: String, objectId: String, createdAt: ParseDate, updatedAt: ParseDate,
                fields: [String: JSON], acl: ACL?) {
        self.className = className; self.objectId = objectId; self.createdAt = createdAt
        self.updatedAt = updatedAt; self.fields = fields; self.acl = acl
    }
}

/// A Parse ACL: per-entry read and write flags, where an entry is `*` (public), a user's
/// `objectId`, or `role:Name`. - Source: parse-rest-api.md §1 (`ACL`).
public struct ACL: Sendable, Equatable {
    public struct Access: Sendable, Equatable {
        public var read: Bool
        public var write: Bool
        public init(read: Bool, write: Bool) { self.read = read; self.write = write }
    }
    public var entries: [String: Access]

    public init(entries: [String: Access]) { self.entries = entries }

    /// Read from Parse's JSON form.
    /// - Throws: `ParseError` 123 `Invalid ACL.` when the shape is wrong.
    public init(json: JSON) throws(ParseError) {
        guard let o = json.objectValue else { throw ParseError(.invalidACL, "Invalid ACL.") }
        var e: [String: Access] = [:]
        for (k, v) in o {
            guard !k.isEmpty, let perms = v.objectValue else { throw ParseError(.invalidACL, "Invalid ACL.") }
            var a = Access(read: false, write: false)
            for (pk, pv) in perms {
                guard let b = pv.boolValue, pk == "read" || pk == "write" else { throw ParseError(.invalidACL, "Invalid ACL.") }
                if pk == "read" { a.read = b } else { a.write = b }
            }
            e[k] = a
        }
        entries = e
    }

    /// Read from an ACL's JSON text as a database stored it (`{"<entry>":{"read":true,…},…}`): the
    /// same ACL as `init(json: JSON.parse(text))`, read in one pass without the JSON values in
    /// between (every object read from a database decodes one). Text this pass doesn't take (an
    /// escaped entry, a value that isn't `true` or `false`) goes through `init(json:)`.
    /// - Throws: `ParseError` 107 when `text` is not JSON, 123 `Invalid ACL.` when the shape is wrong.
    public init(storedText text: UnsafeBufferPointer<UInt8>) throws(ParseError) {
        // The usual ACL: public read and the owner. (`init(minimumCapacity:)`, specialized here, not
        // `reserveCapacity`, which looked up generic metadata per call.)
        var e = [String: Access](minimumCapacity: 2)
        var plain = true
        let whole = JSON.forEachMember(ofObjectText: text) { key, value in
            guard plain, !key.isEmpty, !key.contains(UInt8(ascii: "\\")) else { plain = false; return }
            var a = Access(read: false, write: false)
            let perms = JSON.forEachMember(ofObjectText: value) { pk, pv in
                guard plain else { return }
                let isRead = pk.bytesEqual("read"), isWrite = pk.bytesEqual("write")
                let flag = pv.bytesEqual("true") ? true : pv.bytesEqual("false") ? false : nil
                guard isRead || isWrite, let flag else { plain = false; return }
                if isRead { a.read = flag } else { a.write = flag }
            }
            guard perms else { plain = false; return }
            e[String(decoding: key, as: UTF8.self)] = a
        }
        guard whole, plain else { self = try ACL(json: JSON.parse(text)); return }
        self = ACL(entries: e)
    }

    public var json: JSON {
        var o: [String: JSON] = [:]
        for (k, a) in entries {
            var p: [String: JSON] = [:]
            if a.read { p["read"] = true }
            if a.write { p["write"] = true }
            if !p.isEmpty { o[k] = .object(p) }
        }
        return .object(o)
    }

    /// Entries that may read (`_rperm`), sorted.
    public var readers: [String] { entries.filter { $0.value.read }.map(\.key).sorted() }
    /// Entries that may write (`_wperm`), sorted.
    public var writers: [String] { entries.filter { $0.value.write }.map(\.key).sorted() }

    /// Read/write for one user only.
    public static func privateTo(_ userId: String) -> ACL { ACL(entries: [userId: Access(read: true, write: true)]) }
}

/// Who is asking, reduced to what the adapters need to filter rows.
///
/// `nil` means the master key: no filter. Otherwise the ACL entries that grant access
/// (`*` and the user's id).
public typealias PermissionSet = [String]?

/// Whether `permissions` admit a caller to what `entries` grant (an ACL's readers or writers, a row's `rperm`): the
/// master key (nil) always; otherwise when one of them is one of the entries. Compared byte for byte, as
/// the adapters' SQL compares them (`value IN (…)`), not by Swift's `==`, which is canonical equivalence
/// (U+212A KELVIN SIGN would equal `K`, so an entry a client chose could match another user's id).
/// Every in-memory check of an ACL permission goes through here.
public func permissionsAdmit(_ permissions: PermissionSet, _ entries: some Sequence<String>) -> Bool {
    guard let permissions else { return true }
    return entries.contains { entry in permissions.contains { $0.utf8.elementsEqual(entry.utf8) } }
}
