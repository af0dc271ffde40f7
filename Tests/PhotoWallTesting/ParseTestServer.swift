// The live-server harness shared by the API and upload test targets: a real `photowall serve`
// process per `ParseTestServer`, with a temporary data folder and (under `make test-postgres`) a
// fresh PostgreSQL database.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PhotoWallCore
import Synchronization

/// Paths of the package and the shared corpus, found from this file's location.
public enum TestPaths {
    /// The package root (two levels above `Tests/PhotoWallTesting`).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `PHOTOWALL_CORPUS`, else `../shared/imagecorpus` beside the package; nil when absent.
    public static let corpus: URL? = {
        let env = ProcessInfo.processInfo.environment["PHOTOWALL_CORPUS"].map { URL(fileURLWithPath: $0) }
        let candidate = env ?? packageRoot.deletingLastPathComponent().appendingPathComponent("shared/imagecorpus")
        return FileManager.default.fileExists(atPath: candidate.appendingPathComponent("MANIFEST.tsv").path) ? candidate : nil
    }()

    public static var corpusMissingNote: String {
        "SKIPPED: the shared image corpus (../shared/imagecorpus or PHOTOWALL_CORPUS) is not present"
    }

    /// The built `photowall` binary: `PHOTOWALL_BIN`, else `.build/debug/photowall`.
    public static let binary: String = ProcessInfo.processInfo.environment["PHOTOWALL_BIN"]
        ?? packageRoot.appendingPathComponent(".build/debug/photowall").path
}

public struct TestServerError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// A real `photowall serve` process on 127.0.0.1 with a random port and a temporary data folder.
///
/// The server is started with `--stop-on-stdin-eof`, so it also stops if the test process dies.
public final class ParseTestServer: @unchecked Sendable {
    // @unchecked Sendable: `process` and `stdinPipe` are replaced only by `start`/`kill`, which the
    // owning test calls sequentially; the other properties are immutable.
    public let dataDir: URL
    public let appId = "testapp"
    public let masterKey = "test-master-key"
    public let extraArgs: [String]
    public private(set) var port = 0
    private var process: Child?
    private var stdinPipe: Pipe?
    public let stderrLog: URL
    /// Whether the data folder is this server's own (removed at the end) or shared with others.
    let ownsDataDir: Bool

    public var baseURL: String { "http://127.0.0.1:\(port)/parse" }

    /// Starts a server on a fresh data folder, or on `dataDir` shared with other servers (the
    /// caller removes it; each server logs to its own `server-*.log` in it).
    /// - Parameters:
    ///   - databaseArguments: `--database …` to share another server's database (several
    ///     instances); nil gives this one its own (`TestDatabase.serverArguments`).
    ///   - fileStoreArguments: the same for `--files` (`TestFileStore.serverArguments`).
    public init(extraArgs: [String] = [], dataDir: URL? = nil, port: Int = 0, databaseArguments: [String]? = nil,
                fileStoreArguments: [String]? = nil) throws {
        self.dataDir = dataDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("photowall-test-\(UUID().uuidString)")
        ownsDataDir = dataDir == nil
        // PostgreSQL run: a fresh database; S3 run: a fresh key prefix (unless shared with other instances).
        self.extraArgs = extraArgs + (try databaseArguments ?? TestDatabase.serverArguments()) + (fileStoreArguments ?? TestFileStore.serverArguments())
        try FileManager.default.createDirectory(at: self.dataDir, withIntermediateDirectories: true)
        stderrLog = self.dataDir.appendingPathComponent(ownsDataDir ? "server.log" : "server-\(UUID().uuidString.prefix(8)).log")
        try start(port: port)
    }

    deinit {
        stop()
        if ownsDataDir { try? FileManager.default.removeItem(at: dataDir) }
    }

