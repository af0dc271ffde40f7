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
