#if canImport(Glibc)
import Glibc
#endif

/// A value read on every request and written rarely (schema caches, configuration), behind a
/// `pthread_rwlock_t`: readers never wait for each other.
///
/// `@unchecked Sendable`: `value` is only touched while holding the lock — shared for `read`,
/// exclusive for `write` — and `Value` is `Sendable`, so copies handed out are safe to use anywhere.
/// (Synchronization's `Mutex` serialises readers too, which made it a hot spot on the request path.)
public final class ReadMostly<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    public init(_ value: Value) {
        self.value = value
        lock = .allocate(capacity: 1)
        precondition(pthread_rwlock_init(lock, nil) == 0, "pthread_rwlock_init failed")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Reads under the shared lock.
    public func read<T>(_ body: (Value) throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// Changes under the exclusive lock.
    public func write<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
