import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

/// The friend graph as the provider reports it: synced at login (every page of `/me/friends`) and
/// refreshed when older than `ttlSeconds`, so a friendship ended at the provider stops counting
/// after the next sync.
///
/// Friend lists read from the graph are kept for at most `cacheSeconds` (`ExpiringCache`: lifetimes
/// spread over half to all of it), so the checks made in memory (a LiveQuery viewer, an `include`, a
/// comment's image) do not read the graph each time. A GET or query needs no list: its read scope is
/// evaluated by the store against the graph (`Predicate.friendOf`); only the sync time is asked, and
/// kept as long. Every sync in this process forgets the user's list and sync time at once, so a
/// friendship ended at the provider counts from that sync on, as without the cache. A sync made by
/// another process on the same database is not seen here until the entry ends, so PhotoWall caches
/// only on SQLite (as `SessionCache`), never where several instances share a PostgreSQL database.
public final class FriendService: Sendable {
    let graph: any FriendGraphStore
    public let providers: [String: any IdentityProvider]
    public let ttlSeconds: Int64
    let logger: Logger

    /// A user's friends and when they were synced, as the graph holds them.
    struct Friends: Sendable {
        var ids: [String]
        var syncedAt: ParseDate?
    }

    /// Friend lists by Facebook id.
    let lists: ExpiringCache<String, Friends>
    /// When each user's list was synced, by Facebook id, for `refreshIfStale` when only freshness is
    /// asked (a read scope evaluated by the store against the graph needs no list).
    let syncTimes: ExpiringCache<String, ParseDate>
    /// Friend counts read from the graph, by Facebook id, with the bound they were counted up to
    /// (`friendCount(of:upTo:)`: the feed's strategy choice, once per page); kept and forgotten as the
    /// lists are.
    let counts: ExpiringCache<String, (count: Int, upTo: Int)>
    /// The users whose stale list a sync was tried for lately (`retrySeconds`), by Facebook id: a user
    /// whose provider token has expired, or a provider that is down, costs one provider call per user
    /// per `retrySeconds` instead of one per request that reads the list (each feed page did). Only
    /// this process's calls to the provider are counted, so it holds on any database.
    let syncTries: ExpiringCache<String, Bool>
    /// How long after a sync was tried for a user (whatever came of it) a stale list is used as it is.
    public let retrySeconds: Double

    /// - Parameters:
    ///   - ttlSeconds: a friend list older than this is synced again from the provider before use.
    ///   - cacheSeconds: how long a list read from `graph` may be served from memory; 0 (the default):
    ///     not at all. Only for a graph no other process writes.
    ///   - retrySeconds: after a sync was tried for a user, their stale list is used as it is for this
    ///     long (half of it to all of it, `ExpiringCache`) before the provider is asked again; at most
    ///     `ttlSeconds`, 0: no wait.
    public init(graph: any FriendGraphStore, providers: [String: any IdentityProvider], ttlSeconds: Int64 = 3600,
                cacheSeconds: Double = 0, retrySeconds: Double = 300, logger: Logger = Logger(label: "friends")) {
        self.graph = graph; self.providers = providers; self.ttlSeconds = ttlSeconds; self.logger = logger
        lists = ExpiringCache(ttlSeconds: cacheSeconds)
        syncTimes = ExpiringCache(ttlSeconds: cacheSeconds)
        counts = ExpiringCache(ttlSeconds: cacheSeconds)
        // Never longer than the TTL: a list is still synced at least once per `ttlSeconds` that it is read.
        self.retrySeconds = max(0, min(retrySeconds, Double(ttlSeconds)))
        syncTries = ExpiringCache(ttlSeconds: self.retrySeconds)
    }

    /// Replaces the user's friend list with the provider's. A provider failure is logged and keeps the
    /// old list: logging in does not fail because the friend list could not be read.
    public func sync(provider: any IdentityProvider, authData: [String: JSON], fbId: String) {
        do {
            let ids = try provider.friendIDs(authData)
            // Forgotten also when the write failed: it may have happened before the failure was reported.
            defer {
                lists.invalidate { key, _ in key == fbId }
                syncTimes.invalidate { key, _ in key == fbId }
                counts.invalidate { key, _ in key == fbId }
            }
            try graph.replaceFriends(of: fbId, with: ids, syncedAt: ParseDate.now())
        } catch {
            logger.warning("friend sync failed", ["provider": provider.name, "cause": error.message])
        }
    }

