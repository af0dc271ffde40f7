import PhotoWallCore
import PhotoWallCrypto
import Synchronization

/// The mock's mutable world, behind one `Mutex`: issued codes and tokens, friendships (the
/// control endpoints may remove or add some) and who is an app user.
///
/// Indices refer to `FacebookFixture.users`, which never changes.
final class ProviderState: Sendable {
    struct World: Sendable {
        var friends: [[Int]]
        var appUsers: [Bool]
        var codes: [String: AuthorizationCode] = [:]
        var tokens: [String: AccessTokenRecord] = [:]
    }

    let fixture: FacebookFixture
    let world: Mutex<World>

    init(fixture: FacebookFixture) {
        self.fixture = fixture
        world = Mutex(ProviderState.initialWorld(fixture))
    }

    static func initialWorld(_ fixture: FacebookFixture) -> World {
        World(friends: fixture.friendIndices, appUsers: fixture.users.map(\.appUser))
    }

    /// Forgets every code and token and restores the fixture's friendships and app users.
    func reset() { world.withLock { $0 = ProviderState.initialWorld(fixture) } }

    /// A new token for `userIndex`; marks the user an app user when `user_friends` is granted.
    func issueToken(userIndex: Int, scopes: [String], lifetimeSeconds: Int) -> AccessTokenRecord {
        let now = WallClock.now()
        let record = AccessTokenRecord(token: ProviderState.newToken(), userID: fixture.users[userIndex].id, scopes: scopes,
                                       issuedAt: now, expiresAt: now + lifetimeSeconds, invalidation: nil)
        world.withLock { w in
            w.tokens[record.token] = record
            if scopes.contains("user_friends") { w.appUsers[userIndex] = true }
        }
        return record
    }

    func token(_ token: String) -> AccessTokenRecord? { world.withLock { $0.tokens[token] } }

    /// Applies `change` to a token; false when the mock never issued it.
    @discardableResult
    func updateToken(_ token: String, _ change: (inout AccessTokenRecord) -> Void) -> AccessTokenRecord? {
        world.withLock { w in
            guard var record = w.tokens[token] else { return nil }
            change(&record)
            w.tokens[token] = record
            return record
        }
    }

    /// The user removes the app: every token of theirs fails with 458 and they leave friends' lists.
    func removeApp(userIndex: Int) {
        let id = fixture.users[userIndex].id
        world.withLock { w in
            w.appUsers[userIndex] = false
            for (key, record) in w.tokens where record.userID == id && record.invalidation == nil {
                w.tokens[key]?.invalidation = .appRemoved
            }
        }
    }

    func setAppUser(userIndex: Int, _ value: Bool) { world.withLock { $0.appUsers[userIndex] = value } }

    /// - Returns: true if the friendship existed (remove) or was new (add).
    func setFriendship(_ a: Int, _ b: Int, friends: Bool) -> Bool {
        world.withLock { w in
            func edit(_ x: Int, _ y: Int) -> Bool {
                let position = ProviderState.lowerBound(w.friends[x], y)
                let present = position < w.friends[x].count && w.friends[x][position] == y
                if friends && !present { w.friends[x].insert(y, at: position); return true }
                if !friends && present { w.friends[x].remove(at: position); return true }
                return false
            }
            let changed = edit(a, b)
            _ = edit(b, a)
            return changed
        }
    }

    /// First index in sorted `list` whose value is ≥ `value`.
    static func lowerBound(_ list: [Int], _ value: Int) -> Int {
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// `EAA` + 64 base64url characters of CSPRNG output (Facebook user tokens start with `EAA`).
    static func newToken() -> String { "EAA" + Base64.urlEncode(Crypto.randomBytes(48)) }

    /// 43 base64url characters of CSPRNG output.
    static func newCode() -> String { "AQ" + Base64.urlEncode(Crypto.randomBytes(32)) }
}
