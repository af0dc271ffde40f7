import Foundation
import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

/// The friend feed: the `WallImage`s of the viewer and their friends, newest first, with each
/// author's name, the image and thumbnail URLs, the comment count and the latest comments.
///
/// Fan-out on read, adaptive (social-and-uploads.md §5.5): with at most `perAuthorThreshold` authors
/// one index probe per author is cheapest; above it, a newest-first walk of the time index keeping
/// the viewer's authors wins (their posts are dense in time). The walk stops after `scanLimit`
/// entries and a short page is finished per author, so friends who rarely post can't make it crawl.
/// Pages chain by an opaque keyset cursor on (`createdAt`, `objectId`): no skip, so nothing is
/// duplicated or missed while new images arrive.
public final class FeedService: Sendable {
    let store: any FeedStore
    /// The images' rows (public walls, and the page's images by id), read with the master's rights:
    /// the feed applies the wall's rules itself.
    let rows: any ObjectStore
    let wall: WallRules
    /// Authors (friends + 1) up to which the per-author strategy is used; nil: the store's
    /// `suggestedFeedThreshold()` for the data as it is (300 when it has none).
    public let fixedThreshold: Int?
    public let scanLimit: Int
    public static let defaultLimit = 20
    public static let maxLimit = 100
    /// Comments returned per image (the newest ones, oldest first).
    public static let latestComments = 3

    let fileAccess: WallFileAccess?

    public init(store: any FeedStore, rows: any ObjectStore, wall: WallRules, fileAccess: WallFileAccess? = nil,
                perAuthorThreshold: Int? = nil, scanLimit: Int = 50_000) {
        self.store = store; self.rows = rows; self.wall = wall; self.fileAccess = fileAccess
        self.fixedThreshold = perAuthorThreshold; self.scanLimit = scanLimit
    }

    /// The threshold in force now (see `fixedThreshold`).
    public var perAuthorThreshold: Int { fixedThreshold ?? store.suggestedFeedThreshold() ?? 300 }

    /// `POST /functions/feed {limit, cursor}`; `objects` renders the authors as `include=user` would.
    /// - Returns: `{"images":[…], "nextCursor": String|null}`; each image is
    ///   `{objectId, user:{objectId,name,fbId}, createdAt, image:{url}, thumbnail:{url}, width, height, commentCount, comments}`.
    /// - Throws: 209 without a session; 107 for a malformed cursor; 102 for a bad limit.
    public func feed(params: [String: JSON], auth: AuthContext, objects: ObjectService) throws(ParseError) -> JSON {
        guard let viewer = auth.user else { throw ParseError(.invalidSessionToken, "Session token required.") }
        var limit = Self.defaultLimit
        if let l = params["limit"] {
            guard let n = l.intValue, n >= 1 else { throw ParseError(.invalidQuery, "limit must be a positive integer.") }
            limit = min(n, Self.maxLimit)
        }
        var cursor: FeedCursor?
        if let c = params["cursor"], !c.isNull {
            guard let text = c.stringValue, let decoded = Self.decodeCursor(text) else { throw ParseError(.invalidJSON, "Invalid cursor.") }
            cursor = decoded
        }
        // The page's reads (friend count, keys, images, comments, authors) on one snapshot of the data.
        return try store.readingOneSnapshot { () throws(ParseError) -> JSON in
            try page(viewer: viewer, cursor: cursor, limit: limit, auth: auth, objects: objects)
        }
    }

    /// At most this many reads of keys fill one page past images whose ACL hides them from the viewer
    /// (each read asks for what is still missing); a page still short after them ends with a cursor,
    /// and the next page goes on from there.
    static let maxFillRounds = 8

