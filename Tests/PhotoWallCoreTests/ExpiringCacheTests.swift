import Testing
import PhotoWallCore

/// `ExpiringCache`, the mechanism under the session and friend-list caches.
@Suite struct ExpiringCacheTests {
    @Test func aStoreRacingAnInvalidationIsDropped() {
        let cache = ExpiringCache<String, Int>(ttlSeconds: 60)
        let before = cache.generation()
        cache.invalidate { key, _ in key == "other" }  // a write lands while a reader reads the source
        cache.store("k", 1, generation: before)
        #expect(cache.lookup("k") == nil, "a value read before a write must not be put back after it")
        cache.store("k", 2, generation: cache.generation())
        #expect(cache.lookup("k") == 2)
    }

    @Test func invalidationForgetsOnlyWhatItMatches() {
        let cache = ExpiringCache<String, Int>(ttlSeconds: 60)
        for (k, v) in [("a", 1), ("b", 2), ("c", 3)] { cache.store(k, v, generation: cache.generation()) }
        cache.invalidate { _, value in value == 2 }
        #expect([cache.lookup("a"), cache.lookup("b"), cache.lookup("c")] == [1, nil, 3])
        cache.invalidate()
        #expect([cache.lookup("a"), cache.lookup("c")] == [nil, nil])
    }

    @Test func entriesEndWithinTheirLifetime() async throws {
        let cache = ExpiringCache<String, Int>(ttlSeconds: 0.2)
        cache.store("k", 1, generation: cache.generation())
        #expect(cache.lookup("k") == 1)
        try await Task.sleep(for: .milliseconds(250))
        #expect(cache.lookup("k") == nil, "no entry outlives ttlSeconds")
    }

    @Test func offCachesNothingAndFullEmpties() {
        let off = ExpiringCache<String, Int>(ttlSeconds: 0)
        off.store("k", 1, generation: off.generation())
        #expect(off.lookup("k") == nil)
        let small = ExpiringCache<Int, Int>(ttlSeconds: 60, capacity: 2)
        for k in 0..<3 { small.store(k, k, generation: small.generation()) }
        #expect(small.lookup(2) == 2)
        #expect(small.lookup(0) == nil && small.lookup(1) == nil, "a full cache is emptied before the next entry")
    }
}
