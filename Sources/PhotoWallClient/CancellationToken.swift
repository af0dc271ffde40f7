import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A flag that stops an upload from any thread (or a signal handler: `cancel()` is one atomic
/// store). A running transfer notices within about 50 ms and throws `ClientError` `.cancelled`.
public final class CancellationToken: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    /// Asks every operation holding this token to stop. Idempotent.
    public func cancel() { flag.store(true, ordering: .sequentiallyConsistent) }

    public var isCancelled: Bool { flag.load(ordering: .sequentiallyConsistent) }

    /// Sleeps `seconds`, waking early when cancelled. - Returns: false when cancelled.
    public func sleep(seconds: Double) -> Bool {
        var left = seconds
        while left > 0 {
            if isCancelled { return false }
            let step = min(left, 0.02)
            usleep(UInt32(step * 1_000_000))
            left -= step
        }
        return !isCancelled
    }
}