    func isStale(_ syncedAt: ParseDate?) -> Bool {
        syncedAt.map { ParseDate.now().millisecondsSince1970 - $0.millisecondsSince1970 >= ttlSeconds * 1000 } ?? true
    }

    /// Syncs `user` (Facebook id `fbId`) from the provider when the list synced at `syncedAt` is stale,
    /// the user's `authData` allows, and no sync was tried for them in the last `retrySeconds`.
    /// - Returns: whether it tried (the list may have changed).
    func syncIfStale(_ user: StoredObject, fbId: String, syncedAt: ParseDate?) -> Bool {
        guard isStale(syncedAt), let (provider, data) = syncSource(user, fbId: fbId) else { return false }
        syncTries.store(fbId, true, generation: syncTries.generation())
        sync(provider: provider, authData: data, fbId: fbId)
        return true
    }

    /// The provider and `authData` a stale list of `user` would be synced from now: nil without them, or
    /// while a sync tried for the user lately keeps the list as it is (`syncTries`).
    func syncSource(_ user: StoredObject, fbId: String) -> (any IdentityProvider, [String: JSON])? {
        guard let data = user.fields["authData"]?["facebook"]?.objectValue, let provider = providers["facebook"],
              syncTries.lookup(fbId) == nil else { return nil }
        return (provider, data)
    }

    /// Syncs the user's friends from the provider when the stored list is older than the TTL.
    /// A fresh sync time read from the graph is cached as the lists are (`cacheSeconds`).
    public func refreshIfStale(_ user: StoredObject) throws(ParseError) {
        guard let fbId = user.fields["fbId"]?.stringValue else { return }
        if let known = lists.lookup(fbId), !isStale(known.syncedAt) || syncSource(user, fbId: fbId) == nil { return }
        // Fresh, or stale with nothing to sync it from now: the graph is not read again to learn it.
        if let syncedAt = syncTimes.lookup(fbId), !isStale(syncedAt) || syncSource(user, fbId: fbId) == nil { return }
        let generation = syncTimes.generation()
        let syncedAt = try graph.friendsSyncedAt(fbId)
        if !syncIfStale(user, fbId: fbId, syncedAt: syncedAt), let syncedAt {
            syncTimes.store(fbId, syncedAt, generation: generation)
        }
    }

    /// The user's friends' Facebook ids, refreshed from the provider first when stale.
    public func friends(of user: StoredObject) throws(ParseError) -> [String] {
        guard let fbId = user.fields["fbId"]?.stringValue else { return [] }
        if let known = lists.lookup(fbId), !isStale(known.syncedAt) || syncSource(user, fbId: fbId) == nil { return known.ids }
        let generation = lists.generation()
        let syncedAt = try graph.friendsSyncedAt(fbId)
        if syncIfStale(user, fbId: fbId, syncedAt: syncedAt) { return try graph.friends(of: fbId) }
        let ids = try graph.friends(of: fbId)
        lists.store(fbId, Friends(ids: ids, syncedAt: syncedAt), generation: generation)
        return ids
    }

    /// How many friends the user has, counted up to `limit` (min of the two), refreshed first when stale;
    /// kept as the lists are (`cacheSeconds`, forgotten at each sync of the user).
    public func friendCount(of user: StoredObject, upTo limit: Int = .max) throws(ParseError) -> Int {
        guard let fbId = user.fields["fbId"]?.stringValue else { return 0 }
        try refreshIfStale(user)
        // A count below its bound is exact; one at its bound answers any bound up to it.
        if let known = counts.lookup(fbId), known.count < known.upTo || limit <= known.upTo { return min(known.count, limit) }
        let generation = counts.generation()
        let n = try graph.friendCount(of: fbId, upTo: limit)
        counts.store(fbId, (n, limit), generation: generation)
        return n
    }

    /// The wall ids whose posts `user` may see: their own and their friends'.
    public func audience(of user: StoredObject) throws(ParseError) -> [String] {
        [WallRules.wallId(of: user)] + (try friends(of: user))
    }
}
