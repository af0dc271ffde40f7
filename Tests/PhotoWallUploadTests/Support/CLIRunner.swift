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

    func makeProcess(_ args: [String], env extra: [String: String]) -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestPaths.binary)
        p.arguments = args
        var env = environment
        for (k, v) in extra { env[k] = v }
        p.environment = env
        return p
    }

    /// Runs to completion. stdout and stderr go to files (no pipe can fill up and block).
    func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Outcome {
        let p = makeProcess(args, env: env)
        let id = UUID().uuidString
        let outPath = home + "/out-\(id)", errPath = home + "/err-\(id)"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let input = Pipe()
        p.standardInput = input
        try launch(p)
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        return Outcome(code: p.terminationStatus, stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
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
