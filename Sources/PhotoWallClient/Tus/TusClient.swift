internal import PhotoWallCurl
import PhotoWallCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A tus 1.0.0 client for PhotoWall's resumable uploads at `<server>/uploads`, on libcurl.
///
/// ```swift
/// let server = ParseServer(baseURL: "http://127.0.0.1:1337/parse", applicationId: "photowall",
///                          credential: .sessionToken(token))
/// let client = TusClient(server: server)
/// let result = try client.upload(file: "/photos/cat.jpg", contentType: "image/jpeg",
///                                onEvent: { if case .created(let url) = $0 { save(url) } }) { sent, total in
///     print("\(sent * 100 / max(total, 1))%")
/// }
/// // result.fileName → {"__type":"File","name": result.fileName} in a WallImage
/// ```
///
/// `TusClient` is a value holding settings only; every call opens its own libcurl handle (one
/// keep-alive connection), so calls may run on several threads at once.
/// - Source: tus 1.0.0 protocol (Core, Creation, Checksum, Termination, Expiration);
///   social-and-uploads.md §4.1.
public struct TusClient: Sendable {
    public var server: ParseServer
    public var configuration: Configuration

    /// Upload settings.
    public struct Configuration: Sendable, Hashable {
        /// Bytes per PATCH request (default 4 MiB; at least 1). The server fsyncs each chunk before
        /// it counts, so a broken connection costs at most one chunk (less without a checksum).
        public var chunkBytes: Int64
        /// Checksum sent with every chunk (default sha256).
        public var checksum: ChecksumAlgorithm
        public var retry: RetryPolicy
        /// TCP connect timeout, in seconds (default 10).
        public var connectTimeoutSeconds: Double
        /// A request that moves less than 1 byte per second for this long is abandoned and
        /// retried, in seconds (default 30).
        public var stallTimeoutSeconds: Int
        /// Shortest time between two progress callbacks, in seconds (default 0.05: at most 20 per second).
        public var progressIntervalSeconds: Double
        /// Start the next chunk's PATCH, on another connection, as soon as the last one's body is
        /// sent, instead of after its answer (default true; up to four in flight): the bytes travel
        /// while the server syncs and commits the chunks before. A server that does not take
        /// pipelined PATCHes refuses them (409/423) and the client goes on without.
        public var pipelining: Bool

        public init(chunkBytes: Int64 = 4 << 20, checksum: ChecksumAlgorithm = .sha256, retry: RetryPolicy = RetryPolicy(),
                    connectTimeoutSeconds: Double = 10, stallTimeoutSeconds: Int = 30, progressIntervalSeconds: Double = 0.05,
                    pipelining: Bool = true) {
            self.chunkBytes = max(1, chunkBytes); self.checksum = checksum; self.retry = retry
            self.connectTimeoutSeconds = connectTimeoutSeconds; self.stallTimeoutSeconds = max(1, stallTimeoutSeconds)
            self.progressIntervalSeconds = max(0, progressIntervalSeconds); self.pipelining = pipelining
        }

        var timeouts: Timeouts {
            Timeouts(connectMilliseconds: max(1, Int(connectTimeoutSeconds * 1000)), stallSeconds: stallTimeoutSeconds)
        }
    }

    public init(server: ParseServer, configuration: Configuration = Configuration()) {
        self.server = server
        self.configuration = configuration
    }

    /// `<baseURL>/uploads`, where uploads are created.
    public var creationURL: String { server.baseURL + "/uploads" }

    // MARK: uploading

    /// Uploads a file and returns it as a Parse file, resuming and retrying as needed.
    ///
    /// The file is read in chunks of `configuration.chunkBytes` with `pread` (never whole into
    /// memory); each chunk is one PATCH with an `Upload-Checksum`. After any failure the client
    /// waits (exponential backoff with jitter), asks the server for its offset (HEAD) and
    /// continues from there; it gives up after `retry.maxConsecutiveFailures` failures in a row
    /// without progress. The file must not change during the upload.
    ///
    /// - Parameters:
    ///   - path: a regular file, read-only.
    ///   - fileName: the Parse file name to ask for (default: the path's last component); the
    ///     server validates it (1–128 characters of `[A-Za-z0-9_@. ~-]`, starting with a letter,
    ///     digit or `_`) and prefixes 32 hex.
    ///   - contentType: stored as the file's type (e.g. `image/jpeg`); nil lets the server guess.
    ///   - resumeURL: an upload URL from an earlier `.created` event (this or another process).
    ///     When the server no longer knows it (404/410) or its length differs from the file's,
    ///     a new upload starts and `.restarted` is reported.
    ///   - cancellation: checked about every 50 ms; cancelling throws `.cancelled` and leaves the
    ///     upload resumable.
    ///   - onEvent: milestones, called on this thread.
    ///   - progress: `(sentBytes, totalBytes)`, called on this thread: monotonic, at most once per
    ///     `progressIntervalSeconds`, below `totalBytes` until the server confirmed the last byte,
    ///     then `(totalBytes, totalBytes)` exactly once.
    /// - Returns: the Parse file's name and URL, with counts.
    /// - Throws: `ClientError`: `.fileError` (open/stat/read, errno in `systemError`);
    ///   `.unauthorized` (no or invalid session); `.tooLarge` (413, limit in `limitBytes`);
    ///   `.gone`/`.notFound` (the upload vanished mid-way); `.cancelled`; `.rejected` (another
    ///   4xx); after the retries are spent, the last retryable error (`.unreachable`,
    ///   `.transport`, `.serverError`, `.checksumMismatch`) with `attempts` set.
    /// - Note: Blocks the calling thread; use the `async` overload from Swift concurrency.
    public func upload(file path: String, fileName: String? = nil, contentType: String? = nil, resumeURL: String? = nil,
                       cancellation: CancellationToken? = nil, onEvent: ((UploadEvent) -> Void)? = nil,
                       progress: @escaping (_ sentBytes: Int64, _ totalBytes: Int64) -> Void) throws(ClientError) -> UploadResult {
        let file = try SourceFile(path: path)
        let name = fileName ?? String(path.split(separator: "/").last ?? "file")
        let run = try UploadRun(client: self, file: file, fileName: name, contentType: contentType,
                                cancellation: cancellation ?? CancellationToken(), onEvent: onEvent ?? { _ in }, progress: progress)
        return try run.run(resumeURL: resumeURL)
    }

