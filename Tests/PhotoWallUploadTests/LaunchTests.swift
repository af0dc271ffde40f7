import Foundation
import PhotoWallTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `Child`, the one way the tests start a process: whatever other threads start meanwhile, a child's
/// output ends when it ends, and its end is seen.
@Suite struct LaunchTests {
    /// While another thread starts long-lived processes (as parallel tests start servers), 300 short ones
    /// are started one after another, each writing one line into a pipe made just before (as `runProcess`
    /// does). Each pipe must reach its end, and each end must be seen, within 15 s; a pipe or socket
    /// inherited by a long-lived process would hold either open for its 60 s.
    ///
    /// With Foundation's `Process` (and its `run()` called one at a time), a pipe made while the other
    /// thread's `run()` ran was inherited by its `sleep`; that failed this test in every run.
    @Test func aChildsOutputAndEndAreSeenWhileOtherThreadsStartProcesses() throws {
        let sleepers = Sleepers()
        let starter = Thread {
            for _ in 0..<400 where !sleepers.stopping {
                let ended = sleepers.ended
                ended.enter()
                guard let p = try? Child("/bin/sleep", ["60"], onExit: { _ in ended.leave() }) else { ended.leave(); break }
                sleepers.add(p)
            }
            sleepers.starterEnded.signal()
        }
        starter.start()
        defer { sleepers.stopAll() }
        for i in 0..<300 {
            let out = Pipe()
            let p = try Child("/bin/echo", ["run \(i)"], stdout: .pipe(out))
            // Far beyond a spawn of /bin/echo; an inherited pipe stays open as long as a sleeper (60 s).
            let output = withExtendedLifetime(out) {
                readToEnd([out.fileHandleForReading.fileDescriptor], seconds: 15).map { String(decoding: $0[0], as: UTF8.self) }
            }
            #expect(output == "run \(i)\n", "the output of run \(i) did not end within 15 s")
            let ended = p.waitUntilExit(timeout: 15)
            #expect(ended, "the end of run \(i) was not seen after 15 s")
            if output != "run \(i)\n" || !ended { break }
            #expect(p.terminationStatus == 0)
        }
    }

    /// Each stream is what its descriptor is when the child starts, even one of this process's own 0-2
    /// that another stream of the child replaces: stderr given this process's stdout, with stdout into a
    /// pipe, does not follow stdout into the pipe. `FileHandle.nullDevice` (which has no descriptor) is
    /// `/dev/null`, not this process's own stream.
    @Test func streamsAreTheDescriptorsTheyWereGiven() throws {
        let out = Pipe()
        let p = try Child("/bin/sh", ["-c", "echo out; echo LaunchTests: this line goes to the stdout of the test run >&2"],
                          stdout: .pipe(out), stderr: .file(FileHandle.standardOutput))
        #expect(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "out\n")
        #expect(p.terminationStatus == 0)
        let quiet = Pipe()
        let q = try Child("/bin/sh", ["-c", "echo out; echo err >&2"], stdin: .file(.nullDevice), stdout: .file(.nullDevice),
                          stderr: .pipe(quiet))
        #expect(String(decoding: quiet.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "err\n")
        #expect(q.terminationStatus == 0)
    }

    /// `terminationStatus` is the exit code, or the signal that ended the child; a signal after the end
    /// is not sent; a missing executable is an error naming it.
    @Test func statusSignalsAndErrors() throws {
        #expect(try Child("/bin/sh", ["-c", "exit 3"]).terminationStatus == 3)
        let sleeper = try Child("/bin/sleep", ["60"])
        #expect(sleeper.isRunning)
        sleeper.terminate()
        #expect(sleeper.terminationStatus == SIGTERM)
        #expect(!sleeper.isRunning)
        sleeper.signal(SIGKILL)
        #expect(throws: TestServerError.self) { try Child("/nonexistent/photowall-test") }
        let r = try runProcess("/bin/sh", ["-c", "echo out; echo err >&2; exit 4"])
        #expect(r.status == 4 && r.output == "out\n" && r.errors == "err\n")
    }
}

/// The long-lived processes of `LaunchTests`, ended at the test's end.
private final class Sleepers: @unchecked Sendable {
    // @unchecked Sendable: `processes` and `stop` are only touched under `lock`.
    private let lock = NSLock()
    private var processes: [Child] = []
    private var stop = false
    let starterEnded = DispatchSemaphore(value: 0)
    /// Entered before each start, left when its end was seen.
    let ended = DispatchGroup()

    var stopping: Bool { lock.withLock { stop } }
    func add(_ p: Child) { lock.withLock { processes.append(p) } }

    /// Stops the starting thread, then ends every process it started and waits until each end is seen.
    func stopAll() {
        lock.withLock { stop = true }
        starterEnded.wait()
        for p in lock.withLock({ processes }) { p.signal(SIGKILL) }
        _ = ended.wait(timeout: .now() + 90)
    }
}
