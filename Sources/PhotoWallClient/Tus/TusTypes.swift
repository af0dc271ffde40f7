/// The checksum sent with each PATCH chunk as `Upload-Checksum: <algorithm> <base64 digest>`.
/// - Source: tus 1.0.0 §Checksum (sha1 is the algorithm every server must support).
public enum ChecksumAlgorithm: String, Sendable, CaseIterable {
    case sha256, sha1
    /// No `Upload-Checksum` header (the chunk is still protected by TCP, not end to end).
    case none
}

/// When and how often to retry after a failure that may pass (network, 5xx, 409, 423, 460).
///
/// The delay before retry *n* (1-based) is `min(maxDelaySeconds, initialDelaySeconds × multiplier^(n-1))`,
/// scaled by a random factor in `0.5...1.0` ("equal jitter", so parallel clients spread out).
public struct RetryPolicy: Sendable, Hashable {
    /// Failures in a row, without the server's offset moving forward, before giving up (≥ 1).
    public var maxConsecutiveFailures: Int
    /// First delay, in seconds.
    public var initialDelaySeconds: Double
    /// Largest delay, in seconds.
    public var maxDelaySeconds: Double
    /// Growth factor per failure (≥ 1).
    public var multiplier: Double

    /// Defaults: 10 failures in a row; 0.2 s doubling up to 10 s (about 45 s of trying in all).
    public init(maxConsecutiveFailures: Int = 10, initialDelaySeconds: Double = 0.2, maxDelaySeconds: Double = 10,
                multiplier: Double = 2) {
        self.maxConsecutiveFailures = max(1, maxConsecutiveFailures)
        self.initialDelaySeconds = max(0, initialDelaySeconds)
        self.maxDelaySeconds = max(self.initialDelaySeconds, maxDelaySeconds)
        self.multiplier = max(1, multiplier)
    }

    /// The delay before retry `attempt` (1-based) after `error`, in seconds: the backoff, or longer
    /// when the server said when to come back (`Retry-After`: a tus 423 while another instance's
    /// lease lapses, a save refused while renders are behind).
    public func delaySeconds(beforeRetry attempt: Int, after error: ClientError) -> Double {
        max(delaySeconds(beforeRetry: attempt), error.retryAfterSeconds ?? 0)
    }

    /// The jittered delay before retry `attempt` (1-based), in seconds.
    public func delaySeconds(beforeRetry attempt: Int) -> Double {
        var d = initialDelaySeconds
        var i = 1
        while i < attempt && d < maxDelaySeconds { d *= multiplier; i += 1 }
        return min(d, maxDelaySeconds) * Double.random(in: 0.5...1.0)
    }
}

/// What `OPTIONS /uploads` advertises.
/// - Source: tus 1.0.0 §OPTIONS; PhotoWall adds `Tus-Max-Size` = the server's max upload size.
public struct TusServerInfo: Sendable, Hashable {
    /// `Tus-Version`, e.g. `["1.0.0"]`.
    public var versions: [String]
    /// `Tus-Extension`, e.g. `["creation", "termination", "checksum", …]`.
    public var extensions: [String]
    /// `Tus-Max-Size` in bytes, when the server sends one.
    public var maxSizeBytes: Int64?
    /// `Tus-Checksum-Algorithm`, e.g. `["sha1", "sha256"]`.
    public var checksumAlgorithms: [String]

    public init(versions: [String], extensions: [String], maxSizeBytes: Int64?, checksumAlgorithms: [String]) {
        self.versions = versions; self.extensions = extensions; self.maxSizeBytes = maxSizeBytes
        self.checksumAlgorithms = checksumAlgorithms
    }
}

/// An upload as `HEAD <upload URL>` reports it.
public struct UploadStatus: Sendable, Hashable {
    /// Bytes the server holds durably (`Upload-Offset`).
    public var offset: Int64
    /// Total bytes (`Upload-Length`), nil while deferred.
    public var length: Int64?
    /// The Parse file name once complete (`X-Parse-File-Name`, `<32 hex>_<name>`).
    public var fileName: String?
    /// The Parse file URL once complete (`X-Parse-File-URL`).
    public var fileURL: String?

    public var isComplete: Bool { fileName != nil }

    public init(offset: Int64, length: Int64?, fileName: String? = nil, fileURL: String? = nil) {
        self.offset = offset; self.length = length; self.fileName = fileName; self.fileURL = fileURL
    }
}

/// A finished upload: an ordinary Parse file now.
public struct UploadResult: Sendable, Hashable {
    /// The tus upload URL (HEAD on it still answers with the file name).
    public var uploadURL: String
    /// The Parse file name, `<32 hex>_<name>`; use it in a `{"__type":"File","name":…}` field.
    public var fileName: String
    /// The file's public URL.
    public var fileURL: String
    /// The file's size in bytes.
    public var totalBytes: Int64
    /// Bytes the server already had when this call started (0 for a fresh upload).
    public var resumedFromOffset: Int64
    /// Failed requests that were retried.
    public var retries: Int
}

/// Milestones of an upload, for logs and UIs (progress goes to the separate `progress` callback).
public enum UploadEvent: Sendable {
    /// A new upload was created; store `uploadURL` to resume in another process.
    case created(uploadURL: String)
    /// An existing upload is continued from `offset` bytes.
    case resumed(uploadURL: String, offset: Int64)
    /// A stored upload could not be continued (expired, unknown, different length); a new one starts.
    case restarted(previousURL: String, reason: ClientError)
    /// A request failed; the next try comes after `delaySeconds`. `attempt` counts failures in a row (1-based).
    case retrying(attempt: Int, delaySeconds: Double, error: ClientError)
}
