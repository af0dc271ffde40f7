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

    public func feedKeys(authors: [String]?, viewer viewerId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                         scanLimit: Int) throws(ParseError) -> (keys: [FeedCursor], scannedToEnd: Bool) {
        guard feedProjection != nil, limit > 0 else { return ([], true) }
        if authors == nil, strategy == .perAuthor {
            return try feedKeys(authors: [viewerId] + (try friends(of: viewerId)), viewer: viewerId, before: before,
                                limit: limit, strategy: .perAuthor, scanLimit: scanLimit)
        }
        let cursor = before ?? FeedCursor(createdAt: Int64.max, objectId: "")
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
                    let sql = """
                        SELECT createdAt, objectId FROM (\(window))
                        WHERE author = ? OR author IN (SELECT friendId FROM _FRIENDS WHERE userId = ?) LIMIT ?
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

    public func comments(ofImages ids: [String], perImage: Int) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])] {
        guard let p = feedProjection, !ids.isEmpty, try schema(of: p.commentClass) != nil else { return [:] }
        let t = Self.table(p.commentClass)
        let image = SQLiteQueryCompiler.jsonPath(p.commentImageField)
        return try guarded {
            try db.read { conn in
                var out: [String: (count: Int, latest: [StoredObject])] = [:]
                for id in ids {
                    let count = try conn.query("SELECT count(*) FROM \(t) WHERE \(image) = ?", [.text(id)]).first?.first?.integer ?? 0
                    var latest: [StoredObject] = []
                    if count > 0 {
                        try conn.forEachRow("SELECT \(Self.columns) FROM \(t) WHERE \(image) = ? ORDER BY createdAt DESC, objectId DESC LIMIT ?",
                                            [.text(id), .integer(Int64(perImage))]) { latest.append(try Self.decodeRow(p.commentClass, $0)) }
                    }
                    out[id] = (Int(count), latest)
                }
                return out
            }
        }
    }
}
