import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// The friend feed over `feedProjection` (social-and-uploads.md §5.4–5.5).
///
/// `_FEED(objectId, createdAt, author)` mirrors every image (`FeedProjection.imageClass`, its
/// `authorField` as `author`) with covering indexes for both feed strategies: SQLite 3.40 can't
/// cover from an index on a JSON expression, so a probe would otherwise read each image's whole
/// row. The objects store keeps it in the same transaction as the image (`project`, `unproject`).
extension SQLiteAdapter: FeedStore {
    /// Mirrors `o` into `_FEED` when it is an image of the projection (inside the write transaction).
    func project(_ conn: SQLiteConnection, _ o: StoredObject) throws {
        guard let p = feedProjection, o.className == p.imageClass else { return }
        try conn.run("INSERT INTO _FEED(objectId, createdAt, author) VALUES (?,?,?) ON CONFLICT(objectId) DO UPDATE SET author = excluded.author",
                     [.text(o.objectId), .integer(o.createdAt.millisecondsSince1970), o.fields[p.authorField]?.stringValue.map { .text($0) } ?? .null])
    }

    /// Drops the `_FEED` rows of deleted images of `className` (inside the write transaction):
    /// the row `objectId`, or with nil every row whose image is gone.
    func unproject(_ conn: SQLiteConnection, className: String, objectId: String?) throws {
        guard let p = feedProjection, className == p.imageClass else { return }
        if let objectId {
            try conn.run("DELETE FROM _FEED WHERE objectId = ?", [.text(objectId)])
        } else {
            try conn.run("DELETE FROM _FEED WHERE objectId NOT IN (SELECT objectId FROM \(Self.table(className)))")
        }
    }

    /// Authors (friends + 1) up to which `.perAuthor` beats `.globalScan` on SQLite, for `images`
    /// images: √(k × images), at least 50. The walk's cost grows with images ÷ authors (it passes
    /// the other authors' posts), the probes' with the author count, so they cross near √(k × images);
    /// k = 0.3 is measured (1M images, 100k users, both forms forced with `--feed-threshold`: at 500
    /// friends the walk took p50 5.7 ms, the per-author statement 5.2 ms, about 2.2 ms of either being
    /// the rest of the page; the walk's share grows with the images, the probes' does not), so 500
    /// friends take the probes from about 1M images on (threshold ≈ 550; ≈ 1,100 at 4M).
    public static func feedThreshold(images: Double) -> Int { max(50, Int((sqliteFeedK * max(0, images)).squareRoot())) }
    static let sqliteFeedK = 0.3

    /// One read transaction on this thread's reader for the whole of `body` (`SQLiteDatabase.readSnapshot`):
    /// the page's statements share one snapshot and one read lock.
    public func readingOneSnapshot<T: Sendable>(_ body: () throws(ParseError) -> T) throws(ParseError) -> T {
        try guarded { try db.readSnapshot { () throws -> T in try body() } }
    }