    /// One page for `viewer` (`feed`, inside its snapshot): the newest images of the wall's audience
    /// that the viewer may read by their ACL, as GET would show them (`shownImages`).
    func page(viewer: StoredObject, cursor: FeedCursor?, limit: Int, auth: AuthContext, objects: ObjectService) throws(ParseError) -> JSON {
        let me = WallRules.wallId(of: viewer)
        var strategy = FeedStrategy.perAuthor
        var authors: [String]?
        if wall.visibility == .friends {
            // Choose the strategy from the friend count alone, counted only up to the threshold; a
            // large friend list is joined in the database rather than built here.
            let threshold = perAuthorThreshold
            let count = try (wall.friends?.friendCount(of: viewer, upTo: threshold) ?? 0) + 1
            strategy = count <= threshold ? .perAuthor : .globalScan
            // The viewer and their friends are joined from the friend graph in the database (both
            // strategies); a viewer without a provider id has no friends there: only their own posts.
            authors = viewer.fields["fbId"] == nil ? [me] : nil
        }
        var shown: [StoredObject] = []
        var before = cursor
        var next: FeedCursor?
        for _ in 0..<Self.maxFillRounds {
            let wanted = limit - shown.count
            let keys = wall.visibility == .public
                ? try publicPage(before: before, limit: wanted)
                : try page(authors: authors, viewer: me, strategy: strategy, before: before, limit: wanted)
            shown += try shownImages(keys.map(\.objectId), readers: auth.permissions)
            // Fewer keys than asked: the wall has no older image.
            guard keys.count == wanted, let last = keys.last else { next = nil; break }
            next = last
            before = last
            if shown.count == limit { break }
        }
        return try render(images: shown, next: next, auth: auth, objects: objects)
    }

    /// The strategy the feed uses for `authorCount` authors.
    public func strategy(forAuthors authorCount: Int) -> FeedStrategy {
        authorCount <= perAuthorThreshold ? .perAuthor : .globalScan
    }

    /// Public walls: everyone's posts, by time.
    func publicPage(before: FeedCursor?, limit: Int) throws(ParseError) -> [FeedCursor] {
        let q = StoredQuery(className: WallSchema.imageClass, predicate: FeedCursor.olderThan(before),
                            order: FeedCursor.newestFirst, limit: limit, readers: nil)
        return try rows.find(q).map { FeedCursor(createdAt: $0.createdAt.millisecondsSince1970, objectId: $0.objectId) }
    }

    func page(authors: [String]?, viewer: String, strategy: FeedStrategy, before: FeedCursor?, limit: Int) throws(ParseError) -> [FeedCursor] {
        var (keys, complete) = try store.feedKeys(authors: authors, viewer: viewer, before: before, limit: limit,
                                                  strategy: strategy, scanLimit: scanLimit)
        if !complete, keys.count < limit {
            // The scan hit its cap: finish the page per author below the scan frontier.
            let frontier = keys.last ?? before
            let rest = try store.feedKeys(authors: authors, viewer: viewer, before: frontier, limit: limit - keys.count,
                                          strategy: .perAuthor, scanLimit: scanLimit).keys
            keys += rest
        }
        return keys
    }

