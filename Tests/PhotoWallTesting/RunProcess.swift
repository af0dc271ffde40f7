import Foundation

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
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return CommandResult(status: p.terminationStatus, output: String(decoding: data, as: UTF8.self))
}
