import Foundation
import PhotoWallCore
import PhotoWallServices
import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallTesting
import PhotoWallWall
import Synchronization
import Testing

/// A stale friend list is synced from the provider when it is read (`FriendService`), but a sync that
/// was tried lately is not tried again on every read: with the provider down or the user's token expired,
/// each feed page (which asks for freshness) and each list read called the provider again.
@Suite struct FriendSyncTests {
    /// The real Graph adapter, with its calls to `friendIDs` counted.
    final class CountedProvider: IdentityProvider {
        let base: FacebookGraphProvider
        let calls = Mutex(0)
        init(_ base: FacebookGraphProvider) { self.base = base }
        var name: String { base.name }
        func validate(_ authData: [String: JSON]) throws(ParseError) -> ProviderProfile { try base.validate(authData) }
        func friendIDs(_ authData: [String: JSON]) throws(ParseError) -> [String] {
            calls.withLock { $0 += 1 }
            return try base.friendIDs(authData)
        }
    }

    /// A real SQLite friend graph in a fresh temporary folder, removed with it.
    final class GraphFolder {
        let dir = NSTemporaryDirectory() + "/photowall-friends-" + UUID().uuidString
        let graph: SQLiteAdapter
        init() throws {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            graph = try SQLiteAdapter(path: dir + "/photowall.sqlite", feedProjection: WallSchema.feedProjection)
        }
        deinit { removeTree(dir) }
    }

    @Test func aFailedSyncIsTriedOncePerRetryIntervalNotOncePerRead() throws {
        let folder = try GraphFolder()
        let graph = folder.graph
        // Nothing listens on port 1: every sync fails at once, as when the provider is down.
        let provider = CountedProvider(FacebookGraphProvider(baseURL: "http://127.0.0.1:1/v19.0", appIds: ["1"], appSecret: nil,
                                                             timeoutSeconds: 2))
        let friends = FriendService(graph: graph, providers: ["facebook": provider], ttlSeconds: 3600, cacheSeconds: 5,
                                    retrySeconds: 300, logger: Logger(label: "friends-test", level: .error))
        let twoHoursAgo = ParseDate(millisecondsSince1970: ParseDate.now().millisecondsSince1970 - 7_200_000)
        try graph.replaceFriends(of: "2001", with: ["2002", "2003"], syncedAt: twoHoursAgo)
        let user = StoredObject(className: "_User", objectId: "u2001", createdAt: .now(), updatedAt: .now(),
                                fields: ["fbId": "2001", "authData": ["facebook": ["id": "2001", "access_token": "expired"]]], acl: nil)
        for _ in 0..<5 {
            try friends.refreshIfStale(user)
            #expect(try friends.friends(of: user).sorted() == ["2002", "2003"])
            #expect(try friends.friendCount(of: user) == 2)
        }
        #expect(provider.calls.withLock { $0 } == 1)

        // With no wait, every stale read tries again (the TTL bounds the wait: `retrySeconds` ≤ `ttlSeconds`).
        let eager = FriendService(graph: graph, providers: ["facebook": provider], ttlSeconds: 3600, cacheSeconds: 5,
                                  retrySeconds: 0, logger: Logger(label: "friends-test", level: .error))
        for _ in 0..<3 { try eager.refreshIfStale(user) }
        #expect(provider.calls.withLock { $0 } == 4)
    }

    /// Counts are kept with the bound they were counted up to: a count that reached its bound answers
    /// only bounds up to it, and a larger bound counts again.
    @Test func aKeptFriendCountAnswersOnlyTheBoundsItCovers() throws {
        let folder = try GraphFolder()
        let graph = folder.graph
        let friends = FriendService(graph: graph, providers: [:], ttlSeconds: 3600, cacheSeconds: 30,
                                    logger: Logger(label: "friends-test", level: .error))
        try graph.replaceFriends(of: "3001", with: ["3002", "3003", "3004"], syncedAt: .now())
        let user = StoredObject(className: "_User", objectId: "u3001", createdAt: .now(), updatedAt: .now(), fields: ["fbId": "3001"], acl: nil)
        #expect(try friends.friendCount(of: user, upTo: 2) == 2)
        #expect(try friends.friendCount(of: user, upTo: 1) == 1)
        #expect(try friends.friendCount(of: user, upTo: 10) == 3)
        #expect(try friends.friendCount(of: user, upTo: 2) == 2)
        #expect(try friends.friendCount(of: user) == 3)
    }
}