    /// Starts (or restarts) the server on `port` (0: a fresh random one); waits for its "listening" line.
    public func start(port requestedPort: Int = 0) throws {
        guard FileManager.default.isExecutableFile(atPath: TestPaths.binary) else {
            throw TestServerError(description: "photowall binary not found at \(TestPaths.binary); run `swift build` first")
        }
        let arguments = ["serve", "--port", "\(requestedPort)", "--data-dir", dataDir.path, "--app-id", appId, "--master-key", masterKey,
                       "--stop-on-stdin-eof",
                       // Info: a line per request, which `TestServerLogs` shows when a test's receive times out
                       // (`PHOTOWALL_TEST_LOG_LEVEL=debug` or `trace` adds more while chasing a rare failure; a level
                       // above info would drop the request lines that tests read).
                       "--log-level", ProcessInfo.processInfo.environment["PHOTOWALL_TEST_LOG_LEVEL"] ?? "info",
                       // The suites run many clients at once, all from 127.0.0.1 (as behind a proxy); a test of
                       // the per-address cap passes its own value in `extraArgs` (the later option wins).
                       "--max-connections-per-ip", "0"] + extraArgs
        let out = Pipe(), input = Pipe()
        if !FileManager.default.fileExists(atPath: stderrLog.path) { _ = FileManager.default.createFile(atPath: stderrLog.path, contents: nil) }
        let log = try FileHandle(forWritingTo: stderrLog)
        log.seekToEndOfFile()
        let p = try Child(TestPaths.binary, arguments, stdin: .pipe(input), stdout: .pipe(out), stderr: .file(log))
        process = p
        stdinPipe = input
        // Read stdout until the listening line.
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        let handle = out.fileHandleForReading
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let r = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)/parse"#, options: .regularExpression) {
                let portText = text[r].split(separator: ":").last!.split(separator: "/").first!
                port = Int(portText)!
                TestServerLogs.register(port: port, log: stderrLog)
                // Keep draining stdout so the server never blocks on a full pipe.
                DispatchQueue.global().async { while !handle.availableData.isEmpty {} }
                return
            }
        }
        throw TestServerError(description: "server did not start: \(text)\n\(serverLog())")
    }

    /// Sends `signal` and waits for the process to exit. A server that is still running 30 s after a
    /// SIGTERM is reported on stderr and killed, so a lost signal fails loudly instead of hanging the run
    /// (`ServerSignalTests` checks that SIGTERM itself stops it).
    public func kill(_ signal: Int32 = SIGKILL) {
        guard let p = process else { return }
        TestServerLogs.unregister(port: port)
        p.signal(signal)
        if signal != SIGKILL, !p.waitUntilExit(timeout: 30) {
            FileHandle.standardError.write(Data("ParseTestServer: pid \(p.processIdentifier) ignored signal \(signal) for 30 s; killing it\n".utf8))
            p.signal(SIGKILL)
        }
        p.waitUntilExit()
        process = nil
        stdinPipe = nil
    }

    public func stop() { kill(SIGTERM) }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// The server process id (0 when stopped).
    public var pid: Int32 { process?.processIdentifier ?? 0 }

    /// The server's stderr so far: one line per request, warnings and errors.
    public func serverLog() -> String { (try? String(contentsOf: stderrLog, encoding: .utf8)) ?? "" }

    /// Waits, polling every 50 ms for up to `seconds`, until the server's log contains `text`.
    /// - Returns: whether it came (the caller's `#expect` says what it waited for).
    public func waitForLog(_ text: String, seconds: Double = 10) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !serverLog().contains(text) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    // MARK: requests

    public struct Reply: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public var json: JSON { (try? JSON.parse([UInt8](body))) ?? .null }
        public var text: String { String(decoding: body, as: UTF8.self) }
        public func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    public static let session: URLSession = {
        let c = URLSessionConfiguration.ephemeral
        c.requestCachePolicy = .reloadIgnoringLocalCacheData
        c.urlCache = nil
        c.timeoutIntervalForRequest = 60
        return URLSession(configuration: c)
    }()

    public enum Key { case none, app, master(String?), session(String) }

    /// One HTTP request to the server. `path` is relative to `/parse` unless it starts with `http`.
    public func request(_ method: String, _ path: String, json: JSON? = nil, body: Data? = nil, key: Key = .app,
                 headers: [String: String] = [:]) async throws -> Reply {
        let url = URL(string: path.hasPrefix("http") ? path : baseURL + path)!
        var r = URLRequest(url: url)
        r.httpMethod = method
        switch key {
        case .none: break
        case .app: r.setValue(appId, forHTTPHeaderField: "X-Parse-Application-Id")
        case .master(let k):
            r.setValue(appId, forHTTPHeaderField: "X-Parse-Application-Id")
            r.setValue(k ?? masterKey, forHTTPHeaderField: "X-Parse-Master-Key")
        case .session(let t):
            r.setValue(appId, forHTTPHeaderField: "X-Parse-Application-Id")
            r.setValue(t, forHTTPHeaderField: "X-Parse-Session-Token")
        }
        if let json {
            r.httpBody = Data(json.serialized)
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            r.httpBody = body
        }
        for (k, v) in headers { r.setValue(v, forHTTPHeaderField: k) }
        let (data, response) = try await Self.session.data(for: r)
        let http = response as! HTTPURLResponse
        var h: [String: String] = [:]
        for (k, v) in http.allHeaderFields { h["\(k)"] = "\(v)" }
        return Reply(status: http.statusCode, headers: h, body: data)
    }

    /// Signs up a fresh user. - Returns: (objectId, sessionToken).
    public func signUp(_ username: String = "user_\(UUID().uuidString.prefix(8))", password: String = "secret-pw") async throws -> (String, String) {
        let r = try await request("POST", "/users", json: ["username": .string(username), "password": .string(password)])
        guard r.status == 201, let id = r.json["objectId"]?.stringValue, let token = r.json["sessionToken"]?.stringValue else {
            throw TestServerError(description: "sign-up failed: \(r.status) \(r.text)")
        }
        return (id, token)
    }
}