    /// `feedThreshold` for the image count (the image table's largest rowid: rows are appended, so
    /// it is the count plus deletions, read from the end of the table), read at most once a minute.
    public func suggestedFeedThreshold() -> Int? {
        guard let p = feedProjection else { return nil }
        let now = ContinuousClock.now
        if let (at, value) = thresholdCache.withLock({ $0 }), now - at < .seconds(60) { return value }
        let images = (try? guarded {
            try db.read { conn in
                try conn.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text("c_" + p.imageClass)]).isEmpty
                    ? 0 : try conn.query("SELECT max(rowid) FROM \(Self.table(p.imageClass))").first?.first?.integer ?? 0
            }
        }) ?? 0
        let value = Self.feedThreshold(images: Double(images))
        thresholdCache.withLock { $0 = (now, value) }
        return value
    }

    public func feedKeys(authors: [String]?, viewer viewerId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                         scanLimit: Int) throws(ParseError) -> (keys: [FeedCursor], scannedToEnd: Bool) {
        guard feedProjection != nil, limit > 0 else { return ([], true) }
        let cursor = before ?? FeedCursor(createdAt: Int64.max, objectId: "")
        if authors == nil, strategy == .perAuthor {
            // The viewer and their friends from the friend table (the viewer's own row left out of
            // the friends, so `UNION ALL` needs no de-duplicating temporary table).
            let audience = "(SELECT friendId AS a FROM _FRIENDS WHERE userId = ?1 AND friendId <> ?1 UNION ALL SELECT ?1) AS au"
            // The first page has no lower bound: each probe starts at the author's newest entry
            // without testing every entry against a cursor (about a tenth of the statement at 500 friends).
            let older = { (t: String) in
                before == nil ? "1" : "(\(t).createdAt < ?2 OR (\(t).createdAt = ?2 AND \(t).objectId < ?3))"
            }
            let cursorArgs: [SQLValue] = [.text(viewerId), .integer(cursor.createdAt), .text(before == nil ? "\u{10FFFF}" : cursor.objectId)]
            // One probe per author on the covering (author, createdAt, objectId) index, read newest
            // first, into one top-`limit` sort. Each author's entries arrive in the page's order, so
            // once the sort holds `limit` keys SQLite leaves an author's range at its first entry
            // older than all of them (its ORDER BY … LIMIT early exit for an ordered inner loop):
            // a prolific author costs at most `limit` entries, the others what they have. (This
            // replaced a form that first probed each author's `limit`-th newest to bound it: 2–3×
            // slower on the usual wall, 0.7 against 0.26 ms at 500 friends on 1M images.)
            let sql = """
                SELECT f.createdAt, f.objectId FROM \(audience) JOIN _FEED f ON f.author = au.a
                WHERE \(older("f")) ORDER BY f.createdAt DESC, f.objectId DESC LIMIT ?4
                """
            return try guarded {
                try db.read { conn in
                    var keys: [FeedCursor] = []
                    try conn.forEachRow(sql, cursorArgs + [.integer(Int64(limit))]) { row in
                        keys.append(FeedCursor(createdAt: row[0].integer ?? 0, objectId: row[1].text ?? ""))
                    }
                    return (keys, true)
                }
            }
        }
        let older = "(createdAt < ? OR (createdAt = ? AND objectId < ?))"
        let cursorArgs: [SQLValue] = [.integer(cursor.createdAt), .integer(cursor.createdAt), .text(before == nil ? "\u{10FFFF}" : cursor.objectId)]
        return try guarded {
            try db.read { conn in
                switch strategy {
                case .perAuthor:
                    // One probe per author on the covering (author, createdAt, objectId) index.
                    let sql = "SELECT createdAt, objectId FROM _FEED WHERE author = ? AND \(older) ORDER BY createdAt DESC, objectId DESC LIMIT ?"
                    var keys: [FeedCursor] = []
                    for author in Set(authors ?? []) {
                        try conn.forEachRow(sql, [.text(author)] + cursorArgs + [.integer(Int64(limit))]) { row in
                            keys.append(FeedCursor(createdAt: row[0].integer ?? 0, objectId: row[1].text ?? ""))
                        }
                    }
                    keys.sort(by: >)
                    return (Array(keys.prefix(limit)), true)
                case .globalScan:
                    // Newest first along the covering (createdAt, objectId, author) index, at most `scanLimit`
                    // entries, keeping the viewer's and their friends' (the friend table joins as an
                    // ephemeral index), stopping at a full page.
                    var keys: [FeedCursor] = []
                    let window = "SELECT createdAt, objectId, author FROM _FEED INDEXED BY i_FEED_time WHERE \(older) ORDER BY createdAt DESC, objectId DESC LIMIT ?"
                    if let authors {
                        let audience = Set(authors)
                        var scanned = 0
                        try conn.forEachRow(window, cursorArgs + [.integer(Int64(scanLimit))], until: { row in
                            scanned += 1
                            if let a = row[2].text, audience.contains(a) {
                                keys.append(FeedCursor(createdAt: row[0].integer ?? 0, objectId: row[1].text ?? ""))
                            }
                            return keys.count >= limit
                        })
                        return (keys, scanned < scanLimit || keys.count >= limit)
                    }
                    // One primary-key probe of the friend table per entry walked: with `IN (SELECT …)`
                    // SQLite would first build the whole friend list into a temporary index (5,000
                    // inserts for 5,000 friends), where the walk itself visits about a page's worth.
                    let sql = """
                        SELECT createdAt, objectId FROM (\(window)) AS w
                        WHERE author = ? OR EXISTS (SELECT 1 FROM _FRIENDS WHERE userId = ? AND friendId = w.author) LIMIT ?
                        """
                    try conn.forEachRow(sql, cursorArgs + [.integer(Int64(scanLimit)), .text(viewerId), .text(viewerId), .integer(Int64(limit))]) { row in
                        keys.append(FeedCursor(createdAt: row[0].integer ?? 0, objectId: row[1].text ?? ""))
                    }
                    if keys.count >= limit { return (keys, true) }
                    // Short page: did the window reach the table's end, or the cap?
                    let windowEnd = try conn.query("SELECT count(*) FROM (\(window))", cursorArgs + [.integer(Int64(scanLimit))]).first?.first?.integer ?? 0
                    return (keys, windowEnd < Int64(scanLimit))
                }
            }
        }
    }

    /// The rows not everyone may read: an ACL (`rperm`, a JSON array of the readers) without the
    /// element `*` (`SQLiteQueryCompiler.readByEveryone`).
    static let hiddenCommentsFilter = "rperm IS NOT NULL AND NOT \(SQLiteQueryCompiler.readByEveryone("rperm"))"

    /// Each image's comment count in `_FEED_COMMENTS(imageId, count)`, kept by three triggers on the
    /// comment class's table (insert +1, delete −1, a changed image field moves one), so every write —
    /// a request, a batch, a cascade's `deleteAll`, a bulk load — updates it in its own transaction,
    /// and the feed reads a count in one primary-key probe however many comments an image has.
    /// Creates the triggers when the comment table exists and they don't, refilling the counts from
    /// the comments already stored (a database from before the counter); otherwise does nothing.
    /// Runs inside a write transaction.
    ///
    /// Also makes sure of the partial index of comments not everyone may read (`hiddenCommentsFilter`),
    /// by which `comments(ofImages:perImage:readers:)` takes the ones a viewer may not read out of the
    /// count: it holds only such comments, so that probe costs nothing for an image without them.
    func ensureCommentCounter(_ conn: SQLiteConnection) throws {
        guard let p = feedProjection else { return }
        let t = Self.table(p.commentClass)
        let name = "t_\(p.commentClass)_feedCount"
        guard try !conn.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text("c_" + p.commentClass)]).isEmpty else { return }
        let image = SQLiteQueryCompiler.jsonPath(p.commentImageField)
        // The index's first form (`_feedHidden`) took `"*"` anywhere in `rperm` for public, as in the
        // entry `x"*` (`readByEveryone`): its comments were counted for viewers who may not read them.
        try conn.execute("DROP INDEX IF EXISTS \"i_\(p.commentClass)_feedHidden\"")
        try conn.execute("CREATE INDEX IF NOT EXISTS \"i_\(p.commentClass)_feedHiddenReaders\" ON \(t)(\(image)) WHERE \(Self.hiddenCommentsFilter)")
        guard try conn.query("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", [.text(name + "_insert")]).isEmpty else { return }
        func of(_ row: String) -> String { image.replacingOccurrences(of: "(doc,", with: "(\(row).doc,") }
        let add = { (row: String) in
            "INSERT INTO _FEED_COMMENTS(imageId, count) SELECT \(of(row)), 1 WHERE \(of(row)) IS NOT NULL ON CONFLICT(imageId) DO UPDATE SET count = count + 1;"
        }
        let remove = { (row: String) in
            """
            UPDATE _FEED_COMMENTS SET count = count - 1 WHERE imageId = \(of(row));
            DELETE FROM _FEED_COMMENTS WHERE imageId = \(of(row)) AND count <= 0;
            """
        }
        try conn.execute("""
            DELETE FROM _FEED_COMMENTS;
            INSERT INTO _FEED_COMMENTS(imageId, count) SELECT \(image), count(*) FROM \(t) WHERE \(image) IS NOT NULL GROUP BY 1;
            CREATE TRIGGER "\(name)_insert" AFTER INSERT ON \(t) BEGIN \(add("new")) END;
            CREATE TRIGGER "\(name)_delete" AFTER DELETE ON \(t) BEGIN \(remove("old")) END;
            CREATE TRIGGER "\(name)_update" AFTER UPDATE OF doc ON \(t) WHEN \(of("old")) IS NOT \(of("new"))
            BEGIN \(remove("old")) \(add("new")) END;
            """)
    }

    /// Counts from `_FEED_COMMENTS` (one probe per page), the latest comments from the comment
    /// class's `(image field, createdAt, objectId)` index (`createIndex`), read in that order and
    /// stopped after `perImage`: O(perImage) per image however many comments it has, with no sort.
    /// Each comment decodes only `members` when given (`StoredRowView.object(members:)`; a row that
    /// can't be read that way is decoded whole).
    public func comments(ofImages ids: [String], perImage: Int, readers: PermissionSet,
                         members: StoredMembers?) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])] {
        var out = [String: (count: Int, latest: [StoredObject])](minimumCapacity: ids.count)
        let counts = try latestComments(ofImages: ids, perImage: perImage, readers: readers) { id, className, row in
            let comment = try members.flatMap { Self.rowView(className, row).object(members: $0) } ?? Self.decodeRow(className, row)
            out[id, default: (0, [])].latest.append(comment)
        }
        for (id, n) in counts { out[id, default: (0, [])].count = n }
        return out
    }

    public func forEachLatestComment(ofImages ids: [String], perImage: Int, readers: PermissionSet,
                                     _ body: (_ imageId: String, _ row: StoredRowView) -> Void) throws(ParseError) -> [String: Int]? {
        try latestComments(ofImages: ids, perImage: perImage, readers: readers) { id, className, row in
            body(id, Self.rowView(className, row))
        }
    }

    /// The counts and latest comments of `comments(ofImages:perImage:readers:members:)`: each latest
    /// comment's row (the comment class, its `columns`) handed to `row` as SQLite holds it, image by image
    /// in the order of `ids`, newest first.
    /// - Returns: each image's count (0 for an image without comments).
    /// - Throws: what `row` throws, as `guarded` reports it.
    func latestComments(ofImages ids: [String], perImage: Int, readers: PermissionSet,
                        _ row: (_ imageId: String, _ className: String, _ row: SQLiteRow) throws -> Void) throws(ParseError) -> [String: Int] {
        guard let p = feedProjection, !ids.isEmpty, try schema(of: p.commentClass) != nil else { return [:] }
        let t = Self.table(p.commentClass)
        let image = SQLiteQueryCompiler.jsonPath(p.commentImageField)
        let counts = "SELECT imageId, count FROM _FEED_COMMENTS WHERE imageId IN (\(Self.placeholders(ids.count)))"
        let (acl, aclArgs) = SQLiteQueryCompiler.permissionFilter(column: "rperm", readers)
        let latestSQL = "SELECT \(Self.columns) FROM \(t) WHERE \(image) = ? AND \(acl) ORDER BY createdAt DESC, objectId DESC LIMIT ?"
        // The comments the readers may not read, by image (the partial index `ensureCommentCounter` makes).
        let hiddenSQL = "SELECT \(image), count(*) FROM \(t) WHERE \(image) IN (\(Self.placeholders(ids.count))) AND \(Self.hiddenCommentsFilter) AND NOT \(acl) GROUP BY 1"
        return try guarded {
            try db.read { conn in
                var out = [String: Int](minimumCapacity: ids.count)
                for r in try conn.query(counts, ids.map { .text($0) }) {
                    if let id = r[0].text { out[id] = Int(r[1].integer ?? 0) }
                }
                if readers != nil, !out.isEmpty {
                    for r in try conn.query(hiddenSQL, ids.map { .text($0) } + aclArgs) {
                        if let id = r[0].text, let n = r[1].integer { out[id]? -= Int(n) }
                    }
                }
                for id in ids {
                    guard out[id] != nil else { out[id] = 0; continue }
                    guard perImage > 0 else { continue }
                    try conn.forEachRawRow(latestSQL, [.text(id)] + aclArgs + [.integer(Int64(perImage))]) { r in
                        try row(id, p.commentClass, r)
                    }
                }
                return out
            }
        }
    }
}
