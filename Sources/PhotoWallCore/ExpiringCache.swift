/// A small in-memory cache whose entries end after a bounded time and which writers invalidate at once:
/// the mechanism under `SessionCache` (sessions), `ObjectService`'s include targets (users),
/// `FriendService` (friend lists) and `SQLiteAdapter`'s rows by objectId.
///
/// - Lifetime: each entry lives a random time between half of `ttlSeconds` and all of it, so entries
///   filled in one burst (a LiveQuery event checks 1,000 viewers at once) don't all end, and get read
///   again, in the same instant.
/// - Races: a reader that misses takes `generation()` before reading the source and stores with it;
///   the store is dropped when any invalidation happened in between, so a read racing a write never puts
///   the old value back.
/// - Bound: at most `capacity` entries; when full, the cache is emptied (entries are cheap to rebuild).
///   An ended entry is not served, and stays until it is stored again or the cache is emptied.
/// - `ttlSeconds` 0 turns it off: nothing is stored, every lookup misses.
/// - Locking: lookups share a read lock (`ReadMostly`) and never wait for each other; stores and
///   invalidations take it exclusively. Every request looks up its session here and every feed page
///   its viewer's friend-list freshness: behind a `Mutex` those lookups queued on one another (2.8% of
///   a feed-only load's CPU in the mutex's slow path, plus the futex calls).
/// - Specialisation: `lookup`, `generation` and `store` are `@inlinable`. The caches are used from other
///   modules, where the generic code ran with Swift's generic metadata lookups on every call (a
///   0.6% share of a feed page's CPU for the lookups alone).
public final class ExpiringCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The longest an entry may be served, in seconds; 0: off.
    public let ttlSeconds: Double
    /// At most this many entries.
    public let capacity: Int

    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var value: Value
        @usableFromInline var validUntil: ContinuousClock.Instant

        @inlinable
        init(value: Value, validUntil: ContinuousClock.Instant) {
            self.value = value
            self.validUntil = validUntil
        }
    }

    @usableFromInline
    struct State: Sendable {
        @usableFromInline var entries: [Key: Entry] = [:]
        /// Bumped by every invalidation.
        @usableFromInline var generation: UInt64 = 0

        @usableFromInline init() {}
    }

    @usableFromInline let state = ReadMostly(State())

    /// - Parameters:
    ///   - ttlSeconds: ≥ 0; 0 caches nothing.
    ///   - capacity: ≥ 1.
    public init(ttlSeconds: Double, capacity: Int = 100_000) {
        self.ttlSeconds = max(0, ttlSeconds)
        self.capacity = max(1, capacity)
    }

    @inlinable public var isEnabled: Bool { ttlSeconds > 0 }

    /// The value cached for `key`, when its entry has not ended.
    @inlinable
    public func lookup(_ key: Key) -> Value? {
        guard isEnabled else { return nil }
        let now = ContinuousClock.now
        return state.read { s -> Value? in
            guard let e = s.entries[key], e.validUntil >= now else { return nil }
            return e.value
        }
    }

    /// The current generation: take it before reading the source on a miss, and pass it to `store`.
    @inlinable
    public func generation() -> UInt64 { state.read { $0.generation } }

    /// Caches `value` for `key`, unless an invalidation happened since `generation` was taken.
    @inlinable
    public func store(_ key: Key, _ value: Value, generation: UInt64) {
        guard isEnabled else { return }
        let entry = Entry(value: value, validUntil: ContinuousClock.now + .milliseconds(Int64(ttlSeconds * 1000 * Double.random(in: 0.5...1))))
        state.write { s in
            guard s.generation == generation else { return }
            if s.entries.count >= capacity { s.entries.removeAll(keepingCapacity: true) }
            s.entries[key] = entry
        }
    }

    /// Forgets the entry of `key` (a write changed it), and fails every store whose read began before
    /// now. One lookup, where `invalidate(where:)` visits every entry.
    public func invalidate(_ key: Key) {
        state.write { s in
            s.generation &+= 1
            s.entries.removeValue(forKey: key)
        }
    }

    /// Forgets the entries `matching` says a write changed (all when nil), and fails every store
    /// whose read began before now.
    public func invalidate(where matching: ((Key, Value) -> Bool)? = nil) {
        state.write { s in
            s.generation &+= 1
            guard !s.entries.isEmpty else { return }
            guard let matching else {
                s.entries.removeAll(keepingCapacity: true)
                return
            }
            s.entries = s.entries.filter { !matching($0.key, $0.value.value) }
        }
    }
}
