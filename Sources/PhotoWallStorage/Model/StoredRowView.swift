import PhotoWallCore

/// One stored object as the database holds it, for rendering without decoding: its fields are still
/// the JSON object text the adapter stored. Valid only during the `ObjectStore.forEachStoredRow` call
/// that hands it out (the buffers are the database's).
public struct StoredRowView {
    public var className: String
    /// The objectId's UTF-8 bytes.
    public var objectId: UnsafeBufferPointer<UInt8>
    public var createdAt: ParseDate
    public var updatedAt: ParseDate
    /// Every field but `ACL`, as one JSON object text (UTF-8), `_` columns included.
    public var fieldsText: UnsafeBufferPointer<UInt8>
    /// The ACL as its JSON object text (`ACL.json`), nil when public.
    public var aclText: UnsafeBufferPointer<UInt8>?

    public init(className: String, objectId: UnsafeBufferPointer<UInt8>, createdAt: ParseDate, updatedAt: ParseDate,
                fieldsText: UnsafeBufferPointer<UInt8>, aclText: UnsafeBufferPointer<UInt8>?) {
        self.className = className; self.objectId = objectId; self.createdAt = createdAt; self.updatedAt = updatedAt
        self.fieldsText = fieldsText; self.aclText = aclText
    }
}

/// The top-level fields a caller reads of each object (`ObjectStore.find(_:members:)`,
/// `StoredRowView.object(members:)`), with their names' UTF-8 bytes made once for all rows.
public struct StoredMembers: Sendable {
    let utf8: [([UInt8], String)]

    public init(_ names: Set<String>) {
        utf8 = names.map { (Array($0.utf8), $0) }
    }

    /// The member whose name's bytes are `key` (a stored key, escapes as written), if any.
    func name(of key: UnsafeBufferPointer<UInt8>) -> String? {
        for (bytes, name) in utf8 where bytes.count == key.count {
            if bytes.withUnsafeBufferPointer({ key.bytesEqual($0) }) { return name }
        }
        return nil
    }
}

extension StoredRowView {
    /// The name's bytes of a File stored as `ValueCoding.toStored` writes it, `{"__type":"File","name":"…"}`
    /// with no escape in the name; nil for any other value.
    public static func storedFileName(_ value: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let prefix: StaticString = #"{"__type":"File","name":""#
        let n = prefix.utf8CodeUnitCount
        guard value.count >= n + 2, value[value.count - 2] == UInt8(ascii: "\""), value[value.count - 1] == UInt8(ascii: "}") else { return nil }
        for i in 0..<n where value[i] != prefix.utf8Start[i] { return nil }
        let name = UnsafeBufferPointer(rebasing: value[n..<(value.count - 2)])
        guard !JSON.containsQuoteOrBackslash(name) else { return nil }
        return name
    }

    /// The `objectId`'s bytes of a Pointer stored as `ValueCoding.toStored` writes it,
    /// `{"__type":"Pointer","className":"…","objectId":"…"}` with no escape in either string; nil for
    /// any other value (the caller decodes it).
    public static func storedPointerId(_ value: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let prefix: StaticString = #"{"__type":"Pointer","className":""#
        let middle: StaticString = #"","objectId":""#
        let (p, m) = (prefix.utf8CodeUnitCount, middle.utf8CodeUnitCount)
        guard value.count >= p + m + 2, value[value.count - 2] == UInt8(ascii: "\""), value[value.count - 1] == UInt8(ascii: "}"),
              UnsafeBufferPointer(rebasing: value[0..<p]).bytesEqual(prefix) else { return nil }
        // The class name ends at the first quote after the prefix; no backslash may precede it.
        var i = p
        while i < value.count - 2, value[i] != UInt8(ascii: "\""), value[i] != UInt8(ascii: "\\") { i += 1 }
        guard i + m <= value.count - 2, value[i] == UInt8(ascii: "\""),
              UnsafeBufferPointer(rebasing: value[i..<(i + m)]).bytesEqual(middle) else { return nil }
        let id = UnsafeBufferPointer(rebasing: value[(i + m)..<(value.count - 2)])
        guard !JSON.containsQuoteOrBackslash(id) else { return nil }
        return id
    }

    /// The row as a `StoredObject` holding only the fields named in `members` (when present) and its
    /// whole ACL; the text of the other fields is skipped, not decoded.
    /// - Returns: nil when the row can't be read member by member (its fields text is not one JSON
    ///   object, a member's value is not JSON, or its ACL can't be read): the caller reads it whole.
    public func object(members: StoredMembers) -> StoredObject? {
        // `init(minimumCapacity:)` is specialized here; `reserveCapacity` is not, and looked up the
        // dictionary's generic metadata on each call (as `JSONParser.object` notes).
        var fields = [String: JSON](minimumCapacity: members.utf8.count)
        var unreadable = false
        let whole = JSON.forEachMember(ofObjectText: fieldsText) { key, value in
            guard let name = members.name(of: key) else { return }
            if let v = try? JSON.parse(value) { fields[name] = v } else { unreadable = true }
        }
        // A stored ACL that can't be read must not pass as none (public).
        var acl: ACL?
        if let aclText {
            guard let a = try? ACL(storedText: aclText) else { return nil }
            acl = a
        }
        guard whole, !unreadable else { return nil }
        return StoredObject(className: className, objectId: String(decoding: objectId, as: UTF8.self),
                            createdAt: createdAt, updatedAt: updatedAt, fields: fields, acl: acl)
    }
}
