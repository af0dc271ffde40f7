#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex with one condition variable, for the blocking waits `Mutex` can't do (a thread
/// sleeping until another changes the state the lock guards).
///
/// The guarded state belongs to the owner, which touches it only inside `withLock`; `wait`,
/// `signal`, `broadcast` and `withoutLock` are called only inside `withLock`.
///
/// `@unchecked Sendable`: the pthread objects are used only through `pthread_*` calls, which are
/// thread-safe by contract, and the pointers never change after `init`.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Inside `withLock`: releases the mutex until `signal` or `broadcast` (or a spurious wake-up:
    /// check the state again), then holds it again.
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Inside `withLock`: wakes one waiting thread.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Inside `withLock`: wakes every waiting thread.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Inside `withLock`: runs `body` with the mutex released (for work others must not wait on),
    /// then holds it again.
    public func withoutLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_unlock(mutex)
        defer { pthread_mutex_lock(mutex) }
        return try body()
    }
}
