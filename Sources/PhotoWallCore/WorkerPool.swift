internal import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A fixed set of OS threads running jobs in FIFO order.
///
/// A job goes to the thread that went idle last (a stack of idle threads, each waiting on its own
/// semaphore), not to the one idle longest: under light load the same few threads take every job,
/// with their stacks, malloc arenas and per-thread state (e.g. a SQLite reader connection, its page
/// cache, statements and mapped pages) still warm, and the threads idle longest stay asleep.
///
/// Deliberately not the Swift cooperative pool: route handlers block on SQLite, fsync and libcurl,
/// and a blocked cooperative thread stalls every `async` task in the process. Nor Dispatch's global
/// queues for work that blocks: on Linux their pool adds a thread only about once a second while its
/// threads are blocked, so one job stuck on a disk or a network stalls the jobs queued behind it.
///
/// With an `Overflow`, a job that has waited in the queue longer than `Overflow.after` is handed to
/// the overflow pool instead, by a watchdog thread: a few jobs that run long (a hostile query, say)
/// then hold only their own threads, and the jobs queued behind them still start, on the other pool.
public final class WorkerPool: Sendable {
    public typealias Job = @Sendable () -> Void

    /// Where jobs that waited too long go, and after how long.
    public struct Overflow: Sendable {
        public let pool: WorkerPool
        public let after: Duration
        public init(pool: WorkerPool, after: Duration) { self.pool = pool; self.after = after }
    }

    private struct Queue {
        var jobs: [(job: Job, queued: ContinuousClock.Instant)] = []
        var head = 0
        var stopping = false
        /// The watchdog sleeps with no deadline (nothing queued) and wants a signal on the next submit.
        var watchdogIdle = false
        /// Threads waiting for a job (indexes into `wakeUps`), the one idle last at the end.
        var idle: [Int] = []

        /// Removes and returns the job at the head.
        mutating func popFirst() -> (job: Job, queued: ContinuousClock.Instant)? {
            guard head < jobs.count else { return nil }
            let entry = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 {
                jobs.removeFirst(head)
                head = 0
            }
            return entry
        }
    }

    public let threadCount: Int
    public let overflow: Overflow?
    private let queue = Mutex(Queue())
    /// One per thread: signalled once each time the thread is taken off `Queue.idle` (by a submit, or
    /// by `stop()`). A thread woken for a job another thread took first (or the watchdog moved) finds
    /// the queue empty and goes back on the idle stack.
    private let wakeUps: [DispatchSemaphore]
    /// Wakes the watchdog when a job arrives while it sleeps with no deadline, and at `stop()`.
    private let watchdogWake = DispatchSemaphore(value: 0)

    /// Starts `threadCount` detached threads named `name-0`, `name-1`, … (names cut to 15 bytes), and
    /// with `overflow` a watchdog thread `name-w`.
    public init(threadCount: Int, name: String, overflow: Overflow? = nil) {
        precondition(threadCount > 0, "a worker pool needs at least one thread")
        self.threadCount = threadCount
        self.overflow = overflow
        wakeUps = (0..<threadCount).map { _ in DispatchSemaphore(value: 0) }
        for i in 0..<threadCount { spawnThread(name: "\(name)-\(i)", index: i, main: workerThreadMain) }
        if overflow != nil { spawnThread(name: "\(name)-w", index: -1, main: watchdogThreadMain) }
    }

    /// Queues `job`; it runs on one of the pool's threads (or the overflow pool's). Must not be called
    /// after `stop()`.
    public func submit(_ job: @escaping Job) {
        precondition(trySubmit(job), "job submitted to a stopped worker pool")
    }

    /// Queues `job` unless `stop()` was called. - Returns: false when stopped (`job` was not queued).
    public func trySubmit(_ job: @escaping Job) -> Bool {
        let queued = ContinuousClock.now
        let (accepted, wakeWatchdog, thread) = queue.withLock { q -> (Bool, Bool, Int?) in
            guard !q.stopping else { return (false, false, nil) }
            q.jobs.append((job, queued))
            defer { q.watchdogIdle = false }
            return (true, q.watchdogIdle, q.idle.popLast())
        }
        guard accepted else { return false }
        if let thread { wakeUps[thread].signal() }
        if wakeWatchdog { watchdogWake.signal() }
        return true
    }

    /// How many threads wait for a job at this moment (a snapshot: it may change at once).
    public var idleThreadCount: Int { queue.withLock { $0.idle.count } }

