import Foundation
import PhotoWallTesting
import Testing

/// `launch`, the one way the tests start a process: a child that ended is seen as ended, whatever
/// other threads start meanwhile.
@Suite struct LaunchTests {
    /// While another thread starts long-lived processes (as parallel tests start servers), 300 short
    /// ones are started and waited for, one after another. Foundation must see each end (its
    /// `terminationHandler` runs when it does, as `waitUntilExit()` returns). With `Process.run()`
    /// called from both threads at once, about one in 300 was seen only when the long-lived process
    /// that had inherited its socket ended (every run of this test failed that way).
    @Test func aChildThatEndedIsSeenWhileOtherThreadsStartProcesses() throws {
        let sleepers = Sleepers()
        let starter = Thread {
            for _ in 0..<400 where !sleepers.stopping {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/bin/sleep")
                p.arguments = ["60"]
                let ended = sleepers.ended
                ended.enter()
                p.terminationHandler = { _ in ended.leave() }
                guard (try? launch(p)) != nil else { ended.leave(); break }
                sleepers.add(p)
            }
            sleepers.starterEnded.signal()
        }
        starter.start()
        defer { sleepers.stopAll() }
        for i in 0..<300 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/true")
            let ended = DispatchSemaphore(value: 0)
            p.terminationHandler = { _ in ended.signal() }
            try launch(p)
            // Far beyond a spawn of /bin/true; a missed end lasts as long as a sleeper (60 s).
            let seen = ended.wait(timeout: .now() + 15) == .success
            #expect(seen, "the end of run \(i) was not seen after 15 s")
            if !seen { break }
            #expect(p.terminationStatus == 0)
        }
    }
}

/// The long-lived processes of `LaunchTests`, kept alive (Foundation refers to each unretained until it
/// ends) and ended at the test's end.
private final class Sleepers: @unchecked Sendable {
    // @unchecked Sendable: `processes` and `stop` are only touched under `lock`.
    private let lock = NSLock()
    private var processes: [Process] = []
    private var stop = false
    let starterEnded = DispatchSemaphore(value: 0)
    /// Entered before each start, left by its termination handler.
    let ended = DispatchGroup()

    var stopping: Bool { lock.withLock { stop } }
    func add(_ p: Process) { lock.withLock { processes.append(p) } }

    /// Stops the starting thread, then ends every process it started and waits until each end is seen.
    func stopAll() {
        lock.withLock { stop = true }
        starterEnded.wait()
        let all = lock.withLock { processes }
        // SIGKILL: a child may inherit a blocked SIGTERM from the thread that spawned it.
        for p in all where p.isRunning { kill(p.processIdentifier, SIGKILL) }
        _ = ended.wait(timeout: .now() + 90)
    }
}
