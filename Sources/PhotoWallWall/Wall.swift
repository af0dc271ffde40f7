import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

/// The photo wall, as one `ObjectServiceExtension`: everything that makes PhotoWall a photo wall
/// rather than a generic Parse server, installed with one call:
/// `ObjectService(database:config:installing: Wall(…))`.
///
/// - Schema: `WallSchema` (classes, declared fields, feed projection names).
/// - Who reads and writes: `WallRules` (ownership, friends-only visibility, private users, the
///   comment delete grant, the declared fields).
/// - Saves: a `WallImage` or `WallImageComment` gets its owner fields and default ACL
///   (`WallRules.ownership`); a `WallImage` then its thumbnails (`ThumbnailService`).
/// - Reads: wall files' URLs signed for friends-only walls (`WallFileAccess`), and downloads checked.
/// - Deletes: a photo takes its comments and files; a user their photos, comments and files (`afterDelete`).
/// - The `feed` cloud function (`FeedService`), the `duplicates` one for the upload's duplicate
///   check (`DuplicateService`), the friend sync at login (`FriendService`), and
///   the sweep of thumbnails a crashed save left (`sweepLeftovers`).
public final class Wall: ObjectServiceExtension {
    /// The wall's settings (`photowall serve` options).
    public struct Options: Sendable {
        /// Who sees images and comments (`--wall-visibility`).
        public var visibility: WallRules.Visibility = .friends
        /// Thumbnail and display sizes (`--thumbnail-size`, `--display-size`).
        public var thumbnailSizes = ThumbnailService.Sizes()
        /// The feed's per-author threshold (`--feed-threshold`); nil: the feed store's suggestion.
        public var feedThreshold: Int? = nil
        /// Refresh a user's friend list after this many seconds (`--friend-sync-ttl`).
        public var friendSyncTTLSeconds: Int64 = 3600
        /// Serve a friend list read from the database from memory for at most this many seconds
        /// (`FriendService`); 0: never. Only when no other process writes the database.
        public var friendCacheSeconds: Double = 0
        /// Threads that render thumbnails (`--thumbnail-threads`, 1…); default one per core.
        public var thumbnailThreads = ThumbnailService.defaultConcurrency
        /// How long a save waits for its render to start before it is refused with 124 and `Retry-After`
        /// (`--render-wait-limit`; `ThumbnailService.renderWaitLimit`).
        public var renderWaitLimit = ThumbnailService.defaultRenderWaitLimit
        public init(visibility: WallRules.Visibility = .friends, thumbnailSizes: ThumbnailService.Sizes = ThumbnailService.Sizes(),
                    feedThreshold: Int? = nil, friendSyncTTLSeconds: Int64 = 3600, friendCacheSeconds: Double = 0,
                    thumbnailThreads: Int = ThumbnailService.defaultConcurrency,
                    renderWaitLimit: Duration = ThumbnailService.defaultRenderWaitLimit) {
            self.visibility = visibility; self.thumbnailSizes = thumbnailSizes
            self.feedThreshold = feedThreshold; self.friendSyncTTLSeconds = friendSyncTTLSeconds
            self.friendCacheSeconds = friendCacheSeconds; self.thumbnailThreads = thumbnailThreads
            self.renderWaitLimit = renderWaitLimit
        }
    }

    public let rules: WallRules
    public let thumbnails: ThumbnailService
    public let feed: FeedService
    public let friends: FriendService
    public let duplicates: DuplicateService
    let files: FileService
    let database: any ObjectStore
    let fileRecords: any FileRecordStore
    let access: WallFileAccess
    let classWriteRules: [String: ClassWriteRules]
    let logger: Logger
    /// Where the cascading deletes are published (the object service's bus); nil: nowhere.
    let events: ObjectEventBus?

