internal import CMHDShim
internal import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A fixed set of OS threads running jobs in FIFO order.
///
/// Deliberately not the Swift cooperative pool: route handlers block on SQLite, fsync and libcurl,
/// and a blocked cooperative thread stalls every `async` task in the process.
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> Void

    private struct Queue {
        var jobs: [Job] = []
        var head = 0
        var stopping = false
    }

    let threadCount: Int
    private let queue = Mutex(Queue())
    /// Counts queued jobs plus one wake-up per thread once `stop()` was called.
    private let available = DispatchSemaphore(value: 0)

    /// Starts `threadCount` detached threads named `name-0`, `name-1`, … (names cut to 15 bytes).
    init(threadCount: Int, name: String) {
        precondition(threadCount > 0, "a worker pool needs at least one thread")
        self.threadCount = threadCount
        for i in 0..<threadCount { spawnThread(name: "\(name)-\(i)") }
    }

    /// Queues `job`; it runs on one of the pool's threads. Must not be called after `stop()`.
    func submit(_ job: @escaping Job) {
        queue.withLock { q in
            precondition(!q.stopping, "job submitted to a stopped worker pool")
            q.jobs.append(job)
        }
        available.signal()
    }

    /// Lets every thread exit once the queue is empty. Jobs already queued still run. Returns at once.
    func stop() {
        let first = queue.withLock { q in
            defer { q.stopping = true }
            return !q.stopping
        }
        guard first else { return }
        for _ in 0..<threadCount { available.signal() }
    }

    fileprivate func runLoop() {
        while true {
            available.wait()
            let job: Job? = queue.withLock { q in
                guard q.head < q.jobs.count else { return nil }
                let job = q.jobs[q.head]
                q.head += 1
                if q.head == q.jobs.count {
                    q.jobs.removeAll(keepingCapacity: true)
                    q.head = 0
                } else if q.head >= 1024 {
                    q.jobs.removeFirst(q.head)
                    q.head = 0
                }
                return job
            }
            guard let job else { return } // a stop wake-up and nothing left to do
            job()
        }
    }

    private func spawnThread(name: String) {
        // Retained here, released by the new thread in workerThreadMain (one retain rule).
        let start = Unmanaged.passRetained(WorkerThreadStart(pool: self, name: name)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, workerThreadMain, start)
        precondition(rc == 0, "pthread_create failed with \(rc)")
    }
}

/// What a new worker thread needs; handed over through pthread's `void *` argument.
private final class WorkerThreadStart: Sendable {
    let pool: WorkerPool
    let name: String
    init(pool: WorkerPool, name: String) { self.pool = pool; self.name = name }
}

/// pthread entry point (a global function: C cannot call closures that capture).
private func workerThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<WorkerThreadStart>.fromOpaque(argument!).takeRetainedValue()
    CMHDShim_set_current_thread_name(start.name)
    start.pool.runLoop()
    return nil
}