    /// `upload(file:…)` for a `file://` URL's path.
    public func upload(fileURL: String, fileName: String? = nil, contentType: String? = nil, resumeURL: String? = nil,
                       cancellation: CancellationToken? = nil, onEvent: ((UploadEvent) -> Void)? = nil,
                       progress: @escaping (_ sentBytes: Int64, _ totalBytes: Int64) -> Void) throws(ClientError) -> UploadResult {
        var path = fileURL
        if path.hasPrefix("file://") { path = String(path.dropFirst(7)) }
        return try upload(file: path.removingPercentEncoding(), fileName: fileName, contentType: contentType, resumeURL: resumeURL,
                          cancellation: cancellation, onEvent: onEvent, progress: progress)
    }

    /// The same upload, run on a dedicated thread so it never blocks Swift's cooperative pool.
    /// Cancelling the calling Task cancels the upload (`.cancelled`), leaving it resumable.
    public func upload(file path: String, fileName: String? = nil, contentType: String? = nil, resumeURL: String? = nil,
                       onEvent: (@Sendable (UploadEvent) -> Void)? = nil,
                       progress: @escaping @Sendable (_ sentBytes: Int64, _ totalBytes: Int64) -> Void) async throws(ClientError) -> UploadResult {
        let token = CancellationToken()
        let client = self
        let result: Result<UploadResult, ClientError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<UploadResult, ClientError>, Never>) in
                BlockingThread.start(name: "tus-upload") {
                    continuation.resume(returning: Result { () throws(ClientError) -> UploadResult in
                        try client.upload(file: path, fileName: fileName, contentType: contentType, resumeURL: resumeURL,
                                          cancellation: token, onEvent: onEvent, progress: progress)
                    })
                }
            }
        } onCancel: {
            token.cancel()
        }
        return try result.get()
    }

    // MARK: single requests

    /// `OPTIONS <server>/uploads`: the versions, extensions, size limit and checksums on offer.
    /// - Throws: `ClientError` `.unreachable`/`.transport` (no retry here), `.rejected` for a non-2xx answer.
    public func serverInfo() throws(ClientError) -> TusServerInfo {
        let handle = try EasyHandle.forClient()
        let r = try handle.send(HTTPRequest(method: "OPTIONS", url: creationURL, headers: server.authHeaders),
                                   timeouts: configuration.timeouts)
        guard (200...299).contains(r.status) else { throw ClientError.from(r, action: "OPTIONS \(creationURL)") }
        func list(_ name: String) -> [String] {
            (r.header(name) ?? "").split(separator: ",").map { String($0).trimmingLineSpace() }.filter { !$0.isEmpty }
        }
        return TusServerInfo(versions: list("Tus-Version"), extensions: list("Tus-Extension"),
                             maxSizeBytes: r.header("Tus-Max-Size").flatMap { Int64($0) },
                             checksumAlgorithms: list("Tus-Checksum-Algorithm"))
    }

    /// `HEAD <uploadURL>`: the upload's offset and, once complete, its Parse file.
    /// - Throws: `ClientError` `.notFound` (404), `.gone` (410), `.unauthorized`, `.unreachable`, `.transport`.
    public func status(uploadURL: String) throws(ClientError) -> UploadStatus {
        let handle = try EasyHandle.forClient()
        return try TusRequests(client: self, handle: handle).head(uploadURL)
    }

    /// `DELETE <uploadURL>` (tus §Termination): the server drops the unfinished upload.
    /// - Throws: `ClientError` `.notFound`, `.gone`, `.rejected` (423 while a PATCH runs), `.unreachable`, `.transport`.
    public func terminate(uploadURL: String) throws(ClientError) {
        let handle = try EasyHandle.forClient()
        let r = try handle.send(HTTPRequest(method: "DELETE", url: uploadURL, headers: TusRequests.tusHeaders(server)),
                                   timeouts: configuration.timeouts)
        guard r.status == 204 || r.status == 200 else { throw ClientError.from(r, action: "DELETE \(uploadURL)") }
    }
}

/// Starts an OS thread for blocking work (libcurl transfers), outside Swift's cooperative pool.
enum BlockingThread {
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()  // released by the thread
        var thread = pthread_t()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        let rc = pthread_create(&thread, &attr, blockingThreadMain, box)
        pthread_attr_destroy(&attr)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }
}

final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// pthread entry: runs and releases the retained `ThreadBody`.
private func blockingThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
    body.body()
    return nil
}


extension String {
    /// Decodes `%XX` escapes (a `file://` URL's path).
    func removingPercentEncoding() -> String { PhotoWallCore.percentDecode(self) }
}