/// One server for the tests that don't restart it. A global is never deinitialized, so its data
/// folder is removed when the test process exits (the server itself stops then: stdin closes).
public let sharedServer: ParseTestServer = {
    do {
        let server = try ParseTestServer()
        sharedServerDataDir.withLock { $0 = server.dataDir.path }
        atexit(removeSharedServerData)
        return server
    } catch { fatalError("\(error)") }
}()

private let sharedServerDataDir = Mutex<String?>(nil)

/// `atexit` hook (a global function: C calls it). With `PHOTOWALL_TEST_KEEP_LOGS=DIR`, the shared server's
/// log is kept as `DIR/shared-server-<test process id>.log` first (the log of a run that failed rarely),
/// when the test process exits normally (a failed test does; a crash or a kill does not).
private func removeSharedServerData() {
    guard let dir = sharedServerDataDir.withLock({ $0 }) else { return }
    if let keep = ProcessInfo.processInfo.environment["PHOTOWALL_TEST_KEEP_LOGS"], !keep.isEmpty {
        try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: dir + "/server.log", toPath: keep + "/shared-server-\(getpid()).log")
    }
    try? FileManager.default.removeItem(atPath: dir)
}

/// The stderr log of each running `ParseTestServer`, by port, so that a `TestHTTPClient` whose receive
/// times out can show what the server was doing then (a failure on a loaded CI machine is otherwise
/// a bare "timed out").
public enum TestServerLogs {
    private static let byPort = Mutex<[Int: URL]>([:])

    /// Records `log` as the stderr of the server listening on `port`.
    public static func register(port: Int, log: URL) { byPort.withLock { $0[port] = log } }

    /// Forgets the server on `port` (stopped: the port may go to another process).
    public static func unregister(port: Int) { _ = byPort.withLock { $0.removeValue(forKey: port) } }

    /// The last `lines` lines of the log of the server on `port`, or nil when no test server listens there.
    public static func tail(port: Int, lines: Int = 40) -> String? {
        guard let url = byPort.withLock({ $0[port] }), let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines + 1).joined(separator: "\n")
    }
}
