import PhotoWallCore

/// A position in a newest-first feed: the last row seen, compared as the tuple (`createdAt`, `objectId`).
public struct FeedCursor: Sendable, Hashable, Comparable {
    public var createdAt: Int64
    public var objectId: String
    public init(createdAt: Int64, objectId: String) { self.createdAt = createdAt; self.objectId = objectId }
    public static func < (a: FeedCursor, b: FeedCursor) -> Bool { (a.createdAt, a.objectId) < (b.createdAt, b.objectId) }

    /// The feed's order as `StoredQuery` sort keys: `createdAt` then `objectId`, both descending.
    public static let newestFirst = [SortKey(path: "createdAt", descending: true), SortKey(path: "objectId", descending: true)]

    /// Rows strictly older than `c` in (`createdAt`, `objectId`) order, as a `StoredQuery` predicate; everything when nil.
    public static func olderThan(_ c: FeedCursor?) -> Predicate {
        guard let c else { return .all }
        let at = QueryValue.date(ParseDate(millisecondsSince1970: c.createdAt))
        return .or([.compare("createdAt", .lt, at), .and([.compare("createdAt", .eq, at), .compare("objectId", .lt, .string(c.objectId))])])
    }
}

/// How a feed page is found. - Source: social-and-uploads.md §5.4–5.5.
public enum FeedStrategy: String, Sendable {
    /// One index probe per author (`(author, createdAt)`), merged: cheap for few authors.
    case perAuthor
    /// Walk the `createdAt` index newest first, keeping rows whose author is in the viewer's set: cheap when
    /// the set is large (its posts are dense in time).
    case globalScan
}

/// The queries behind the friend feed, keyset-paginated on (`createdAt`, `objectId`), never skip.
/// What is projected (which classes and fields) is the adapter's `FeedProjection`; an adapter
/// opened without one answers every query with nothing. Held by the feed service.
/// Implementations: `SQLiteAdapter`, `PostgresAdapter`, each in its fastest native form.
public protocol FeedStore: Sendable {
    /// Keys of the newest images (`FeedProjection.imageClass`) by `authors` strictly older than `before`, newest first.
    /// - Parameters:
    ///   - authors: the authors' ids (`FeedProjection.authorField` values); nil means `viewerId` and their friends from the friend graph
    ///     (joined in the database, so a large set is never built in memory).
    ///   - scanLimit: `.globalScan` stops after this many index entries; the caller finishes a short page per author.
    func feedKeys(authors: [String]?, viewer viewerId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                  scanLimit: Int) throws(ParseError) -> (keys: [FeedCursor], scannedToEnd: Bool)
    /// The newest `perImage` comments (`FeedProjection.commentClass`) of each image that `readers`
    /// may read by their ACL (nil: all, the master key), newest first, and each image's count of those
    /// comments (an image without comments has count 0 or no entry): a kept counter, less the comments
    /// not everyone may read that `readers` may not (an index of such comments only).
    /// - Parameter members: the comment fields the caller reads: each comment holds at least these
    ///   (when present) and its ACL; a store that hands out its rows' text decodes only them. nil:
    ///   whole comments.
    func comments(ofImages ids: [String], perImage: Int, readers: PermissionSet,
                  members: StoredMembers?) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])]
    /// `comments(ofImages:perImage:readers:members:)` with each latest comment handed to `body` as the
    /// row's stored text (`StoredRowView`, valid only during the call; the ACL was applied by `readers`),
    /// image by image in the order of `ids`, newest first, instead of decoded.
    /// - Returns: each image's count, as `comments` counts; nil when the store doesn't hand out its
    ///   rows' text (nothing was passed to `body`: the caller uses `comments`).
    func forEachLatestComment(ofImages ids: [String], perImage: Int, readers: PermissionSet,
                              _ body: (_ imageId: String, _ row: StoredRowView) -> Void) throws(ParseError) -> [String: Int]?
    /// The author count up to which `.perAuthor` is the cheaper strategy for the data as it is now
    /// (it grows with the number of images), or nil to leave it to the caller's fixed threshold.
    func suggestedFeedThreshold() -> Int?
    /// Runs `body` (the reads of one feed page: these queries and the object store's, on this
    /// thread) on one snapshot of the data where the store can: a page whose comment counts,
    /// latest comments and authors all come from the same committed state. The default runs
    /// `body` as it is (each query its own snapshot).
    /// - Throws: what `body` throws; 1 (internal) when the snapshot can't be opened.
    func readingOneSnapshot<T: Sendable>(_ body: () throws(ParseError) -> T) throws(ParseError) -> T
}

extension FeedStore {
    /// `comments(ofImages:perImage:readers:members:)` with whole comments.
    public func comments(ofImages ids: [String], perImage: Int, readers: PermissionSet) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])] {
        try comments(ofImages: ids, perImage: perImage, readers: readers, members: nil)
    }
    public func forEachLatestComment(ofImages ids: [String], perImage: Int, readers: PermissionSet,
                                     _ body: (_ imageId: String, _ row: StoredRowView) -> Void) throws(ParseError) -> [String: Int]? { nil }
    public func suggestedFeedThreshold() -> Int? { nil }
    public func readingOneSnapshot<T: Sendable>(_ body: () throws(ParseError) -> T) throws(ParseError) -> T { try body() }
}
