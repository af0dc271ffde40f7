import Foundation
import PhotoWallS3

/// Which database the live API tests run against.
///
/// `PHOTOWALL_TEST_DATABASE` unset: SQLite in each server's data folder (the default).
/// Set to an admin URL (`postgres://postgres@127.0.0.1:PORT/postgres`, as `scripts/pg.sh start`
/// prints and `make test` exports for its second run): each `ParseTestServer` gets a freshly
/// created database on that server, passed as `--database`, kept across its restarts.
/// Databases are not dropped: the server is meant to be the throw-away one `scripts/pg.sh` starts
/// (its data folder is deleted by `scripts/pg.sh stop`).
public enum TestDatabase {
    public static let postgresAdminURL: String? = {
        guard let url = ProcessInfo.processInfo.environment["PHOTOWALL_TEST_DATABASE"], url.hasPrefix("postgres") else { return nil }
        return url
    }()

    /// Extra `photowall serve` arguments for a new test server: `["--database", URL]` with a new
    /// database under PostgreSQL, nothing under SQLite.
    public static func serverArguments() throws -> [String] {
        guard let admin = postgresAdminURL else { return [] }
        let name = "pw_api_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        _ = try psql(admin, "CREATE DATABASE \"\(name)\"")
        return ["--database", url(admin, database: String(name))]
    }

    /// Runs one SQL statement on a test server's database (`sqlite3` on its file, or `psql`) and
    /// returns the rows, one per line, columns separated by `|`. Quote identifiers (`"objectId"`)
    /// so the same text works on both.
    public static func query(_ sql: String, dataDir: URL, arguments: [String]) throws -> String {
        if let i = arguments.firstIndex(of: "--database"), i + 1 < arguments.count {
            return try psql(arguments[i + 1], sql)
        }
        // A busy server holds SQLite's write lock now and then: wait for it rather than fail.
        return try run("/usr/bin/sqlite3", [dataDir.appendingPathComponent("photowall.sqlite").path, ".timeout 10000", sql])
    }

    static func psql(_ url: String, _ sql: String) throws -> String {
        try run("/usr/bin/psql", ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql])
    }

    static func run(_ tool: String, _ args: [String]) throws -> String {
        let r = try runProcess(tool, args)
        guard r.status == 0 else { throw TestServerError(description: "\(tool) failed (\(r.status)): \(r.errors)") }
        return r.output
    }

    /// `admin` with its database path replaced by `database`.
    public static func url(_ admin: String, database: String) -> String {
        let schemeEnd = admin.range(of: "://")?.upperBound ?? admin.startIndex
        let rest = admin[schemeEnd...]
        let query = rest.firstIndex(of: "?").map { String(rest[$0...]) } ?? ""
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        return String(admin[..<schemeEnd]) + authority + "/" + database + query
    }
}

extension ParseTestServer {
    /// One SQL statement against this server's own database (SQLite file or PostgreSQL database).
    public func databaseQuery(_ sql: String) throws -> String {
        try TestDatabase.query(sql, dataDir: dataDir, arguments: extraArgs)
    }
}

/// Where the live API tests keep file bytes.
///
/// `PHOTOWALL_TEST_S3` unset: the server's data folder (the default). Set to an S3 store URL
/// (`s3://BUCKET?endpoint=URL&region=R`, as `scripts/s3.sh start` prints, with `AWS_ACCESS_KEY_ID`
/// and `AWS_SECRET_ACCESS_KEY` in the environment, which the server inherits): each
/// `ParseTestServer` gets `--files` with a key prefix of its own, kept across its restarts.
public enum TestFileStore {
    public static let s3URL: String? = {
        guard let url = ProcessInfo.processInfo.environment["PHOTOWALL_TEST_S3"], url.hasPrefix("s3://") else { return nil }
        return url
    }()

