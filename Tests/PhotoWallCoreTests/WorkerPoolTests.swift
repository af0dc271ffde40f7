import Dispatch
import Foundation
import PhotoWallCore
import Synchronization
import Testing

/// `WorkerPool`: every job runs, in the order queued; a job goes to the thread that went idle last;
/// `stop()` lets the queued jobs finish and refuses new ones.
@Suite struct WorkerPoolTests {
    /// The calling thread's name, as the pool set it (`name-N`).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .newlines)
    }

    /// Waits (up to 10 s) until every thread of `pool` waits for a job. - Returns: whether they all did.
    static func allIdle(_ pool: WorkerPool) -> Bool {
        for _ in 0..<10_000 {
            if pool.idleThreadCount == pool.threadCount { return true }
            usleep(1_000)
        }
        return false
    }

    /// One job at a time, each submitted once the pool is idle again: every one runs on the thread that
    /// ran the one before (it went idle last), not in turn on each of the four (a pool whose idle threads
    /// wait on one shared semaphore wakes the one idle longest).
    @Test func aJobGoesToTheThreadIdleLast() {
        let pool = WorkerPool(threadCount: 4, name: "pool-test")
        defer { pool.stop() }
        #expect(Self.allIdle(pool))
        var names: [String] = []
        for _ in 0..<12 {
            let done = DispatchSemaphore(value: 0)
            let name = Mutex("")
            pool.submit {
                name.withLock { $0 = Self.threadName() }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(Self.allIdle(pool))
            names.append(name.withLock { $0 })
        }
        #expect(Set(names).count == 1, "\(names)")
        #expect(names.first?.hasPrefix("pool-test-") == true)
    }

    /// Many jobs from several threads at once: each runs exactly once, those of one submitter in the
    /// order it queued them (one thread here, so the queue's order is the run order), and `stop()` lets
    /// the jobs already queued finish, then refuses new ones.
    @Test func everyJobRunsOnceInOrderAndStopDrainsTheQueue() {
        let ordered = WorkerPool(threadCount: 1, name: "pool-order")
        let seen = Mutex<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        ordered.submit { gate.wait() }  // holds the one thread while the rest queue up
        for i in 0..<100 { ordered.submit { seen.withLock { $0.append(i) } } }
        ordered.stop()
        #expect(!ordered.trySubmit {})
        gate.signal()
        for _ in 0..<10_000 where seen.withLock({ $0.count }) < 100 { usleep(1_000) }
        #expect(seen.withLock { $0 } == Array(0..<100))

        let pool = WorkerPool(threadCount: 4, name: "pool-many")
        defer { pool.stop() }
        let counts = Mutex([Int](repeating: 0, count: 400))
        let all = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: 4) { s in
            for i in 0..<100 {
                all.enter()
                pool.submit {
                    counts.withLock { $0[s * 100 + i] += 1 }
                    all.leave()
                }
            }
        }
        #expect(all.wait(timeout: .now() + 20) == .success)
        #expect(counts.withLock { $0 } == [Int](repeating: 1, count: 400))
    }

    /// With an active limit of 2 on 8 threads, eight jobs that keep their thread (sleeping outside any
    /// `blocking` region) run two at a time, and all of them run.
    @Test func noMoreThanTheActiveLimitRunAtOnce() {
        let pool = WorkerPool(threadCount: 8, activeLimit: 2, name: "pool-limit")
        defer { pool.stop() }
        let running = Mutex((now: 0, most: 0, ran: 0))
        let all = DispatchGroup()
        for _ in 0..<8 {
            all.enter()
            pool.submit {
                running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                usleep(20_000)
                running.withLock { $0.now -= 1; $0.ran += 1 }
                all.leave()
            }
        }
        #expect(all.wait(timeout: .now() + 20) == .success)
        let seen = running.withLock { $0 }
        #expect(seen.most == 2 && seen.ran == 8, "\(seen)")
    }

    /// With one slot on two threads: a job that waits for the next one inside `WorkerPool.blocking`
    /// gives its slot back, so the next job starts and the wait ends; the same wait outside a `blocking`
    /// region keeps the slot, and the next job starts only after it (the wait times out).
    @Test func aJobWaitingInABlockingRegionLetsTheNextOneStart() {
        let pool = WorkerPool(threadCount: 2, activeLimit: 1, name: "pool-block")
        defer { pool.stop() }
        for marked in [true, false] {
            let nextStarted = DispatchSemaphore(value: 0)
            let outcome = Mutex<DispatchTimeoutResult?>(nil)
            let both = DispatchGroup()
            both.enter(); both.enter()
            pool.submit {
                let wait = { nextStarted.wait(timeout: .now() + (marked ? 10 : 0.3)) }
                let r = marked ? WorkerPool.blocking(wait) : wait()
                outcome.withLock { $0 = r }
                both.leave()
            }
            pool.submit { nextStarted.signal(); both.leave() }
            #expect(both.wait(timeout: .now() + 20) == .success)
            #expect(outcome.withLock { $0 } == (marked ? .success : .timedOut), "marked: \(marked)")
        }
        // Outside a pool thread it only runs the body.
        #expect(WorkerPool.blocking { 7 } == 7)
    }

    /// `stop()` while every slot is taken and jobs are queued: the queued jobs run, then every thread
    /// exits, also those `stop()` woke while no slot was free (they must not wait forever).
    @Test func stopEndsEveryThreadWhenSlotsWereFull() {
        let pool = WorkerPool(threadCount: 4, activeLimit: 1, name: "pool-stopfull")
        let gate = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        pool.submit { gate.wait(); ran.withLock { $0 += 1 } }
        for _ in 0..<3 { pool.submit { ran.withLock { $0 += 1 } } }
        // The first job holds the one slot; the other three threads wait, idle.
        for _ in 0..<10_000 where pool.idleThreadCount < 3 { usleep(1_000) }
        #expect(pool.idleThreadCount == 3)
        pool.stop()
        gate.signal()
        func threadsLeft() -> Int {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.filter {
                ((try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? "").hasPrefix("pool-stopfull")
            }.count
        }
        for _ in 0..<10_000 where threadsLeft() > 0 || ran.withLock({ $0 }) < 4 { usleep(1_000) }
        #expect(ran.withLock { $0 } == 4)
        #expect(threadsLeft() == 0)
    }
}
