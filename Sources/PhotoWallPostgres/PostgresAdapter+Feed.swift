import PhotoWallCore
import PhotoWallStorage
import Synchronization

/// The friend feed's queries in PostgreSQL's best forms (social-and-uploads.md §5.4–5.5).
///
/// Over the image class of `feedProjection` (`"feedAuthor"` and its two indexes: see
/// `PostgresAdapter.feedColumns`), the friend graph and the comment class:
/// - `.perAuthor`: one `LATERAL` probe per author on `i_<image class>_feedAuthor`
///   (`"feedAuthor", "createdAt" DESC, "objectId" DESC`, index-only), each at most `limit` keys,
///   merged by one outer sort.
/// - `.globalScan`: `i_<image class>_feedTime` walked newest first from the cursor (index-only), capped at
///   `scanLimit` entries, keeping authors in the set. The executor pulls rows lazily, so a dense friend
///   set stops after about a page; the set is an array constant in a custom plan (hashed
///   `= ANY`), and it filters *outside* the capped sub-select so the planner can't switch to the
///   per-author index (the generic-plan `ANY($1)` trap). Over the friend table, a row's author is
///   tested against the viewer's friends hashed once per page, or, from `friendProbeThreshold`
///   friends, by one primary-key probe of `"_FRIENDS"` per scanned row (`feedKeysStatement`).
/// Cursors use row comparison `("createdAt", "objectId") < ($1, $2)`, an index condition on the
/// composite index. PostgreSQL's measured crossover is about 700 authors (SQLite's about 2,500):
/// see `PostgresAdapter.suggestedFeedThreshold()`.
extension PostgresAdapter: FeedStore {
    /// Authors (friends + 1) up to which `.perAuthor` beats `.globalScan` on PostgreSQL, for
    /// `images` images: √(0.045 × images), at least 50. The per-author cost grows with the
    /// author count F, the time scan's with images ÷ F, so they cross near √(k × images); k is
    /// measured (`make bench`, 1M images, 10 per user: both forms timed at 50 and 500 friends, crossing
    /// near 210), and gives about 670 at 10M, where social-and-uploads.md §5.4 measured 700.
    public static func feedThreshold(images: Double) -> Int { max(50, Int((0.045 * max(0, images)).squareRoot())) }

    /// `feedThreshold` for the image class's row count the planner's statistics hold
    /// (`pg_class.reltuples`, read by `feedStatistics()`); nil without a feed projection.
    public func suggestedFeedThreshold() -> Int? {
        feedStatistics().map { Self.feedThreshold(images: $0.images) }
    }

    /// Friends from which the time scan (`.globalScan`) tests each row it reads with one primary-key
    /// probe of `"_FRIENDS"`, instead of reading and hashing the viewer's whole friend list before its
    /// first row: √(4 × `limit` × `authors`), `authors` being how many distinct authors the image
    /// class holds. The scan reads about `limit` × `authors` ÷ friends rows before a page is full;
    /// a probe costs about four times what a hashed friend does (measured on 1M images by 93k
    /// authors, a 20-row page: at 500 friends 4,315 probes took 18–22 ms against the hash's 4 ms,
    /// at 5,000 friends 365 probes took 2.0–2.5 ms against 2.8–3.5 ms), so they cross near
    /// √(4 × limit × authors): 2,727 there.
    /// - Parameters: limit: the page's rows; authors: distinct authors (at least 1).
    public static func friendProbeThreshold(limit: Int, authors: Double) -> Int {
        max(1, Int((4 * Double(max(1, limit)) * max(1, authors)).squareRoot()))
    }

    /// A column's distinct values from its `pg_stats.n_distinct` (a count, or when negative minus
    /// the fraction of `rows` that are distinct) and the table's rows; nil when unknown (not
    /// analysed) or below 1.
    static func distinctValues(nDistinct: Double?, rows: Double) -> Double? {
        guard let n = nDistinct else { return nil }
        let count = n < 0 ? -n * rows : n
        return count >= 1 ? count : nil
    }

