import Foundation
import PhotoWallTesting
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `photowall` binary as a user would, with its own home, config and cache
/// directories (so sessions and resume state never touch the real ones).
struct CLIRunner {
    let home: String

    var configDir: String { home + "/config/photowall" }
    var cacheDir: String { home + "/cache/photowall" }

    struct Outcome: Sendable {
        var code: Int32
        var stdout: String
        var stderr: String
        /// stdout's lines parsed as JSON objects (for `--json`).
        var events: [[String: Any]] {
            stdout.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
        }
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for k in ["PHOTOWALL_SERVER", "PARSE_SERVER_APPLICATION_ID", "PHOTOWALL_PASSWORD", "PHOTOWALL_USERNAME"] { env[k] = nil }
        env["HOME"] = home
        env["XDG_CONFIG_HOME"] = home + "/config"
        env["XDG_CACHE_HOME"] = home + "/cache"
        return env
    }

    /// Starts the CLI with `args` and this runner's environment plus `extra`.
    func start(_ args: [String], env extra: [String: String] = [:], stdin: Child.Stream = .null,
               stdout: Child.Stream, stderr: Child.Stream) throws -> Child {
        var env = environment
        for (k, v) in extra { env[k] = v }
        return try Child(TestPaths.binary, args, environment: env, stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// Runs to completion. stdout and stderr go to files (no pipe can fill up and block).
    func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Outcome {
        let id = UUID().uuidString
        let outPath = home + "/out-\(id)", errPath = home + "/err-\(id)"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let input = Pipe()
        let p = try start(args, env: env, stdin: .pipe(input),
                          stdout: .file(try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))),
                          stderr: .file(try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))))
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outcome = Outcome(code: p.terminationStatus, stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                              stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
        Self.reportBrokenConnections(outcome)
        return outcome
    }

    /// A run that lost its connection to a test server (which some tests cause on purpose, by stopping
    /// it) shows that server's last log lines on the test process's stderr, so that a server that stalled
    /// or failed can be told from one that was stopped.
    private static func reportBrokenConnections(_ outcome: Outcome) {
        guard outcome.code != 0 else { return }
        let ports = Set(outcome.stderr.matches(of: /the connection to http:\/\/127\.0\.0\.1:(\d+)\/\S* broke/).compactMap { Int($0.1) })
        for port in ports.sorted() {
            guard let tail = TestServerLogs.tail(port: port) else { continue }
            FileHandle.standardError.write(Data("CLIRunner: a CLI run's connection to the server on port \(port) broke; the end of its log:\n\(tail)\n".utf8))
        }
    }

    /// Logs in to `server` as `username`.
    func login(_ server: ParseTestServer, _ username: String, password: String) throws -> Outcome {
        try run(["login", username, "--password", password, "--server", server.baseURL, "--app-id", server.appId])
    }

    /// Files in the resume-state directory.
    var resumeStates: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cacheDir + "/uploads")) ?? []).filter { $0.hasSuffix(".json") }
    }
}
