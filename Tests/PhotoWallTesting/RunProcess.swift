import CTestSpawn
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A process a test started: the one way the tests start processes (servers, CLI runs, the mock
/// Facebook provider, nginx, `sqlite3`, PostgreSQL's tools).
///
/// It is `posix_spawn` with every descriptor but the three standard ones closed in the child
/// (`posix_spawn_file_actions_addclosefrom_np`), and a thread per child that waits for its end with
/// `waitid`. Foundation's `Process` on Linux is not used, because the tests start processes from
/// parallel suites and it leaks descriptors between them:
/// - it closes in a child only the descriptors that were open when it listed them, and nothing the tests
///   or Foundation open is close-on-exec. A pipe another thread makes at that moment (a CLI run's stdout)
///   is inherited by the child (a server), so the pipe's reader sees its end only when that server exits;
/// - it learns that a child ended when the child's end of a socket pair closes (its `run()`; the
///   mechanism of swift-corelibs-foundation issue #4795), and a child spawned meanwhile by another thread
///   can inherit that socket too. Seen in `make test`: a CLI run's `waitUntilExit()` hung the first pass.
///
/// Here no descriptor reaches a child unless it is one of its standard streams, and the end is read from
/// the kernel (`waitid`), not from a descriptor. `LaunchTests` checks both.
public final class Child: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// The test process's own descriptor.
        case inherit
        /// `/dev/null`.
        case null
        /// The pipe's write end (stdout, stderr) or read end (stdin). The test process's copy of that end
        /// is closed once the child has it, so the other end sees the child's end of the stream.
        case pipe(Pipe)
        /// The handle's descriptor (a file opened for writing, say; `FileHandle.nullDevice` is `/dev/null`);
        /// the handle stays open here.
        case file(FileHandle)
    }

    private struct State {
        /// Foundation's `terminationStatus`: the exit code, or the number of the signal that ended it.
        var status: Int32?
    }

    /// The child's process id.
    public let processIdentifier: Int32
    private let state = Mutex(State())
    /// Left once the end was seen and `onExit` has run.
    private let ended = DispatchGroup()

    /// Starts `executable` (a path; no `PATH` search) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil: the test process's.
    ///   - onExit: called on the waiting thread with `terminationStatus` when the child has ended, before
    ///     `waitUntilExit()` returns (so it must not wait for this child itself).
    /// - Throws: `TestServerError` naming the executable and `errno`'s text when it cannot be started (a
    ///   missing executable, say).
    public init(_ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
                stdin: Stream = .inherit, stdout: Stream = .inherit, stderr: Stream = .inherit,
                onExit: (@Sendable (Int32) -> Void)? = nil) throws {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = withExtendedLifetime((stdin, stdout, stderr)) {
            ctestspawn_spawn(executable, argv, envp, Self.descriptor(stdin, reading: true),
                             Self.descriptor(stdout, reading: false), Self.descriptor(stderr, reading: false), &pid)
        }
        guard rc == 0 else {
            throw TestServerError(description: "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        processIdentifier = pid
        // The child has its ends; without closing ours, a reader here would never see the end of its stream.
        if case .pipe(let p) = stdin { try? p.fileHandleForReading.close() }
        if case .pipe(let p) = stdout { try? p.fileHandleForWriting.close() }
        if case .pipe(let p) = stderr { try? p.fileHandleForWriting.close() }
        ended.enter()
        let waiter = Thread { [self] in
            awaitEnd()
            if let onExit { onExit(terminationStatus) }
            ended.leave()
        }
        waiter.stackSize = 1 << 17
        waiter.start()
    }

    private static func descriptor(_ stream: Stream, reading: Bool) -> Int32 {
        switch stream {
        case .inherit: CTESTSPAWN_INHERIT
        case .null: CTESTSPAWN_NULL
        case .pipe(let p): reading ? p.fileHandleForReading.fileDescriptor : p.fileHandleForWriting.fileDescriptor
        // Foundation's null device has no descriptor (-1 on Linux), which the C side refuses (EBADF).
        case .file(let h): h === FileHandle.nullDevice ? CTESTSPAWN_NULL : h.fileDescriptor
        }
    }

    /// Waits for the end without reaping (`WNOWAIT`), then reaps under the lock that `signal` takes: a
    /// signal is never sent to a process id that was reaped and could belong to another process.
    private func awaitEnd() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        state.withLock { s in
            var status: Int32 = 0
            var rc: pid_t
            repeat { rc = waitpid(processIdentifier, &status, 0) } while rc == -1 && errno == EINTR
            // -1: the end could not be read (reaped elsewhere), which no test should take for a success.
            // Else <sys/wait.h>'s macros, which Swift does not import.
            s.status = rc == -1 ? -1 : status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
        }
    }

    /// Whether the child has not yet been seen to end.
    public var isRunning: Bool { state.withLock { $0.status == nil } }

    /// Waits for the end; then `terminationStatus` is set and `onExit` has run.
    public func waitUntilExit() { ended.wait() }

    /// Waits for the end at most `seconds`. - Returns: whether it ended (and `onExit` ran) in time.
    public func waitUntilExit(timeout seconds: Double) -> Bool { ended.wait(timeout: .now() + seconds) == .success }

    /// The exit code, or the number of the signal that ended the child (Foundation's meaning), or -1 when
    /// its end could not be read; waits for the end first.
    public var terminationStatus: Int32 {
        if let status = state.withLock({ $0.status }) { return status }
        waitUntilExit()
        return state.withLock { $0.status ?? -1 }
    }

    /// Sends `signal` (`kill(2)`) unless the child has already ended.
    public func signal(_ signal: Int32) {
        state.withLock { s in if s.status == nil { _ = kill(processIdentifier, signal) } }
    }

    /// Sends SIGTERM unless the child has already ended.
    public func terminate() { signal(SIGTERM) }
}