    /// The image class's size as the planner's statistics hold it: its rows (`pg_class.reltuples`)
    /// and the distinct values of its author column (`pg_stats.n_distinct` of `"feedAuthor"`, a
    /// negative value being a fraction of the rows; nil until the table is first analysed). Read at
    /// most once a minute; nil without a feed projection, and images 0 when the table is missing.
    func feedStatistics() -> FeedStatistics? {
        guard let p = feedProjection else { return nil }
        let now = ContinuousClock.now
        if let (at, value) = feedStatisticsCache.withLock({ $0 }), now - at < .seconds(60) { return value }
        let row = (try? pool.withConnection { conn in
            try conn.query("""
                SELECT c.reltuples, (SELECT s.n_distinct FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname
                                     AND s.attname = 'feedAuthor') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.oid = to_regclass($1::text)
                """, [Self.table(p.imageClass)]).first
        }).flatMap { $0 }
        // reltuples is -1 for a table never vacuumed or analysed.
        let images = max(0, row?[0].flatMap(Double.init) ?? 0)
        let value = FeedStatistics(images: images, authors: Self.distinctValues(nDistinct: row?[1].flatMap(Double.init), rows: images))
        feedStatisticsCache.withLock { $0 = (now, value) }
        return value
    }

    /// The reads of `body` (one feed page: these queries and the object store's, on this thread) on
    /// one connection, in one `REPEATABLE READ READ ONLY` transaction: one snapshot, one pool checkout, and
    /// `plan_cache_mode = force_generic_plan` for its statements (`SET LOCAL`, sent with the `BEGIN`),
    /// so each of the page's prepared statements is planned once per connection, not on every page
    /// (`force_custom_plan`, the connections' default, which ad-hoc queries' `$in` lists need; `auto`
    /// kept custom plans here, costing an `= ANY($1)` array higher generic than custom). The page's
    /// statements are written for one plan whatever their parameters: limits are constants in the
    /// SQL text, id lists probe primary keys, and the time scan filters authors outside its capped
    /// sub-select (see the type's note). Its `COMMIT` is sent without waiting for the answer (read
    /// only, it can't fail): the connection's next user reads it. Write transactions inside `body`
    /// take a connection of their own; other writes there fail (25006, read-only transaction).
    /// Nested calls run inside the outer one.
    /// - Throws: what `body` throws; 1 (internal) when the transaction can't be opened.
    public func readingOneSnapshot<T: Sendable>(_ body: () throws(ParseError) -> T) throws(ParseError) -> T {
        if pool.isPinned { return try body() }
        let result: Result<T, ParseError> = try guarded {
            try pool.withPinnedConnection { conn in
                try conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL plan_cache_mode = force_generic_plan")
                // A ParseError from `body` (a failed statement too: it aborted the transaction, and
                // COMMIT then rolls back) still ends the transaction.
                let value: Result<T, ParseError>
                do throws(ParseError) { value = .success(try body()) } catch { value = .failure(error) }
                // Read only: nothing to wait for, the next command on the connection reads the answer.
                try conn.sendWithoutWaiting("COMMIT")
                return value
            }
        }
        return try result.get()
    }

    public func feedKeys(authors: [String]?, viewer viewerId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                         scanLimit: Int) throws(ParseError) -> (keys: [FeedCursor], scannedToEnd: Bool) {
        guard let p = feedProjection, try schema(of: p.imageClass) != nil, limit > 0 else { return ([], true) }
        let t = Self.table(p.imageClass)
        let (sql, values) = feedKeysStatement(authors: authors, viewer: viewerId, before: before, limit: limit,
                                              strategy: strategy, scanLimit: scanLimit)
        let keysOf: ([String?]) -> FeedCursor = { FeedCursor(createdAt: Int64($0[0] ?? "0") ?? 0, objectId: $0[1] ?? "") }
        return try guarded {
            try pool.withConnection { conn in
                let keys = try conn.query(sql, values).rows.map(keysOf)
                if strategy == .perAuthor || keys.count >= limit { return (keys, true) }
                // A short page of the time scan: complete only if the scan ran out of rows before its cap.
                var countParams = PostgresQueryCompiler.Params()
                let countOlder = Self.olderThan(before, &countParams)
                let cap = countParams.add(String(scanLimit), cast: "bigint")
                let scanned = Int(try conn.query("SELECT count(*) FROM (SELECT 1 FROM \(t) WHERE \(countOlder) ORDER BY \"createdAt\" DESC, \"objectId\" DESC LIMIT \(cap)) s",
                                                 countParams.values).first?[0] ?? "0") ?? 0
                return (keys, scanned < scanLimit)
            }
        }
    }

