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
    /// - Returns: the JSON text (UTF-8) of `{"images":[…], "nextCursor": String|null}`; each image is
    ///   `{caption, commentCount, comments:[{comment, createdAt, objectId, user}], createdAt, display:{name,url},
    ///   height, image:{name,url}, objectId, thumbnail:{name,url}, user:{fbId,name,objectId}, width}`, keys
    ///   sorted as `JSON.serialized` writes them.
    /// - Throws: 209 without a session; 107 for a malformed cursor; 102 for a bad limit.
    public func feed(params: [String: JSON], auth: AuthContext, objects: ObjectService) throws(ParseError) -> [UInt8] {
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
        // The page's reads (friend count, keys, images, comments, authors) on one snapshot of the data;
        // the authors' cache generation taken before it began (`ObjectService.includeTargets`).
        let cached = objects.includeCacheGeneration()
        return try store.readingOneSnapshot { () throws(ParseError) -> [UInt8] in
            try page(viewer: viewer, cursor: cursor, limit: limit, auth: auth, objects: objects, cached: cached)
        }
    }

    /// At most this many reads of keys fill one page past images whose ACL hides them from the viewer
    /// (each read asks for what is still missing); a page still short after them ends with a cursor,
    /// and the next page goes on from there.
    static let maxFillRounds = 8

    /// One page for `viewer` (`feed`, inside its snapshot): the newest images of the wall's audience
    /// that the viewer may read by their ACL, as GET would show them (`shownImages`). `cached`: the
    /// authors' cache generation taken before the snapshot began (`render`).
    func page(viewer: StoredObject, cursor: FeedCursor?, limit: Int, auth: AuthContext, objects: ObjectService,
              cached: UInt64) throws(ParseError) -> [UInt8] {
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
        var shown: [ShownImage] = []
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
        return try render(images: shown, next: next, auth: auth, objects: objects, cached: cached)
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

    /// The page's JSON text: `images` (as `shownImages` read them) with their authors, files, comment
    /// counts and latest comments the viewer may read, and `nextCursor` (`next`, encoded); written
    /// straight into bytes (`JSONWriter`), keys sorted. `cached`: `ObjectService.includeCacheGeneration()`
    /// taken before the page's snapshot began, for the authors' read.
    func render(images: [ShownImage], next: FeedCursor?, auth: AuthContext, objects: ObjectService,
                cached: UInt64) throws(ParseError) -> [UInt8] {
        let comments = try shownComments(ofImages: images.map(\.objectId), readers: auth.permissions)
        // Authors as `include=user` on these posts shows them (the private-user rule of `WallRules`):
        // the viewer in full, anyone else `objectId`, `name`, `fbId`; of those only these three.
        let imageAuthors = Set(images.compactMap(\.author))
        var commentAuthors = Set<String>()
        for (_, c) in comments { for x in c.latest { if let u = x.author { commentAuthors.insert(u) } } }
        let (imageVia, commentVia) = (WallSchema.imageClass + ".user", WallSchema.commentClass + ".user")
        // One read of every author; each shown as the pointer that names it reveals it.
        let people = try objects.includedMembers(className: "_User", idsVia: [imageVia: imageAuthors, commentVia: commentAuthors], auth: auth,
                                                 members: ["fbId", "name"], readsSince: cached)
        var out = JSONWriter(capacity: 1024 * max(1, images.count))
        // An author `include` doesn't show (a user that no longer exists: both pointers reveal their
        // targets) is named by `providerId` alone (JSON text): a comment's `userFBId`; an image's isn't
        // read (null).
        func person(_ author: String?, providerId: [UInt8]?) {
            guard let id = author else { out.null(); return }
            out.beginObject()
            if let shown = people[id] {
                out.key("fbId"); out.value(shown[0] ?? .null)
                out.key("name"); out.value(shown[1] ?? .null)
            } else {
                out.key("fbId"); out.text(providerId)
                out.key("name"); out.null()
            }
            out.key("objectId"); out.string(id)
            out.endObject()
        }
        // `ServerConfig.fileURL`'s constant part, escaped, once per page (without its opening quote);
        // one expiry for the signatures.
        let filesURL = objects.config.fileURLJSONPrefix().dropFirst()
        let signing = wall.visibility == .friends ? fileAccess?.signer() : nil
        func file(_ name: String?) {
            guard let name else { out.null(); return }
            out.beginObject()
            out.key("name"); out.string(name)
            out.key("url")
            out.string { text in
                text.append(contentsOf: filesURL)
                // Percent-encoded: only bytes JSON leaves as they are.
                var encoded = ServerConfig.encodeURIComponent(name)
                encoded.withUTF8 { text.append(contentsOf: $0) }
                if let signing {
                    text.append(UInt8(ascii: "?"))
                    signing.appendSignature(for: name, to: &text)
                }
            }
            out.endObject()
        }
        out.beginObject()
        out.key("images")
        out.beginArray()
        for img in images {
            let c = comments[img.objectId] ?? (0, [])
            out.beginObject()
            out.key("caption"); out.text(img.caption)
            out.key("commentCount"); out.number(c.count)
            out.key("comments")
            out.beginArray()
            for cm in c.latest.reversed() {
                out.beginObject()
                out.key("comment"); out.text(cm.comment)
                out.key("createdAt"); out.string(cm.createdAt.iso)
                out.key("objectId"); out.string(cm.objectId)
                out.key("user"); person(cm.author, providerId: cm.providerId)
                out.endObject()
            }
            out.endArray()
            out.key("createdAt"); out.string(img.createdAt.iso)
            out.key("display"); file(img.display)
            out.key("height"); out.text(img.height)
            out.key("image"); file(img.image)
            out.key("objectId"); out.string(img.objectId)
            out.key("thumbnail"); file(img.thumbnail)
            out.key("user"); person(img.author, providerId: nil)
            out.key("width"); out.text(img.width)
            out.endObject()
        }
        out.endArray()
        out.key("nextCursor")
        if let next { out.string(Self.encodeCursor(next)) } else { out.null() }
        out.endObject()
        return out.bytes
    }

    /// The fields of an image the feed shows (`render`, `ShownImage`).
    static let shownImageFields: Set<String> = ["image", "thumbnail", "display", "width", "height", "caption", "user"]
    /// The fields of a comment the feed shows (`render`): the author's provider id names an author
    /// `include` doesn't show.
    static let shownCommentFields = StoredMembers(["comment", "user", WallSchema.authorField])

    /// The images with these ids that `readers` may read by their ACL (nil: all), in the order of `ids`,
    /// as the feed shows them (`ShownImage`): read from the rows' text where the store hands it out
    /// (`ObjectStore.forEachStoredRow`), else decoded (`ObjectStore.find(_:members:)`). The wall's read
    /// scope was applied by the keys; the ACL is applied by the store, by `readers`, either way.
    func shownImages(_ ids: [String], readers: PermissionSet) throws(ParseError) -> [ShownImage] {
        guard !ids.isEmpty else { return [] }
        let q = StoredQuery(className: WallSchema.imageClass, predicate: .inList("objectId", ids.map { .string($0) }, negated: false), readers: readers)
        var read: [ShownImage] = []
        read.reserveCapacity(ids.count)
        var unreadable = false
        let streamed = try rows.forEachStoredRow(q) { row in
            guard !unreadable else { return }
            if let image = ShownImage(row: row) { read.append(image) } else { unreadable = true }
        }
        if !streamed || unreadable {
            read = try rows.find(q, members: Self.shownImageFields).map(ShownImage.init(_:))
        }
        let byId = Dictionary(read.map { ($0.objectId, $0) }, uniquingKeysWith: { a, _ in a })
        return ids.compactMap { byId[$0] }
    }

    /// Each image's count of the comments `readers` may read by their ACL and its latest ones (newest
    /// first), as the feed shows them (`ShownComment`): read from the rows' text where the store hands it
    /// out (`FeedStore.forEachLatestComment`), else decoded (`FeedStore.comments`, `shownCommentFields`).
    func shownComments(ofImages ids: [String], readers: PermissionSet) throws(ParseError) -> [String: (count: Int, latest: [ShownComment])] {
        var out = [String: (count: Int, latest: [ShownComment])](minimumCapacity: ids.count)
        var unreadable = false
        let counts = try store.forEachLatestComment(ofImages: ids, perImage: Self.latestComments, readers: readers) { id, row in
            guard !unreadable else { return }
            if let c = ShownComment(row: row) { out[id, default: (0, [])].latest.append(c) } else { unreadable = true }
        }
        if let counts, !unreadable {
            for (id, n) in counts { out[id, default: (0, [])].count = n }
            return out
        }
        let decoded = try store.comments(ofImages: ids, perImage: Self.latestComments, readers: readers, members: Self.shownCommentFields)
        return decoded.mapValues { ($0.count, $0.latest.map(ShownComment.init(_:))) }
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

/// An image as the feed shows it (`FeedService.shownImageFields`): its shown values as JSON text, its
/// files' names and its author, without a `[String: JSON]` per image.
struct ShownImage {
    let objectId: String
    let createdAt: ParseDate
    /// `caption`, `width` and `height` as JSON text; nil when absent (shown as null).
    var caption: [UInt8]?, width: [UInt8]?, height: [UInt8]?
    /// The names of the `image`, `thumbnail` and `display` files; nil when absent or not a file with a name.
    var image: String?, thumbnail: String?, display: String?
    /// The objectId the `user` pointer names.
    var author: String?

    /// From a decoded image (holding at least the shown fields).
    init(_ o: StoredObject) {
        objectId = o.objectId; createdAt = o.createdAt
        caption = o.fields["caption"]?.serialized; width = o.fields["width"]?.serialized; height = o.fields["height"]?.serialized
        image = o.fields["image"]?["name"]?.stringValue
        thumbnail = o.fields["thumbnail"]?["name"]?.stringValue
        display = o.fields["display"]?["name"]?.stringValue
        author = o.fields["user"]?["objectId"]?.stringValue
    }

    /// From a stored row's text: the shown values' text as stored, a file's name and the author's id read
    /// in place when stored plain (`StoredRowView.storedFileName`, `storedPointerId`), other file and
    /// pointer values decoded.
    /// - Returns: nil when the text can't be read member by member (the caller decodes the row).
    init?(row: StoredRowView) {
        objectId = String(decoding: row.objectId, as: UTF8.self); createdAt = row.createdAt
        var readable = true
        func fileName(_ value: UnsafeBufferPointer<UInt8>) -> String? {
            StoredValue.string(StoredRowView.storedFileName(value), else: "name", of: value, readable: &readable)
        }
        func pointerId(_ value: UnsafeBufferPointer<UInt8>) -> String? {
            StoredValue.string(StoredRowView.storedPointerId(value), else: "objectId", of: value, readable: &readable)
        }
        var (caption, width, height): ([UInt8]?, [UInt8]?, [UInt8]?) = (nil, nil, nil)
        var (image, thumbnail, display, author): (String?, String?, String?, String?) = (nil, nil, nil, nil)
        let whole = JSON.forEachMember(ofObjectText: row.fieldsText) { key, value in
            // Keys compared as bytes: no String per member.
            if key.bytesEqual("caption") { caption = Array(value) }
            else if key.bytesEqual("width") { width = Array(value) }
            else if key.bytesEqual("height") { height = Array(value) }
            else if key.bytesEqual("image") { image = fileName(value) }
            else if key.bytesEqual("thumbnail") { thumbnail = fileName(value) }
            else if key.bytesEqual("display") { display = fileName(value) }
            else if key.bytesEqual("user") { author = pointerId(value) }
        }
        guard whole, readable else { return nil }
        self.caption = caption; self.width = width; self.height = height
        self.image = image; self.thumbnail = thumbnail; self.display = display; self.author = author
    }
}

/// A comment as the feed shows it (`FeedService.shownCommentFields`): `comment` and the author's provider
/// id as JSON text, and the author's objectId, without a `[String: JSON]` per comment.
struct ShownComment {
    let objectId: String
    let createdAt: ParseDate
    /// `comment` and `userFBId` as JSON text; nil when absent (shown as null).
    var comment: [UInt8]?, providerId: [UInt8]?
    /// The objectId the `user` pointer names.
    var author: String?

    /// `WallSchema.authorField`'s bytes, as stored keys are compared.
    static let providerKey = Array(WallSchema.authorField.utf8)

    /// From a decoded comment (holding at least the shown fields).
    init(_ o: StoredObject) {
        objectId = o.objectId; createdAt = o.createdAt
        comment = o.fields["comment"]?.serialized
        providerId = o.fields[WallSchema.authorField]?.serialized
        author = o.fields["user"]?["objectId"]?.stringValue
    }

    /// From a stored row's text: the shown values' text as stored, the author's id read in place when
    /// stored plain (`StoredRowView.storedPointerId`), else decoded.
    /// - Returns: nil when the text can't be read member by member (the caller decodes the comments).
    init?(row: StoredRowView) {
        objectId = String(decoding: row.objectId, as: UTF8.self); createdAt = row.createdAt
        var readable = true
        var (comment, providerId, author): ([UInt8]?, [UInt8]?, String?) = (nil, nil, nil)
        let whole = JSON.forEachMember(ofObjectText: row.fieldsText) { key, value in
            if key.bytesEqual("comment") { comment = Array(value) }
            else if Self.providerKey.withUnsafeBufferPointer({ key.bytesEqual($0) }) { providerId = Array(value) }
            else if key.bytesEqual("user") {
                author = StoredValue.string(StoredRowView.storedPointerId(value), else: "objectId", of: value, readable: &readable)
            }
        }
        guard whole, readable else { return nil }
        self.comment = comment; self.providerId = providerId; self.author = author
    }
}

/// A string the feed reads of a stored value (`ShownImage`, `ShownComment`): a File's `name`, a pointer's
/// `objectId`.
enum StoredValue {
    /// `inPlace` (the bytes `StoredRowView.storedFileName` or `storedPointerId` found in `value`) as a
    /// `String`; without them, the string `member` of `value` decoded. A `value` that is not JSON sets
    /// `readable` to false (the caller decodes the whole row) and gives nil.
    static func string(_ inPlace: UnsafeBufferPointer<UInt8>?, else member: String, of value: UnsafeBufferPointer<UInt8>,
                       readable: inout Bool) -> String? {
        if let inPlace { return String(decoding: inPlace, as: UTF8.self) }
        guard let v = try? JSON.parse(value) else { readable = false; return nil }
        return v[member]?.stringValue
    }
}
