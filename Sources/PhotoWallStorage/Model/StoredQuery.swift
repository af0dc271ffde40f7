import PhotoWallCore

/// A validated `where` clause, independent of any SQL dialect.
///
/// Field paths are `objectId`, `createdAt`, `updatedAt`, a field name, or a dotted path into an
/// Object field (`meta.width`). Values are already in stored encodings.
public indirect enum Predicate: Sendable {
    case all
    case and([Predicate])
    case or([Predicate])
    case nor([Predicate])
    case compare(String, Comparison, QueryValue)
    case inList(String, [QueryValue], negated: Bool)
    case exists(String, Bool)
    /// `$regex` with `$options` of `i`, `m`, `s`, `x`.
    case regex(String, pattern: String, options: String)
    /// `$all`: an Array field containing every value.
    case containsAll(String, [QueryValue])

    public enum Comparison: String, Sendable { case eq, ne, lt, lte, gt, gte }
}

/// A constant in a predicate.
public enum QueryValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case date(ParseDate)
    case pointer(className: String, objectId: String)
    case file(name: String)
    /// Objects and arrays, compared by canonical serialisation.
    case json(JSON)
}

/// A sort key: a field path and its direction.
public struct SortKey: Sendable, Hashable {
    public var path: String
    public var descending: Bool
    public init(path: String, descending: Bool) { self.path = path; self.descending = descending }
}

/// A find or count against one class.
public struct StoredQuery: Sendable {
    public var className: String
    public var predicate: Predicate
    public var order: [SortKey]
    /// At most this many rows (nil = no limit).
    public var limit: Int?
    public var skip: Int
    /// Row-level read filter; nil for the master key.
    public var readers: PermissionSet

    public init(className: String, predicate: Predicate = .all, order: [SortKey] = [], limit: Int? = nil,
                skip: Int = 0, readers: PermissionSet) {
        self.className = className; self.predicate = predicate; self.order = order
        self.limit = limit; self.skip = skip; self.readers = readers
    }
}

/// Metadata of a stored Parse file.
public struct FileRecord: Sendable, Equatable {
    /// `<32 hex>_<safe form of the client's name>` (ASCII letters, digits, `._-`).
    public var name: String
    /// The stored type: from the bytes for the image types the sniffer knows, else as declared.
    public var contentType: String
    public var byteCount: Int64
    /// Lowercase hex SHA-256 of the content; the HTTP `ETag` is derived from it.
    public var sha256: String
    public var createdAt: ParseDate
    /// The client's own file name (any Unicode), for display; nil for server-made files and older records.
    public var originalName: String?
    /// The image type the client declared when it disagreed with the bytes (a GIF sent as
    /// `image/jpeg`); nil when it agreed or named no image type. A wall image refuses such a file.
    public var declaredType: String?
    /// The `_User` objectId the file belongs to: its uploader, or for a photo's thumbnail and
    /// display the photo's author; nil for master-key uploads (and files from before owners).
    /// Only the owner may put the file into an object (the master key excepted).
    public var owner: String?
    /// Made by the server for an object not stored yet (a photo's thumbnail and display, recorded
    /// before their bytes and the object); cleared once the object is stored. A crash in between
    /// leaves it set, and the orphan sweep removes such files that no object names.
    public var unclaimed: Bool
    public init(name: String, contentType: String, byteCount: Int64, sha256: String, createdAt: ParseDate,
                originalName: String? = nil, declaredType: String? = nil, owner: String? = nil, unclaimed: Bool = false) {
        self.name = name; self.contentType = contentType; self.byteCount = byteCount
        self.sha256 = sha256; self.createdAt = createdAt
        self.originalName = originalName; self.declaredType = declaredType
        self.owner = owner; self.unclaimed = unclaimed
    }
}
