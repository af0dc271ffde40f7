/// Turns raw byte counts into the progress callbacks `TusClient.upload` promises:
/// monotonic (never below an earlier report), at most one call per `minimumInterval` (default
/// 50 ms, so about 20 per second), below `total` until `finish()`, and `total` exactly once, last.
///
/// Not thread-safe: used by the one thread running the upload.
final class ProgressReporter {
    let total: Int64
    let minimumInterval: Duration
    private let callback: (Int64, Int64) -> Void
    private var lastReported: Int64 = -1
    private var lastTime: ContinuousClock.Instant?
    private var finished = false

    init(total: Int64, minimumInterval: Duration, callback: @escaping (Int64, Int64) -> Void) {
        self.total = total; self.minimumInterval = minimumInterval; self.callback = callback
    }

    /// Offers `sent` bytes; reported when it is new, below `total` and the interval has passed.
    func update(_ sent: Int64) {
        guard !finished else { return }
        // `total` is reserved for finish(): the server hasn't confirmed completion yet.
        let value = min(sent, total - 1)
        guard value > lastReported else { return }
        let now = ContinuousClock.now
        if let last = lastTime, now - last < minimumInterval { return }
        lastTime = now
        lastReported = value
        callback(value, total)
    }

    /// Reports `total` (once; later calls do nothing).
    func finish() {
        guard !finished else { return }
        finished = true
        lastReported = total
        callback(total, total)
    }
}