    /// - Parameters:
    ///   - database: the wall classes' objects (read and deleted by the wall's own rules).
    ///   - fileRecords: file metadata (a deleted user's files are found by owner).
    ///   - feedStore: the feed's queries (the adapter's projection of `WallSchema.feedProjection`).
    ///   - friendGraph: where friend lists are kept; `providers`: where they come from (by `authData` key).
    ///   - masterKey: the key file-URL signatures are derived from.
    ///   - events: the bus the cascading deletes go to (the one given to `ObjectService`).
    public init(database: any ObjectStore, fileRecords: any FileRecordStore, feedStore: any FeedStore, friendGraph: any FriendGraphStore,
                providers: [String: any IdentityProvider], files: FileService, masterKey: String,
                options: Options = Options(), events: ObjectEventBus? = nil, logger: Logger) {
        self.database = database; self.fileRecords = fileRecords; self.files = files; self.logger = logger; self.events = events
        friends = FriendService(graph: friendGraph, providers: providers, ttlSeconds: options.friendSyncTTLSeconds,
                                cacheSeconds: options.friendCacheSeconds, logger: logger)
        rules = WallRules(database: database, friends: friends, visibility: options.visibility)
        thumbnails = ThumbnailService(files: files, sizes: options.thumbnailSizes, concurrency: options.thumbnailThreads,
                                      renderWaitLimit: options.renderWaitLimit, logger: logger)
        // Weak: the file service keeps this closure and the thumbnail service keeps the file service,
        // so a strong capture would be a cycle keeping the thumbnail service's render threads alive
        // after the wall is gone (a test makes many walls).
        files.onUploaded { [weak thumbnails] record in thumbnails?.prerender(record) }
        access = WallFileAccess(masterKey: masterKey, database: database, wall: rules)
        feed = FeedService(store: feedStore, rows: database, wall: rules, fileAccess: access,
                           perAuthorThreshold: options.feedThreshold)
        duplicates = DuplicateService(objects: database, fileRecords: fileRecords)
        classWriteRules = rules.writeRules
    }

    // MARK: ObjectServiceExtension

    public func writeRules(for className: String) -> ClassWriteRules? { classWriteRules[className] }

    public func readScope(className: String, auth: AuthContext) throws(ParseError) -> Predicate? {
        try rules.readScope(className: className, auth: auth)
    }

    public func restrictedView(for className: String) -> RestrictedView? { rules.restrictedView(for: className) }

    /// A `WallImage`: its owner fields and ACL, then its thumbnails (which see the owner fields);
    /// a `WallImageComment`: its owner fields and ACL.
    public func beforeSave(className: String, body: [String: JSON], auth: AuthContext,
                           original: StoredObject?) throws(ParseError) -> SaveHookOutcome? {
        switch className {
        case WallSchema.imageClass:
            // Ownership sets fields only (no side effects to undo); the thumbnails see them.
            let owned = try rules.ownership(className: className, body: body, auth: auth, original: original)
            let made = try thumbnails.thumbnailFields(for: body.merging(owned.fields) { _, new in new }, original: original, auth: auth)
            return SaveHookOutcome(fields: owned.fields.merging(made.fields) { _, new in new }, undo: made.undo, afterSave: made.afterSave)
        case WallSchema.commentClass:
            return try rules.ownership(className: className, body: body, auth: auth, original: original)
        default:
            return nil
        }
    }

    /// Signs a `WallImage`'s file URLs on a friends-only wall.
    public func render(_ object: inout [String: JSON], className: String) {
        if className == WallSchema.imageClass { access.signWallFiles(&object) }
    }

    /// `render` signs `WallImage` files on a friends-only wall, and changes nothing else.
    public func renders(className: String) -> Bool {
        className == WallSchema.imageClass && access.wall.visibility == .friends
    }

    public func mayDelete(_ object: StoredObject, auth: AuthContext) throws(ParseError) -> Bool { rules.mayDelete(object, auth: auth) }

    public var functions: [String: ExtensionFunction] {
        ["feed": { [feed] params, auth, objects throws(ParseError) in .text(try feed.feed(params: params, auth: auth, objects: objects)) },
         "duplicates": { [duplicates] params, auth, _ throws(ParseError) in .json(try duplicates.duplicates(params: params, auth: auth)) }]
    }

    public var fileAccess: (any FileAccess)? { access }

    /// Thumbnails of a photo whose save died with the process go with the other leftovers.
    public func sweepLeftovers(before cutoff: ParseDate) {
        _ = files.removeUnclaimed(before: cutoff, className: WallSchema.imageClass, fields: WallSchema.fileFields, logger: logger)
    }

    /// Syncs the user's friend list from the provider that confirmed them.
    public func identityConfirmed(provider: any IdentityProvider, authData: [String: JSON], providerUserId: String) {
        friends.sync(provider: provider, authData: authData, fbId: providerUserId)
    }
}