    /// Rows strictly older than `before` in the feed's order, as a row comparison the composite
    /// index answers (`("createdAt", "objectId") < ($n, $m)`, both added to `params`); `TRUE` without one.
    static func olderThan(_ before: FeedCursor?, _ params: inout PostgresQueryCompiler.Params) -> String {
        guard let before else { return "TRUE" }
        return "(\"createdAt\", \"objectId\") < (\(params.add(String(before.createdAt), cast: "bigint")), \(params.add(before.objectId, cast: "text")))"
    }

    /// The statement of `feedKeys`' page of keys (its text and parameters), in the strategy's form
    /// (see the type's note). With `authors` nil, the time scan holds both tests of a row's author,
    /// each behind a gate PostgreSQL checks once: the hashed friend list below
    /// `friendProbeThreshold` friends, one friend-table probe per row from it (without statistics
    /// yet, the hashed test alone).
    func feedKeysStatement(authors: [String]?, viewer viewerId: String, before: FeedCursor?, limit: Int, strategy: FeedStrategy,
                           scanLimit: Int) -> (sql: String, values: [String?]) {
        let t = Self.table(feedProjection?.imageClass ?? "")
        let author = "\"feedAuthor\""  // = the projection's author field, stored (see `PostgresAdapter.feedColumns`)
        var params = PostgresQueryCompiler.Params()
        let older = Self.olderThan(before, &params)
        let n = String(limit)  // a constant: a generic plan knows it (`readingOneSnapshot`)
        // The audience: the given authors as one array parameter, or (nil) the viewer and their
        // friends joined from the friend table in the query — never thousands of ids built here.
        let viewer = authors == nil ? params.add(viewerId, cast: "text") : ""
        let set = authors.map { params.add(PostgresQueryCompiler.textArrayLiteral(Array(Set($0)).sorted()), cast: "text[]") }
        switch strategy {
        case .perAuthor:
            let audienceRows = set.map { "SELECT unnest(\($0)) AS author" }
                ?? "SELECT \"friendId\" AS author FROM \"_FRIENDS\" WHERE \"userId\" = \(viewer) UNION SELECT \(viewer)"
            let sql = """
                SELECT k."createdAt", k."objectId" FROM (\(audienceRows)) AS a
                CROSS JOIN LATERAL (SELECT "createdAt", "objectId" FROM \(t) WHERE \(author) = a.author AND \(older)
                                    ORDER BY "createdAt" DESC, "objectId" DESC LIMIT \(n)) k
                ORDER BY k."createdAt" DESC, k."objectId" DESC LIMIT \(n)
                """
            return (sql, params.values)
        case .globalScan:
            let scan = String(scanLimit)  // a constant, as above
            /// The capped time scan keeping the rows whose author passes `test`, behind `gate` (a
            /// condition without row values, which PostgreSQL checks once, before the scan starts).
            func timeScan(where test: String, gate: String = "") -> String {
                """
                SELECT "createdAt", "objectId" FROM (
                    SELECT "createdAt", "objectId", \(author) AS author FROM \(t) WHERE \(older)
                    ORDER BY "createdAt" DESC, "objectId" DESC LIMIT \(scan)) s
                WHERE \(gate)\(test) ORDER BY "createdAt" DESC, "objectId" DESC LIMIT \(n)
                """
            }
            if let set { return (timeScan(where: "s.author = ANY(\(set))"), params.values) }
            /// The viewer or a friend, as a hashed sub-plan (the viewer's friends read and hashed
            /// once, then one lookup per row) or, with `OFFSET 0`, one primary-key probe per row
            /// (PostgreSQL does not turn a sub-select with an OFFSET into the hashed form).
            func isAudience(probing: Bool) -> String {
                "(s.author = \(viewer) OR EXISTS (SELECT 1 FROM \"_FRIENDS\" f WHERE f.\"userId\" = \(viewer) AND f.\"friendId\" = s.author\(probing ? " OFFSET 0" : "")))"
            }
            guard let authorCount = feedStatistics()?.authors else { return (timeScan(where: isAudience(probing: false)), params.values) }
            // Both forms, one run: the viewer's friends counted up to the threshold, then the form
            // for that count; the other one never starts.
            let from = params.add(String(Self.friendProbeThreshold(limit: limit, authors: authorCount)), cast: "bigint")
            let sql = """
                WITH friends AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM "_FRIENDS" WHERE "userId" = \(viewer) LIMIT \(from)) f)
                SELECT "createdAt", "objectId" FROM (
                    (\(timeScan(where: isAudience(probing: false), gate: "(SELECT n FROM friends) < \(from) AND ")))
                    UNION ALL
                    (\(timeScan(where: isAudience(probing: true), gate: "(SELECT n FROM friends) >= \(from) AND ")))) k
                ORDER BY "createdAt" DESC, "objectId" DESC LIMIT \(n)
                """
            return (sql, params.values)
        }
    }

