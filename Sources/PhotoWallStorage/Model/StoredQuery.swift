import PhotoWallCore
import Synchronization

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
    /// The value at the path (an Array field: any element) is the scope's viewer or one of the
    /// viewer's friends in the store's own friend graph (`FriendGraphStore`, `_FRIENDS`). A friends-only
    /// read scope: the store evaluates it against its friend table as the query runs, so its cost does
    /// not grow with the friend list (`FriendScope`). In memory (`matches`) it is the viewer's list.
    case friendOf(String, FriendScope)

    public enum Comparison: String, Sendable { case eq, ne, lt, lte, gt, gte }
}

/// Whose friends a `Predicate.friendOf` admits: `viewer` (a `_FRIENDS.userId`, the user's
/// Facebook id) and its friends as the friend graph holds them when the query runs.
///
/// A store compiles it to a subquery on its friend table: per row an index probe on
/// `(userId, friendId)` when the predicate already selects a few rows by `objectId`
/// (`Predicate.selectsFewObjectIds`: a GET, an `include`), else the viewer's friend rows as the set
/// the query selects from (the `userFBId` index drives). Either way nothing is bound per friend.
/// In memory (`Predicate.matches`, for LiveQuery events and `include` filtering) it uses
/// `members`, loaded once per scope.
public struct FriendScope: Sendable {
    /// The viewer's id in the friend graph.
    public let viewer: String
    let list: MemberList

    /// - Parameter members: the viewer's friends (and the viewer) for in-memory evaluation; called
    ///   at most once per scope, and only when an object is matched in memory.
    public init(viewer: String, members: @escaping @Sendable () throws(ParseError) -> [String]) {
        self.viewer = viewer
        list = MemberList(load: members)
    }

    /// The viewer and its friends (loaded on first use, then kept).
    /// - Throws: what loading the friend list throws.
    public func members() throws(ParseError) -> Set<String> {
        try list.get(viewer)
    }

    /// The loaded member set, shared by copies of one scope.
    final class MemberList: Sendable {
        let load: @Sendable () throws(ParseError) -> [String]
        let loaded = Mutex<Set<String>?>(nil)
        init(load: @escaping @Sendable () throws(ParseError) -> [String]) { self.load = load }

        func get(_ viewer: String) throws(ParseError) -> Set<String> {
            if let known = loaded.withLock({ $0 }) { return known }
            var set = Set(try load())
            set.insert(viewer)
            loaded.withLock { $0 = set }
            return set
        }
    }
}

extension Predicate {
    /// Whether the predicate keeps only the few rows it names by `objectId`: one of its top-level
    /// conjuncts is `objectId` equal to a value or in a list of at most `limit` values. A store then
    /// evaluates a `friendOf` scope per row rather than as a set to select from.
    public func selectsFewObjectIds(limit: Int = 64) -> Bool {
        switch self {
        case .compare("objectId", .eq, _): return true
        case .inList("objectId", let values, negated: false): return values.count <= limit
        case .and(let parts): return parts.contains { $0.selectsFewObjectIds(limit: limit) }
        default: return false
        }
    }

    /// Every field path the predicate tests, in order (with repeats).
    public var paths: [String] {
        switch self {
        case .all: return []
        case .and(let ps), .or(let ps), .nor(let ps): return ps.flatMap(\.paths)
        case .compare(let path, _, _), .inList(let path, _, _), .exists(let path, _), .regex(let path, _, _), .containsAll(let path, _),
             .friendOf(let path, _):
            return [path]
        }
    }

    /// Loads the members of each `friendOf` scope in the predicate now, so that evaluating it in
    /// memory (`matches`) afterwards reports a friend list that can't be read instead of matching
    /// nothing. - Returns: the predicate itself. - Throws: what loading a friend list throws.
    public func loadingFriendScopes() throws(ParseError) -> Predicate {
        switch self {
        case .friendOf(_, let scope): _ = try scope.members()
        case .and(let parts), .or(let parts), .nor(let parts):
            for p in parts { _ = try p.loadingFriendScopes() }
        default: break
        }
        return self
    }
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
