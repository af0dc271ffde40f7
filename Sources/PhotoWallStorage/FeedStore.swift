import PhotoWallCore

/// A position in a newest-first feed: the last row seen, compared as the tuple (`createdAt`, `objectId`).
public struct FeedCursor: Sendable, Hashable, Comparable {
    public var createdAt: Int64
    public var objectId: String
    public init(createdAt: Int64, objectId: String) { self.createdAt = createdAt; self.objectId = objectId }
    public static func < (a: FeedCursor, b: FeedCursor) -> Bool { (a.createdAt, a.objectId) < (b.createdAt, b.objectId) }
}

/// How a feed page is found. - Source: social-and-uploads.md §5.4–5.5.
public enum FeedStrategy: String, Sendable {
    /// One index probe per author (`(userFBId, createdAt)`), merged: cheap for few authors.
    case perAuthor
    /// Walk the `createdAt` index newest first, keeping rows whose author is in the viewer's set: cheap when
    /// the set is large (its posts are dense in time).
    case globalScan
}

/// The queries behind the friend feed, keyset-paginated on (`createdAt`, `objectId`), never skip.
public protocol FeedStore: Sendable {
    /// Keys of the newest `WallImage`s by `authors` strictly older than `before`, newest first.
    /// - Parameters:
    ///   - authors: the authors' wall ids; nil means `viewerFBId` and their friends from the friend graph
    ///     (joined in the database, so a large set is never built in memory).
    ///   - scanLimit: `.globalScan` stops after this many index entries; the caller finishes a short page per author.
    func feedKeys(authors: [String]?, viewerFBId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                  scanLimit: Int) throws(ParseError) -> (keys: [FeedCursor], scannedToEnd: Bool)
    /// The newest `perImage` comments of each image (newest first) and each image's comment count.
    func comments(ofImages ids: [String], perImage: Int) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])]
    /// The author count up to which `.perAuthor` is the cheaper strategy for the data as it is now
    /// (it grows with the number of images), or nil to leave it to the caller's fixed threshold.
    func suggestedFeedThreshold() -> Int?
}

extension FeedStore {
    public func suggestedFeedThreshold() -> Int? { nil }
}
