import PhotoWallCore

/// `FeedStore` on any `DatabaseAdapter`, through ordinary queries: one query per author (per-author
/// strategy) or one `userFBId IN (…)` query ordered by time (scan strategy). Adapters with a faster
/// native form (SQLite's) implement `FeedStore` themselves.
public struct GenericFeedStore: FeedStore {
    public let database: any DatabaseAdapter
    public let friends: (any FriendGraphStore)?
    public init(database: any DatabaseAdapter, friends: (any FriendGraphStore)?) { self.database = database; self.friends = friends }

    public static let newestFirst = [SortKey(path: "createdAt", descending: true), SortKey(path: "objectId", descending: true)]

    /// Rows strictly older than `c` in (`createdAt`, `objectId`) order; everything when nil.
    public static func olderThan(_ c: FeedCursor?) -> Predicate {
        guard let c else { return .all }
        let at = QueryValue.date(ParseDate(millisecondsSince1970: c.createdAt))
        return .or([.compare("createdAt", .lt, at), .and([.compare("createdAt", .eq, at), .compare("objectId", .lt, .string(c.objectId))])])
    }

    public func feedKeys(authors: [String]?, viewerFBId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                         scanLimit: Int) throws(ParseError) -> (keys: [FeedCursor], scannedToEnd: Bool) {
        var all = authors ?? [viewerFBId]
        if authors == nil, let friends { all += try friends.friends(of: viewerFBId) }
        let authors = all
        func keys(_ p: Predicate, _ n: Int) throws(ParseError) -> [FeedCursor] {
            try database.find(StoredQuery(className: "WallImage", predicate: .and([p, Self.olderThan(before)]), order: Self.newestFirst,
                                          limit: n, readers: nil))
                .map { FeedCursor(createdAt: $0.createdAt.millisecondsSince1970, objectId: $0.objectId) }
        }
        switch strategy {
        case .perAuthor:
            var all: [FeedCursor] = []
            for a in Set(authors) { all += try keys(.compare("userFBId", .eq, .string(a)), limit) }
            all.sort(by: >)
            return (Array(all.prefix(limit)), true)
        case .globalScan:
            return (try keys(.inList("userFBId", authors.map { .string($0) }, negated: false), limit), true)
        }
    }

    public func comments(ofImages ids: [String], perImage: Int) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])] {
        var out: [String: (count: Int, latest: [StoredObject])] = [:]
        for id in ids {
            let p = Predicate.compare("imageObjectId", .eq, .string(id))
            let count = try database.count(StoredQuery(className: "WallImageComment", predicate: p, readers: nil))
            let latest = count == 0 ? [] : try database.find(StoredQuery(className: "WallImageComment", predicate: p, order: Self.newestFirst,
                                                                         limit: perImage, readers: nil))
            out[id] = (count, latest)
        }
        return out
    }
}
