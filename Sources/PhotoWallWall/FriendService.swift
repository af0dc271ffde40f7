import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

/// The friend graph as the provider reports it: synced at login (every page of `/me/friends`) and
/// refreshed when older than `ttlSeconds`, so a friendship ended at the provider stops counting
/// after the next sync.
public final class FriendService: Sendable {
    let graph: any FriendGraphStore
    public let providers: [String: any IdentityProvider]
    public let ttlSeconds: Int64
    let logger: Logger

    public init(graph: any FriendGraphStore, providers: [String: any IdentityProvider], ttlSeconds: Int64 = 3600,
                logger: Logger = Logger(label: "friends")) {
        self.graph = graph; self.providers = providers; self.ttlSeconds = ttlSeconds; self.logger = logger
    }

    /// Replaces the user's friend list with the provider's. A provider failure is logged and keeps the
    /// old list: logging in does not fail because the friend list could not be read.
    public func sync(provider: any IdentityProvider, authData: [String: JSON], fbId: String) {
        do {
            let ids = try provider.friendIDs(authData)
            try graph.replaceFriends(of: fbId, with: ids, syncedAt: ParseDate.now())
        } catch {
            logger.warning("friend sync failed", ["provider": provider.name, "cause": error.message])
        }
    }

    /// Syncs the user's friends from the provider when the stored list is older than the TTL.
    public func refreshIfStale(_ user: StoredObject) throws(ParseError) {
        guard let fbId = user.fields["fbId"]?.stringValue else { return }
        let synced = try graph.friendsSyncedAt(fbId)
        let stale = synced.map { ParseDate.now().millisecondsSince1970 - $0.millisecondsSince1970 >= ttlSeconds * 1000 } ?? true
        if stale, let data = user.fields["authData"]?["facebook"]?.objectValue, let provider = providers["facebook"] {
            sync(provider: provider, authData: data, fbId: fbId)
        }
    }

    /// The user's friends' Facebook ids, refreshed from the provider first when stale.
    public func friends(of user: StoredObject) throws(ParseError) -> [String] {
        guard let fbId = user.fields["fbId"]?.stringValue else { return [] }
        try refreshIfStale(user)
        return try graph.friends(of: fbId)
    }

    /// How many friends the user has, counted up to `limit` (min of the two), refreshed first when stale.
    public func friendCount(of user: StoredObject, upTo limit: Int = .max) throws(ParseError) -> Int {
        guard let fbId = user.fields["fbId"]?.stringValue else { return 0 }
        try refreshIfStale(user)
        return try graph.friendCount(of: fbId, upTo: limit)
    }

    /// The wall ids whose posts `user` may see: their own and their friends'.
    public func audience(of user: StoredObject) throws(ParseError) -> [String] {
        [WallRules.wallId(of: user)] + (try friends(of: user))
    }
}
