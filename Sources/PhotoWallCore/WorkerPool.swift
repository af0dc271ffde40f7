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
/// At most `activeLimit` jobs run at once outside `WorkerPool.blocking` regions (a slot each); the
/// others stay queued, first in, first out. A job that waits on the world outside the process (a
/// disk's sync, a network round trip, a client's next bytes) inside `WorkerPool.blocking` gives its
/// slot back for that time, so the next job starts: the way Java's `ForkJoinPool.managedBlock` and
/// Go's scheduler (a goroutine in a system call hands over its P) keep a CPU-sized set of threads
/// running while others wait. A wait for CPU work of this process on another thread (a running
/// thumbnail render, the SQLite writer) keeps its slot: giving it back would only admit more work
/// to queue for the same cores. A render still waiting for a render thread is not CPU work: its
/// request gives the slot back until it starts (else a burst of large photos made every other
/// request wait behind the renders' whole queue). So a pool can have many threads for the jobs that
/// block without admitting as many jobs to the cores at once: under load the jobs beyond the limit
/// wait in this queue, all alike, instead of each running on a thirty-second of the CPU (and the
/// threads they wait for, the renders and the writer, on as little), where a job's latency grows
/// with the work admitted.
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
        /// Per thread: woken with a slot (`granted`), which it holds from then on.
        var granted: [Bool]
        init(threadCount: Int) { granted = Array(repeating: false, count: threadCount) }

        /// Jobs queued, from `head` on (mirrored in `WorkerPool.queuedJobs`).
        var queuedCount: Int { jobs.count - head }
        var hasQueuedJobs: Bool { queuedCount > 0 }

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
    /// Jobs that may run at once outside `blocking` regions (1...threadCount).
    public let activeLimit: Int
    public let overflow: Overflow?
    private let queue: Mutex<Queue>
    /// Slots held: threads running a job outside a `blocking` region, or woken with a slot to take one.
    /// At most `activeLimit`, except after a `blocking` region ends (its thread takes its slot back
    /// without waiting; no job starts while the count is at or over the limit). An atomic, not in
    /// `queue`, so a `blocking` region costs no lock while nothing is queued.
    private let slots = Atomic<Int>(0)
    /// Jobs queued (`Queue.jobs` from `head`), written under `queue`'s lock. Sequentially consistent
    /// with `slots`: a submit stores it and then reads `slots`; a thread entering a `blocking` region
    /// lowers `slots` and then reads it; so one of the two always sees the other and grants the slot.
    private let queuedJobs = Atomic<Int>(0)
    /// One per thread: signalled once each time the thread is taken off `Queue.idle` (by a submit, or
    /// by `stop()`). A thread woken for a job another thread took first (or the watchdog moved) finds
    /// the queue empty and goes back on the idle stack.
    private let wakeUps: [DispatchSemaphore]
    /// Wakes the watchdog when a job arrives while it sleeps with no deadline, and at `stop()`.
    private let watchdogWake = DispatchSemaphore(value: 0)

    /// Starts `threadCount` detached threads named `name-0`, `name-1`, … (names cut to 15 bytes), and
    /// with `overflow` a watchdog thread `name-w`. `activeLimit` (default `threadCount`: no limit beyond
    /// the threads) caps the jobs running outside `blocking` regions; it must be in 1...threadCount.
    public init(threadCount: Int, activeLimit: Int? = nil, name: String, overflow: Overflow? = nil) {
        precondition(threadCount > 0, "a worker pool needs at least one thread")
        let activeLimit = activeLimit ?? threadCount
        precondition((1...threadCount).contains(activeLimit), "a worker pool's active limit must be in 1...threadCount")
        self.threadCount = threadCount
        self.activeLimit = activeLimit
        self.overflow = overflow
        queue = Mutex(Queue(threadCount: threadCount))
        wakeUps = (0..<threadCount).map { _ in DispatchSemaphore(value: 0) }
        for i in 0..<threadCount { spawnThread(name: "\(name)-\(i)", index: i, main: workerThreadMain) }
        if overflow != nil { spawnThread(name: "\(name)-w", index: -1, main: watchdogThreadMain) }
    }

    /// Queues `job`; it runs on one of the pool's threads (or the overflow pool's). Must not be called
    /// after `stop()`.
    /// - Returns: whether an idle thread was woken for it with a slot, so that it starts at once (unless
    ///   a job queued just before it takes that thread); false when it waits for a thread or a slot.
    @discardableResult
    public func submit(_ job: @escaping Job) -> Bool {
        guard let woke = enqueue(job) else { preconditionFailure("job submitted to a stopped worker pool") }
        return woke
    }

    /// Queues `job` unless `stop()` was called. - Returns: false when stopped (`job` was not queued).
    public func trySubmit(_ job: @escaping Job) -> Bool { enqueue(job) != nil }

    /// Queues `job`. - Returns: nil when stopped (`job` was not queued); else whether an idle thread was
    /// woken for it (`submit`).
    private func enqueue(_ job: @escaping Job) -> Bool? {
        let queued = ContinuousClock.now
        let (accepted, wakeWatchdog, thread) = queue.withLock { q -> (Bool, Bool, Int?) in
            guard !q.stopping else { return (false, false, nil) }
            q.jobs.append((job, queued))
            queuedJobs.store(q.queuedCount, ordering: .sequentiallyConsistent)
            defer { q.watchdogIdle = false }
            return (true, q.watchdogIdle, grantSlot(&q))
        }
        guard accepted else { return nil }
        if let thread { wakeUps[thread].signal() }
        if wakeWatchdog { watchdogWake.signal() }
        return thread != nil
    }

    /// Takes the thread idle last off the idle stack with a slot, when a slot is free and one is idle.
    /// - Returns: the thread to wake.
    private func grantSlot(_ q: inout Queue) -> Int? {
        guard !q.idle.isEmpty, takeSlot() else { return nil }
        let thread = q.idle.removeLast()
        q.granted[thread] = true
        return thread
    }

    /// Takes a slot when fewer than `activeLimit` are held. - Returns: whether it took one.
    private func takeSlot() -> Bool {
        var held = slots.load(ordering: .sequentiallyConsistent)
        while held < activeLimit {
            let (exchanged, now) = slots.compareExchange(expected: held, desired: held + 1, ordering: .sequentiallyConsistent)
            if exchanged { return true }
            held = now
        }
        return false
    }

    /// Runs `body`, which waits on something outside the process (a disk's sync, a network round
    /// trip, another request's client), with the calling thread's slot in its pool given back
    /// meanwhile, so a queued job may start. The slot is taken back when `body` returns or throws,
    /// without waiting. Nested calls give it back once. On a thread that is not a pool's it only runs
    /// `body`. Adapters call it around such waits (`fsync`, a libpq or libcurl call); a wait left
    /// unmarked only holds its slot longer. Not for waits on this process's CPU work (see the type).
    public static func blocking<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        guard let raw = pthread_getspecific(workerThreadKey) else { return try body() }
        let state = Unmanaged<WorkerThreadState>.fromOpaque(raw).takeUnretainedValue()
        state.blockingDepth += 1
        if state.blockingDepth == 1 { state.pool.releaseSlot() }
        defer {
            state.blockingDepth -= 1
            if state.blockingDepth == 0 { state.pool.slots.add(1, ordering: .sequentiallyConsistent) }
        }
        return try body()
    }

    /// A thread entering a `blocking` region: its slot goes to an idle thread when a job is queued.
    private func releaseSlot() {
        slots.subtract(1, ordering: .sequentiallyConsistent)
        guard queuedJobs.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let thread = queue.withLock { q in q.hasQueuedJobs ? grantSlot(&q) : nil }
        if let thread { wakeUps[thread].signal() }
    }

    /// How many threads wait for a job at this moment (a snapshot: it may change at once).
    public var idleThreadCount: Int { queue.withLock { $0.idle.count } }

    /// Lets every thread exit once the queue is empty. Jobs already queued still run (here: the
    /// watchdog moves no more of them). Returns at once.
    public func stop() {
        let (first, idle) = queue.withLock { q in
            defer { q.stopping = true; q.idle = [] }
            // Jobs still queued are run by the threads holding slots; an idle thread holds none.
            return (!q.stopping, q.idle)
        }
        guard first else { return }
        // The busy threads see `stopping` when they next find the queue empty.
        for thread in idle { wakeUps[thread].signal() }
        if overflow != nil { watchdogWake.signal() }
    }

    /// Thread `index`: runs queued jobs while it holds a slot; with none queued (or no slot free), gives
    /// its slot back, goes on the idle stack and waits to be taken off it.
    fileprivate func runLoop(index: Int) {
        // The thread's state for `blocking`, found through the thread-specific key; it outlives every job.
        let state = WorkerThreadState(pool: self)
        pthread_setspecific(workerThreadKey, Unmanaged.passUnretained(state).toOpaque())
        defer { pthread_setspecific(workerThreadKey, nil) }
        var holdsSlot = false
        while true {
            let (job, exit, lingering): (Job?, Bool, [Int]) = queue.withLock { q in
                if q.granted[index] { q.granted[index] = false; holdsSlot = true }
                // Over the limit (threads back from `blocking` regions): this one waits, idle.
                if holdsSlot, slots.load(ordering: .sequentiallyConsistent) > activeLimit {
                    slots.subtract(1, ordering: .sequentiallyConsistent); holdsSlot = false
                }
                if !holdsSlot, q.hasQueuedJobs, takeSlot() { holdsSlot = true }
                if holdsSlot, let entry = q.popFirst() {
                    queuedJobs.store(q.queuedCount, ordering: .sequentiallyConsistent)
                    return (entry.job, false, [])
                }
                if holdsSlot { slots.subtract(1, ordering: .sequentiallyConsistent); holdsSlot = false }
                if q.stopping && !q.hasQueuedJobs {
                    // Threads that went idle after `stop()` (woken by it while every slot was taken)
                    // exit too, now that the queue is empty.
                    defer { q.idle = [] }
                    return (nil, true, q.idle)
                }
                q.idle.append(index)
                return (nil, false, [])
            }
            for thread in lingering { wakeUps[thread].signal() }
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
                queuedJobs.store(q.queuedCount, ordering: .sequentiallyConsistent)
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

/// A pool thread's state for `WorkerPool.blocking`, reached through `workerThreadKey`.
// @unchecked Sendable: only its own thread reads or writes `blockingDepth` (the key is per thread).
private final class WorkerThreadState: @unchecked Sendable {
    unowned let pool: WorkerPool
    var blockingDepth = 0
    init(pool: WorkerPool) { self.pool = pool }
}

/// The thread-specific key under which a pool thread keeps its `WorkerThreadState` (unretained: the
/// thread's run loop holds it). Created once, never deleted.
private let workerThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key, nil)
    precondition(rc == 0, "pthread_key_create failed with \(rc)")
    return key
}()

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
