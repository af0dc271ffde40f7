import PhotoWallClient
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// Exit codes of the client commands (`login`, `logout`, `upload`), one per failure people act on.
enum ClientExit {
    static let ok: Int32 = 0
    /// Anything else: the server refused, the upload failed after its retries.
    static let failure: Int32 = 1
    /// No stored session for this server, or the server no longer accepts it (`photowall login`).
    static let notLoggedIn: Int32 = 2
    /// Not a JPEG, PNG, WebP, HEIC/HEIF or AVIF (checked from magic bytes before uploading; the server checks again).
    static let unsupportedType: Int32 = 3
    /// Over the server's `Tus-Max-Size` (its max upload size).
    static let tooLarge: Int32 = 4
    /// No connection to the server.
    static let unreachable: Int32 = 5
    /// Bad command line (EX_USAGE).
    static let usage: Int32 = 64
    /// A file is missing or unreadable (EX_NOINPUT).
    static let noInput: Int32 = 66
    /// Ctrl-C or SIGTERM; run the same command again to resume.
    static let interrupted: Int32 = 130

    /// The exit code for a client failure (`ClientFailure(error, …).exitCode`).
    static func code(for e: ClientError) -> Int32 {
        switch e.code {
        case .unauthorized: return notLoggedIn
        case .tooLarge: return tooLarge
        case .unreachable: return unreachable
        case .cancelled: return interrupted
        case .fileError: return noInput
        case .badURL: return usage
        case .rejected where e.parseCode == 111: return unsupportedType
        default: return failure
        }
    }
}

/// A failure of a client command as people see it: one line that ends with the next step, the
/// exit code, and a short `kind` for `--json` events (`not-logged-in`, `unreachable`, …).
///
/// Every client command (`login`, `logout`, `upload`, `feed`, `comment`) turns a `ClientError` into
/// its message here, so the same failure reads the same everywhere.
struct ClientFailure: Error, Sendable {
    var message: String
    var exitCode: Int32
    var kind: String

    init(message: String, exitCode: Int32, kind: String) {
        self.message = message; self.exitCode = exitCode; self.kind = kind
    }

    /// How to log in (to `server`, when it is not the default one).
    static func howToLogIn(server: String? = nil) -> String {
        let s = server.map { " --server \($0)" } ?? ""
        return "log in with `photowall login USERNAME\(s)` or `photowall login --facebook\(s)` (--as NAME with the mock provider)"
    }

    /// No stored session (`server` nil), or one for another server or app.
    static func notLoggedIn(server: String? = nil, appId: String? = nil) -> ClientFailure {
        let target = server.map { " to \($0)" + (appId.map { " as app \($0)" } ?? "") } ?? ""
        return ClientFailure(message: "not logged in\(target): \(howToLogIn(server: server))", exitCode: ClientExit.notLoggedIn,
                             kind: "not-logged-in")
    }

    /// The message and exit code for `e`.
    ///
    /// - Parameters:
    ///   - server: the API root the command talked to (named in "server unreachable at …").
    ///   - resumable: the command keeps its state (`upload`): the next step is to run it again to resume.
    init(_ e: ClientError, server: String, resumable: Bool = false) {
        let again = resumable ? "run the same command again to resume" : "run the command again"
        let tries = e.attempts > 1 ? " (gave up after \(e.attempts) attempts)" : ""
        kind = e.code.rawValue
        exitCode = ClientExit.code(for: e)
        switch e.code {
        case .unreachable:
            message = "server unreachable at \(server)\(tries): check that it runs (photowall serve) and \(again)"
        case .transport:
            message = "the connection to \(server) broke\(tries) (\(e.message)): \(again)"
        case .unauthorized:
            kind = "not-logged-in"
            message = "the session is no longer valid: \(Self.howToLogIn())"
        case .tooLarge:
            message = "too large" + (e.limitBytes.map { " (the server accepts at most \(UploadDisplay.bytes($0)))" } ?? "")
                + ": choose a smaller file"
        case .cancelled:
            message = "interrupted: \(again)"
        case .fileError:
            message = "\(e.message): check the path and that the file is readable"
        case .badURL:
            message = "\(e.message): check --server (e.g. \(ClientTarget.defaultServer))"
        case .serverError:
            message = "the server failed\(tries) (\(e.message)): see its log, then \(again)"
        case .rejected where e.parseCode == 111:
            kind = "unsupported-type"
            message = "refused by the server (\(e.message)): only JPEG, PNG, WebP, HEIC and AVIF photos can be posted"
        case .rejected where e.parseCode == 101:
            message = "not found (\(e.message)): check the id with `photowall feed`"
        case .notFound, .gone:
            message = "the upload is gone from the server (\(e.message)): \(again) to start it afresh"
        default:
            message = "\(e.message): \(again)"
        }
    }
}