    /// The page's JSON: `images` (as `shownImages` read them) with their authors, files, comment counts and
    /// latest comments the viewer may read, and `nextCursor` (`next`, encoded).
    func render(images: [StoredObject], next: FeedCursor?, auth: AuthContext, objects: ObjectService) throws(ParseError) -> JSON {
        let comments = try store.comments(ofImages: images.map(\.objectId), perImage: Self.latestComments, readers: auth.permissions)
        // Authors as `include=user` on these posts shows them (the private-user rule of `WallRules`):
        // the viewer in full, anyone else `objectId`, `name`, `fbId`; of those only these three.
        let imageAuthors = Set(images.compactMap { $0.fields["user"]?["objectId"]?.stringValue })
        var commentAuthors = Set<String>()
        for (_, c) in comments { for x in c.latest { if let u = x.fields["user"]?["objectId"]?.stringValue { commentAuthors.insert(u) } } }
        let (imageVia, commentVia) = (WallSchema.imageClass + ".user", WallSchema.commentClass + ".user")
        // One read of every author; each shown as the pointer that names it reveals it.
        let seen = try objects.includedObjects(className: "_User", idsVia: [imageVia: imageAuthors, commentVia: commentAuthors], auth: auth,
                                               members: ["name", "fbId"])
        var people: [String: JSON] = [:]
        for (id, u) in seen {
            people[id] = ["objectId": .string(id), "name": u["name"] ?? .null, "fbId": u["fbId"] ?? .null]
        }
        func person(_ o: StoredObject) -> JSON {
            guard let id = o.fields["user"]?["objectId"]?.stringValue else { return .null }
            return people[id] ?? ["objectId": .string(id), "name": .null, "fbId": o.fields[WallSchema.authorField] ?? .null]
        }
        // `ServerConfig.fileURL` with its constant part made once per page; one clock read for the signatures.
        let filesURL = objects.config.fileURL("")
        let signing = wall.visibility == .friends ? fileAccess : nil
        let now = ParseDate.now()
        func file(_ v: JSON?) -> JSON {
            guard let name = v?["name"]?.stringValue else { return .null }
            var url = filesURL + ServerConfig.encodeURIComponent(name)
            if let signing { url += "?" + signing.signature(for: name, now: now) }
            return ["name": .string(name), "url": .string(url)]
        }
        var out: [JSON] = []
        for img in images {
            let c = comments[img.objectId] ?? (0, [])
            out.append([
                "objectId": .string(img.objectId),
                "user": person(img),
                "createdAt": .string(img.createdAt.iso),
                "image": file(img.fields["image"]),
                "thumbnail": file(img.fields["thumbnail"]),
                "display": file(img.fields["display"]),
                "width": img.fields["width"] ?? .null,
                "height": img.fields["height"] ?? .null,
                "caption": img.fields["caption"] ?? .null,
                "commentCount": .number(Double(c.count)),
                "comments": .array(c.latest.reversed().map { cm in
                    ["objectId": .string(cm.objectId), "comment": cm.fields["comment"] ?? .null, "user": person(cm),
                     "createdAt": .string(cm.createdAt.iso)]
                }),
            ])
        }
        return ["images": .array(out), "nextCursor": next.map { .string(Self.encodeCursor($0)) } ?? .null]
    }

    /// The fields of an image the feed shows (`render`).
    static let shownImageFields: Set<String> = ["image", "thumbnail", "display", "width", "height", "caption", "user"]

    /// The images with these ids that `readers` may read by their ACL (nil: all), in the order of `ids`,
    /// holding only `shownImageFields` (`ObjectStore.find(_:members:)`: only those members are decoded
    /// where the store hands out its rows' text). The wall's read scope was applied by the keys.
    func shownImages(_ ids: [String], readers: PermissionSet) throws(ParseError) -> [StoredObject] {
        guard !ids.isEmpty else { return [] }
        let q = StoredQuery(className: WallSchema.imageClass, predicate: .inList("objectId", ids.map { .string($0) }, negated: false), readers: readers)
        let byId = Dictionary(try rows.find(q, members: Self.shownImageFields).map { ($0.objectId, $0) }, uniquingKeysWith: { a, _ in a })
        return ids.compactMap { byId[$0] }
    }

    /// Opaque cursor: base64url of `<createdAt ms>:<objectId>`.
    public static func encodeCursor(_ c: FeedCursor) -> String {
        Base64.urlEncode("\(c.createdAt):\(c.objectId)".utf8)
    }

    public static func decodeCursor(_ text: String) -> FeedCursor? {
        guard let raw = Base64.urlDecode(text), let s = String(validating: raw, as: UTF8.self),
              let colon = s.firstIndex(of: ":"), let ms = Int64(s[..<colon]) else { return nil }
        let id = String(s[s.index(after: colon)...])
        guard !id.isEmpty, id.count <= 32, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return FeedCursor(createdAt: ms, objectId: id)
    }
}