    /// Each image's comment count in `"_FEED_COMMENTS"("imageId", count)`, kept by one row trigger on
    /// the comment class's table (insert +1, delete −1, a changed image field moves one), so every
    /// write — a request, a batch, a cascade's `deleteAll`, a bulk load — updates it in its own
    /// transaction, and the feed reads a count in one primary-key probe however many comments an
    /// image has. Creates the trigger when the comment table exists and it doesn't, refilling the
    /// counts from the comments already stored (under a lock that holds off writers meanwhile);
    /// otherwise does nothing. Runs inside a transaction.
    ///
    /// Also makes sure of the partial index of comments not everyone may read (`hiddenCommentsFilter`),
    /// by which `comments(ofImages:perImage:readers:)` takes the ones a viewer may not read out of the
    /// count: it holds only such comments, so that probe costs nothing for an image without them.
    func ensureCommentCounter(_ conn: PostgresConnection) throws {
        guard let p = feedProjection else { return }
        let t = Self.table(p.commentClass)
        let escaped = p.commentClass.replacingOccurrences(of: "\"", with: "\"\"")
        let name = "t_\(escaped)_feedCount"
        guard try conn.query("SELECT to_regclass($1::text) IS NOT NULL", [t]).first?[0] == "t" else { return }
        let image = PostgresQueryCompiler.textPath(p.commentImageField)
        try conn.execute("CREATE INDEX IF NOT EXISTS \"i_\(escaped)_feedHidden\" ON \(t) (\(image)) WHERE \(Self.hiddenCommentsFilter)")
        guard try conn.query("SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($1::text) AND tgname = $2::text", [t, name]).first == nil
        else { return }
        func of(_ row: String) -> String { image.replacingOccurrences(of: "(doc", with: "(\(row).doc") }
        try conn.execute("""
            LOCK TABLE \(t) IN SHARE ROW EXCLUSIVE MODE;
            DELETE FROM "_FEED_COMMENTS";
            INSERT INTO "_FEED_COMMENTS"("imageId", count) SELECT \(image), count(*) FROM \(t) WHERE \(image) IS NOT NULL GROUP BY 1;
            CREATE OR REPLACE FUNCTION "\(name)"() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN
              IF TG_OP = 'UPDATE' AND \(of("OLD")) IS NOT DISTINCT FROM \(of("NEW")) THEN RETURN NULL; END IF;
              IF TG_OP IN ('UPDATE', 'DELETE') AND \(of("OLD")) IS NOT NULL THEN
                UPDATE "_FEED_COMMENTS" SET count = count - 1 WHERE "imageId" = \(of("OLD"));
                DELETE FROM "_FEED_COMMENTS" WHERE "imageId" = \(of("OLD")) AND count <= 0;
              END IF;
              IF TG_OP IN ('UPDATE', 'INSERT') AND \(of("NEW")) IS NOT NULL THEN
                INSERT INTO "_FEED_COMMENTS"("imageId", count) VALUES (\(of("NEW")), 1)
                  ON CONFLICT ("imageId") DO UPDATE SET count = "_FEED_COMMENTS".count + 1;
              END IF;
              RETURN NULL;
            END $f$;
            CREATE TRIGGER "\(name)" AFTER INSERT OR DELETE OR UPDATE OF doc ON \(t) FOR EACH ROW EXECUTE FUNCTION "\(name)"();
            """)
    }