    /// Lets every thread exit once the queue is empty. Jobs already queued still run (here: the
    /// watchdog moves no more of them). Returns at once.
    public func stop() {
        let (first, idle) = queue.withLock { q in
            defer { q.stopping = true; q.idle = [] }
            return (!q.stopping, q.idle)
        }
        guard first else { return }
        // The busy threads see `stopping` when they next find the queue empty.
        for thread in idle { wakeUps[thread].signal() }
        if overflow != nil { watchdogWake.signal() }
    }

    /// Thread `index`: runs queued jobs; with none, goes on the idle stack and waits to be taken off it.
    fileprivate func runLoop(index: Int) {
        while true {
            let (job, exit): (Job?, Bool) = queue.withLock { q in
                if let entry = q.popFirst() { return (entry.job, false) }
                if q.stopping { return (nil, true) }
                q.idle.append(index)
                return (nil, false)
            }
            if let job { job() } else if exit { return } else { wakeUps[index].wait() }
        }
    }

    /// The watchdog: moves each job that has waited `overflow.after` to the overflow pool, sleeping
    /// until the oldest queued job's time comes (or, with nothing queued, until the next submit).
    fileprivate func watchdogLoop() {
        guard let overflow else { return }
        while true {
            let now = ContinuousClock.now
            let (late, nextCheck, stopping): ([Job], ContinuousClock.Instant?, Bool) = queue.withLock { q in
                guard !q.stopping else { return ([], nil, true) }
                var late: [Job] = []
                while q.head < q.jobs.count, now - q.jobs[q.head].queued >= overflow.after {
                    late.append(q.popFirst()!.job)
                }
                if q.head < q.jobs.count { return (late, q.jobs[q.head].queued + overflow.after, false) }
                q.watchdogIdle = true
                return (late, nil, false)
            }
            for job in late where !overflow.pool.trySubmit(job) {
                job() // the overflow pool is stopping: run it here rather than drop it
            }
            if stopping { return }
            if let nextCheck {
                let wait = nextCheck - ContinuousClock.now
                if wait > .zero {
                    let (seconds, attoseconds) = wait.components
                    _ = watchdogWake.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
                }
            } else {
                watchdogWake.wait()
            }
        }
    }

    private func spawnThread(name: String, index: Int, main: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?) {
        // Retained here, released by the new thread in workerThreadMain (one retain rule).
        let start = Unmanaged.passRetained(WorkerThreadStart(pool: self, name: name, index: index)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, main, start)
        precondition(rc == 0, "pthread_create failed with \(rc)")
    }
}

/// What a new worker thread needs; handed over through pthread's `void *` argument.
private final class WorkerThreadStart: Sendable {
    let pool: WorkerPool
    let name: String
    /// The worker's index in the pool (-1: the watchdog).
    let index: Int
    init(pool: WorkerPool, name: String, index: Int) { self.pool = pool; self.name = name; self.index = index }
}

/// pthread entry point (a global function: C cannot call closures that capture).
private func workerThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<WorkerThreadStart>.fromOpaque(argument!).takeRetainedValue()
    setCurrentThreadName(start.name)
    start.pool.runLoop(index: start.index)
    return nil
}

/// pthread entry point of a pool's watchdog (see `WorkerPool.Overflow`).
private func watchdogThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<WorkerThreadStart>.fromOpaque(argument!).takeRetainedValue()
    setCurrentThreadName(start.name)
    start.pool.watchdogLoop()
    return nil
}

/// Names the calling thread (as `top -H`, `perf` and `/proc/self/task/*/comm` show it), cut to the 15
/// bytes Linux keeps. `pthread_setname_np` is a GNU extension Swift's Glibc module does not import: it
/// is looked up once in the C library (its address as an integer, so the constant is Sendable); where
/// it does not exist the thread keeps its name.
public func setCurrentThreadName(_ name: String) {
    guard let address = UnsafeRawPointer(bitPattern: threadNameSetterAddress) else { return }
    typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    let setName = unsafeBitCast(address, to: SetName.self)
    var bytes = Array(name.utf8.prefix(15)).map { CChar(bitPattern: $0) }
    bytes.append(0)
    _ = setName(pthread_self(), bytes)
}

private let threadNameSetterAddress = Int(bitPattern: dlsym(nil, "pthread_setname_np"))
