import PhotoWallCore

/// Where and how to reach one S3 bucket.
public struct S3Configuration: Sendable {
    /// Scheme, host and optional port, no trailing slash: `http://127.0.0.1:8333`,
    /// `https://s3.eu-west-1.amazonaws.com`. Requests use path-style addressing (`/BUCKET/KEY`).
    public var endpoint: String
    /// The signing region, e.g. `us-east-1`.
    public var region: String
    public var bucket: String
    public var credentials: S3Credentials
    /// TCP connect timeout, in milliseconds.
    public var connectTimeoutMilliseconds = 5_000
    /// A request fails when less than 1 byte/s moved for this many seconds.
    public var stallTimeoutSeconds = 30
    /// Attempts for idempotent requests on connection failures and 5xx (1 = no retry).
    public var maxAttempts = 4
    /// Delay before the first retry, in milliseconds; doubled each time, with jitter.
    public var retryBaseDelayMilliseconds = 100
    /// Idle connections (libcurl handles) kept for reuse.
    public var maxIdleConnections = 8

    public init(endpoint: String, region: String, bucket: String, credentials: S3Credentials) {
        var e = endpoint
        while e.hasSuffix("/") { e.removeLast() }
        self.endpoint = e; self.region = region; self.bucket = bucket; self.credentials = credentials
    }

    /// The `Host` header for `endpoint`: host, plus `:port` unless it is the scheme's default.
    var hostHeader: String {
        var rest = Substring(endpoint)
        var defaultPort = "80"
        if let r = rest.range(of: "://") {
            if rest[..<r.lowerBound].lowercased() == "https" { defaultPort = "443" }
            rest = rest[r.upperBound...]
        }
        let authority = String(rest.prefix { $0 != "/" })
        if authority.hasSuffix(":" + defaultPort) { return String(authority.dropLast(defaultPort.count + 1)) }
        return authority
    }
}

/// A `--files` URL for the S3 store:
/// `s3://BUCKET?endpoint=URL&region=R[&prefix=P][&cache-size=BYTES][&presigned-urls=SECONDS]`.
public struct S3StoreURL: Sendable {
    public var bucket: String
    public var endpoint: String
    public var region: String
    /// Key prefix for Parse files; default `files/`.
    public var prefix: String
    /// Read-through cache limit in bytes; default 1 GiB.
    public var cacheLimitBytes: Int64
    /// `presigned-urls=SECONDS`: file downloads that pass PhotoWall's checks are redirected (302)
    /// to a presigned S3 URL valid this long, so the bytes come from S3 itself; nil (default) serves
    /// them through PhotoWall. Clients must be able to reach the endpoint.
    public var presignedURLSeconds: Int?

    /// Parses the URL. Query values may be percent-encoded.
    /// - Throws: `ParseError` 1 with a message naming the problem (not `s3://`, no bucket, no endpoint).
    public init(_ url: String) throws(ParseError) {
        guard url.hasPrefix("s3://") else { throw ParseError(.internalServerError, "Not an s3:// URL: \(url)") }
        let rest = url.dropFirst(5)
        let bucketPart = rest.prefix { $0 != "?" && $0 != "/" }
        guard !bucketPart.isEmpty else { throw ParseError(.internalServerError, "No bucket in \(url) (s3://BUCKET?endpoint=URL&region=R)") }
        bucket = percentDecode(bucketPart)
        var query: [String: String] = [:]
        if let q = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: q)...].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                query[percentDecode(kv[0])] = kv.count > 1 ? percentDecode(kv[1]) : ""
            }
        }
        guard let endpoint = query["endpoint"], endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") else {
            throw ParseError(.internalServerError, "\(url): endpoint=http(s)://HOST[:PORT] is required")
        }
        self.endpoint = endpoint
        region = query["region"] ?? "us-east-1"
        prefix = query["prefix"] ?? "files/"
        if let c = query["cache-size"] {
            guard let n = Int64(c), n >= 0 else { throw ParseError(.internalServerError, "\(url): bad cache-size '\(c)' (bytes)") }
            cacheLimitBytes = n
        } else {
            cacheLimitBytes = 1 << 30
        }
        if let p = query["presigned-urls"] {
            guard let n = Int(p), (1...604_800).contains(n) else {
                throw ParseError(.internalServerError, "\(url): bad presigned-urls '\(p)' (seconds, 1 to 604800)")
            }
            presignedURLSeconds = n
        }
    }
}