    /// Extra `photowall serve` arguments for a new test server: `["--files", URL]` under S3.
    public static func serverArguments() -> [String] {
        guard let url = s3URL else { return [] }
        let prefix = "api-" + UUID().uuidString.lowercased().prefix(12) + "/files/"
        return ["--files", url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix]
    }
}

extension ParseTestServer {
    /// Names of every committed file of this server: objects under its S3 prefix, or the files
    /// under `<dataDir>/files`.
    /// The server's S3 store (client and key prefix), or nil on the filesystem store.
    func s3Store() throws -> (client: S3Client, prefix: String)? {
        guard let i = extraArgs.lastIndex(of: "--files"), i + 1 < extraArgs.count else { return nil }
        let url = try S3StoreURL(extraArgs[i + 1])
        guard let credentials = S3Credentials.fromEnvironment() else { throw TestServerError(description: "AWS credentials not set") }
        return (S3Client(S3Configuration(endpoint: url.endpoint, region: url.region, bucket: url.bucket, credentials: credentials)), url.prefix)
    }

    public func storedFileNames() throws -> [String] {
        if let (client, prefix) = try s3Store() {
            return try client.listAllObjects(prefix: prefix).map { String($0.key.dropFirst(prefix.count)) }
        }
        let root = dataDir.appendingPathComponent("files").path
        guard let e = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [String] = []
        while let p = e.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + p, isDirectory: &isDir), !isDir.boolValue {
                out.append((p as NSString).lastPathComponent)
            }
        }
        return out
    }

    /// Files in `<dataDir>/tmp` (one-shot uploads in progress on the filesystem store; the S3
    /// store keeps none there, so the folder may not exist).
    public func localTemporaryFiles() throws -> [String] {
        let tmp = dataDir.appendingPathComponent("tmp").path
        guard FileManager.default.fileExists(atPath: tmp) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: tmp)
    }

    /// Leaves storage for upload `id` the way a crash between steps would, with no upload record:
    /// `<dataDir>/uploads/<id>.part` (the part file on the filesystem store; the request spool on
    /// S3) and, on S3, a multipart upload on `<prefix><id>_orphan.bin` and a tail object
    /// `…/uploads/<id>/tail-orphan`.
    public func plantOrphanedUpload(_ id: String) throws {
        if let (client, prefix) = try s3Store() {
            let base = prefix.hasSuffix("files/") ? String(prefix.dropLast(6)) : prefix
            _ = try client.createMultipartUpload(key: prefix + id + "_orphan.bin")
            _ = try client.putObject(key: base + "uploads/" + id + "/tail-orphan", bytes: [1, 2, 3])
        }
        let uploads = dataDir.appendingPathComponent("uploads")
        try FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: uploads.appendingPathComponent(id + ".part"))
    }

    /// Whether `<dataDir>/uploads/<id>.part` exists (the part file, or on S3 the request spool).
    public func localPartFileExists(_ id: String) -> Bool {
        FileManager.default.fileExists(atPath: dataDir.appendingPathComponent("uploads/\(id).part").path)
    }

    /// Multipart uploads on S3 whose file name starts with upload `id` (none on the filesystem store).
    public func multipartUploads(of id: String) throws -> [String] {
        guard let (client, prefix) = try s3Store() else { return [] }
        return try client.listAllMultipartUploads(prefix: prefix + id).map(\.key)
    }

    /// What holds the bytes of unfinished upload `id` between requests: its part file on the
    /// filesystem store; its tail objects on S3 (`…/uploads/<id>/`, beside the store's `files/`).
    public func uploadLeftovers(_ id: String) throws -> [String] {
        if let (client, prefix) = try s3Store() {
            let base = prefix.hasSuffix("files/") ? String(prefix.dropLast(6)) : prefix
            return try client.listAllObjects(prefix: base + "uploads/" + id + "/").map(\.key)
        }
        let part = dataDir.appendingPathComponent("uploads/\(id).part").path
        return FileManager.default.fileExists(atPath: part) ? [part] : []
    }
}
