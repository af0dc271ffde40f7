#if canImport(Glibc)
import Glibc
#endif

/// A value read on every request and written rarely (schema caches, configuration), behind a
/// `pthread_rwlock_t`: readers never wait for each other.
///
/// `@unchecked Sendable`: `value` is only touched while holding the lock — shared for `read`,
/// exclusive for `write` — and `Value` is `Sendable`, so copies handed out are safe to use anywhere.
/// (Synchronization's `Mutex` serialises readers too, which made it a hot spot on the request path.)
///
/// `read` and `write` are `@inlinable`, so that a caller in another module gets them specialised for its
/// `Value` instead of running the generic code with a metadata lookup per call.
public final class ReadMostly<Value: Sendable>: @unchecked Sendable {
    @usableFromInline var value: Value
    @usableFromInline let lock: UnsafeMutablePointer<pthread_rwlock_t>

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
    @inlinable
    public func read<T>(_ body: (Value) throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// Changes under the exclusive lock.
    @inlinable
    public func write<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
