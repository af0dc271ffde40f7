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

    /// One page for `viewer` (`feed`, inside its snapshot).
    func page(viewer: StoredObject, cursor: FeedCursor?, limit: Int, auth: AuthContext, objects: ObjectService) throws(ParseError) -> JSON {
        let me = WallRules.wallId(of: viewer)
        let keys: [FeedCursor]
        if wall.visibility == .public {
            keys = try publicPage(before: cursor, limit: limit)
        } else {
            // Choose the strategy from the friend count alone, counted only up to the threshold; a
            // large friend list is joined in the database rather than built here.
            let threshold = perAuthorThreshold
            let count = try (wall.friends?.friendCount(of: viewer, upTo: threshold) ?? 0) + 1
            let strategy: FeedStrategy = count <= threshold ? .perAuthor : .globalScan
            // The viewer and their friends are joined from the friend graph in the database (both
            // strategies); a viewer without a provider id has no friends there: only their own posts.
            let authors: [String]? = viewer.fields["fbId"] == nil ? [me] : nil
            keys = try page(authors: authors, viewer: me, strategy: strategy, before: cursor, limit: limit)
        }
        return try render(keys: keys, limit: limit, auth: auth, objects: objects)
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

    func render(keys: [FeedCursor], limit: Int, auth: AuthContext, objects: ObjectService) throws(ParseError) -> JSON {
        let ids = keys.map(\.objectId)
        let byId = try shownImages(ids)
        let images = ids.compactMap { byId[$0] }
        let comments = try store.comments(ofImages: images.map(\.objectId), perImage: Self.latestComments)
        // Authors as `include=user` on these posts shows them (the private-user rule of `WallRules`):
        // the viewer in full, anyone else `objectId`, `name`, `fbId`; of those only these three.
        let imageAuthors = Set(images.compactMap { $0.fields["user"]?["objectId"]?.stringValue })
        var commentAuthors = Set<String>()
        for (_, c) in comments { for x in c.latest { if let u = x.fields["user"]?["objectId"]?.stringValue { commentAuthors.insert(u) } } }
        let (imageVia, commentVia) = (WallSchema.imageClass + ".user", WallSchema.commentClass + ".user")
        // One read of every author; each shown as the pointer that names it reveals it.
        let seen = try objects.includedObjects(className: "_User", idsVia: [imageVia: imageAuthors, commentVia: commentAuthors], auth: auth)
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
        let next: JSON = keys.count == limit ? keys.last.map { .string(Self.encodeCursor($0)) } ?? .null : .null
        return ["images": .array(out), "nextCursor": next]
    }

    /// The fields of an image the feed shows (`render`).
    static let shownImageFields = ["image", "thumbnail", "display", "width", "height", "caption", "user"]
    static let shownImageKeys = shownImageFields.map { Array($0.utf8) }

    /// The page's images by objectId, holding only `shownImageFields` and no ACL (the feed reads
    /// images with the master's rights and applies the wall's rules itself). Where the store hands
    /// out its rows' text (`ObjectStore.forEachStoredRow`), only those members are decoded; else
    /// the rows are decoded whole (`find`).
    func shownImages(_ ids: [String]) throws(ParseError) -> [String: StoredObject] {
        let q = StoredQuery(className: WallSchema.imageClass, predicate: .inList("objectId", ids.map { .string($0) }, negated: false), readers: nil)
        var out: [String: StoredObject] = [:]
        out.reserveCapacity(ids.count)
        var unreadable = false
        let streamed = try rows.forEachStoredRow(q) { row in
            var fields: [String: JSON] = [:]
            let whole = JSON.forEachMember(ofObjectText: row.fieldsText) { key, value in
                guard let i = Self.shownImageKeys.firstIndex(where: { $0.elementsEqual(key) }) else { return }
                fields[Self.shownImageFields[i]] = try? JSON.parse(value)
            }
            if !whole { unreadable = true }
            let id = String(decoding: row.objectId, as: UTF8.self)
            out[id] = StoredObject(className: row.className, objectId: id, createdAt: row.createdAt, updatedAt: row.updatedAt, fields: fields, acl: nil)
        }
        guard streamed, !unreadable else {
            return Dictionary(try rows.find(q).map { ($0.objectId, $0) }, uniquingKeysWith: { a, _ in a })
        }
        return out
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