/// Where the client keeps its files, following the XDG base directory spec:
/// `$XDG_CONFIG_HOME/photowall` (else `~/.config/photowall`) for the session, and
/// `$XDG_CACHE_HOME/photowall` (else `~/.cache/photowall`) for upload resume state.
enum ClientPaths {
    static var home: String {
        if let h = getenv("HOME"), h[0] != 0 { return String(cString: h) }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/tmp"
    }

    static func xdg(_ variable: String, fallback: String) -> String {
        if let v = getenv(variable), v[0] == UInt8(ascii: "/") { return String(cString: v) }
        return home + "/" + fallback
    }

    static var configDirectory: String { xdg("XDG_CONFIG_HOME", fallback: ".config") + "/photowall" }
    static var cacheDirectory: String { xdg("XDG_CACHE_HOME", fallback: ".cache") + "/photowall" }
    static var sessionFile: String { configDirectory + "/session.json" }

    /// `mkdir -p` with `mode` for the directories it makes. - Returns: false when it failed.
    @discardableResult
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) -> Bool {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, mode) != 0 && errno != EEXIST { return false }
        }
        return true
    }

    /// Writes `bytes` to `path` atomically (temporary file, fsync, rename) with `mode`.
    static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t) -> Bool {
        (try? AtomicFile.write(bytes, to: path, mode: mode)) != nil
    }

    /// The file's bytes, or nil when it can't be read.
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return out }
            out += buf[0..<n]
        }
    }
}

/// The logged-in session, stored as JSON with mode 0600 in `ClientPaths.sessionFile`:
/// `{"server": URL, "appId": …, "sessionToken": "r:…", "username": …, "objectId": …}`.
struct StoredSession: Equatable {
    var server: String
    var appId: String
    var sessionToken: String
    var username: String
    var objectId: String

    var json: JSON {
        ["server": .string(server), "appId": .string(appId), "sessionToken": .string(sessionToken),
         "username": .string(username), "objectId": .string(objectId)]
    }

    static func load() -> StoredSession? {
        guard let bytes = ClientPaths.read(ClientPaths.sessionFile), let j = try? JSON.parse(bytes),
              let server = j["server"]?.stringValue, let appId = j["appId"]?.stringValue,
              let token = j["sessionToken"]?.stringValue, !token.isEmpty else { return nil }
        return StoredSession(server: server, appId: appId, sessionToken: token,
                             username: j["username"]?.stringValue ?? "", objectId: j["objectId"]?.stringValue ?? "")
    }

    /// - Returns: false when the file couldn't be written.
    func save() -> Bool {
        ClientPaths.makeDirectories(ClientPaths.configDirectory)
        return ClientPaths.writeAtomically(ClientPaths.sessionFile, json.serialized + [10], mode: 0o600)
    }

    static func remove() -> Bool {
        unlink(ClientPaths.sessionFile) == 0 || errno == ENOENT
    }
}

/// Server URL and application id for a client command: the option, else the environment
/// (`PHOTOWALL_SERVER`, `PARSE_SERVER_APPLICATION_ID`), else the stored session's, else the defaults.
struct ClientTarget {
    static let defaultServer = "http://127.0.0.1:1337/parse"
    static let defaultAppId = "photowall"
    static let optionNames: Set<String> = ["server", "app-id"]

    var server: String
    var appId: String

    init(_ o: Options, session: StoredSession?) {
        var s = o.value("server", env: ["PHOTOWALL_SERVER"]) ?? session?.server ?? Self.defaultServer
        while s.hasSuffix("/") { s.removeLast() }
        server = s
        appId = o.value("app-id", env: ["PARSE_SERVER_APPLICATION_ID"]) ?? session?.appId ?? Self.defaultAppId
    }

    func parseServer(_ credential: ParseServer.Credential = .anonymous) -> ParseServer {
        ParseServer(baseURL: server, applicationId: appId, credential: credential)
    }
}

/// One line on stderr: `photowall <command>: <message>`.
func clientFail(_ command: String, _ message: String, _ code: Int32) -> Int32 {
    Terminal.write("photowall \(command): \(message)\n", to: 2)
    return code
}

/// `failure`'s line on stderr. - Returns: its exit code.
func clientFail(_ command: String, _ failure: ClientFailure) -> Int32 {
    clientFail(command, failure.message, failure.exitCode)
}