    /// The rows not everyone may read: an ACL (`rperm`, the readers) without `*`.
    static let hiddenCommentsFilter = "rperm IS NOT NULL AND NOT ('*' = ANY(rperm))"

    /// Counts from `"_FEED_COMMENTS"` (a primary-key probe per image) and the latest comments by one
    /// `LATERAL` probe per image with comments on the comment class's `(image field, "createdAt")`
    /// index, in one statement (one round trip): a row per latest comment (newest first), or one row
    /// with NULL comment columns for an image with a count but no comment row to show.
    /// Comments are decoded whole (`members` is met: they hold every field).
    public func comments(ofImages ids: [String], perImage: Int, readers: PermissionSet,
                         members: StoredMembers?) throws(ParseError) -> [String: (count: Int, latest: [StoredObject])] {
        guard let p = feedProjection, !ids.isEmpty, try schema(of: p.commentClass) != nil else { return [:] }
        let t = Self.table(p.commentClass)
        let image = PostgresQueryCompiler.textPath(p.commentImageField)
        var params = PostgresQueryCompiler.Params()
        let imageIds = params.add(PostgresQueryCompiler.textArrayLiteral(ids), cast: "text[]")
        let acl = PostgresQueryCompiler.permissionFilter(column: "rperm", readers, &params)
        // Less the comments the readers may not read (the partial index `ensureCommentCounter` makes).
        let hidden = readers == nil ? "0"
            : "(SELECT count(*) FROM \(t) WHERE \(image) = n.\"imageId\" AND \(Self.hiddenCommentsFilter) AND NOT \(acl))"
        let sql = """
            SELECT n."imageId", n.count - \(hidden), c.* FROM "_FEED_COMMENTS" n
            LEFT JOIN LATERAL (SELECT \(Self.columns) FROM \(t) WHERE \(image) = n."imageId" AND \(acl)
                               ORDER BY "createdAt" DESC, "objectId" DESC LIMIT \(max(0, perImage))) c ON TRUE
            WHERE n."imageId" = ANY(\(imageIds))
            ORDER BY n."imageId", c."createdAt" DESC, c."objectId" DESC
            """
        return try guarded {
            try pool.withConnection { conn in
                var out: [String: (count: Int, latest: [StoredObject])] = [:]
                for row in try conn.query(sql, params.values).rows {
                    guard let id = row[0] else { continue }
                    if out[id] == nil { out[id] = (Int(row[1] ?? "0") ?? 0, []) }
                    if row[2] != nil { out[id]?.latest.append(try Self.decodeRow(p.commentClass, Array(row.dropFirst(2)))) }
                }
                for id in ids where out[id] == nil { out[id] = (0, []) }
                return out
            }
        }
    }
}

/// The image class's size for the feed's choices (`PostgresAdapter.feedStatistics()`).
struct FeedStatistics: Sendable {
    /// Rows, as the planner estimates them (0 before the first `ANALYZE`).
    var images: Double
    /// Distinct authors (`"feedAuthor"` values); nil before the first `ANALYZE`.
    var authors: Double?
}