/// What a finished command gave back.
public struct CommandResult: Sendable {
    public var status: Int32
    /// Standard output as text.
    public var output: String
    /// Standard error as text.
    public var errors: String
}

/// Runs `executable` with `arguments` to completion, reading its standard output and error.
/// - Parameter environment: variables added to (or replacing those of) the test process's environment.
/// - Throws: what `Child.init` throws.
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
    let env = environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let out = Pipe(), err = Pipe()
    let child = try Child(executable, arguments, environment: env, stdin: .null, stdout: .pipe(out), stderr: .pipe(err))
    // The pipes outlive the reading of their descriptors.
    let read = withExtendedLifetime((out, err)) {
        readToEnd([out.fileHandleForReading.fileDescriptor, err.fileHandleForReading.fileDescriptor]) ?? [[], []]
    }
    return CommandResult(status: child.terminationStatus, output: String(decoding: read[0], as: UTF8.self),
                         errors: String(decoding: read[1], as: UTF8.self))
}

/// Reads `fds` to their ends at once (`poll`), on the calling thread, so that no pipe can fill up and
/// stop its writer while another is read.
/// - Parameter seconds: at most this long in all; nil: until the ends.
/// - Returns: each descriptor's bytes, in order; nil when `seconds` ran out first.
public func readToEnd(_ fds: [Int32], seconds: Double? = nil) -> [[UInt8]]? {
    let deadline = seconds.map { Date().addingTimeInterval($0) }
    var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var bytes = [[UInt8]](repeating: [], count: fds.count)
    var buffer = [UInt8](repeating: 0, count: 65536)
    while polled.contains(where: { $0.fd >= 0 }) {
        var wait: Int32 = -1
        if let deadline {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            wait = Int32(left * 1000) + 1
        }
        guard poll(&polled, nfds_t(polled.count), wait) >= 0 || errno == EINTR else { break }
        for i in polled.indices where polled[i].fd >= 0 && polled[i].revents != 0 {
            let n = read(polled[i].fd, &buffer, buffer.count)
            if n > 0 { bytes[i] += buffer[0..<n] } else if n == 0 || errno != EINTR { polled[i].fd = -1 }
        }
    }
    return bytes
}
