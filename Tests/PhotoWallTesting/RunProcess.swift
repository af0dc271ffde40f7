import Foundation
import Synchronization

/// Serializes `Process.run()` across the test process (see `launch`).
private let launching = Mutex(())

/// Starts `process`, one `run()` at a time in this test process. Every test that starts a process goes
/// through here.
///
/// Foundation's `Process` on Linux learns that a child ended when the child's end of a socket pair
/// closes (its `run()`; the mechanism of swift-corelibs-foundation issue #4795). That socket is made
/// without close-on-exec, and a `run()` on another thread closes in its own child only the descriptors
/// that were open when it listed them. So a server started at the same moment can inherit the socket,
/// and the first process's `waitUntilExit()` then waits for as long as that server lives, while the
/// finished child stays a zombie. Seen in `make test`: a CLI run (`CLIRunner`) hung the first pass.
/// With one `run()` at a time, no socket pair is open while another child is spawned.
/// - Throws: what `Process.run()` throws.
public func launch(_ process: Process) throws {
    try launching.withLock { _ in try process.run() }
}

/// What a finished command gave back.
public struct CommandResult: Sendable {
    public var status: Int32
    /// Standard output as text (standard error is discarded).
    public var output: String
}

/// Runs `executable` with `arguments` to completion.
/// - Parameter environment: variables added to (or replacing those of) the test process's environment.
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    if !environment.isEmpty {
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try launch(p)
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return CommandResult(status: p.terminationStatus, output: String(decoding: data, as: UTF8.self))
}
