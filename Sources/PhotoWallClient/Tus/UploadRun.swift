internal import PhotoWallCurl
import PhotoWallCrypto

/// One call of `TusClient.upload`: create or resume, PATCH chunk by chunk, and after any
/// retryable failure back off, HEAD for the server's offset and go on.
///
/// Not thread-safe: lives on the calling thread for the call's duration.
final class UploadRun {
    let client: TusClient
    let file: SourceFile
    let fileName: String
    let contentType: String?
    let cancellation: CancellationToken
    let onEvent: (UploadEvent) -> Void
    let reporter: ProgressReporter
    let requests: TusRequests
    /// Reused read buffer for checksums (1 MiB).
    var buffer = [UInt8](repeating: 0, count: 1 << 20)

    var uploadURL: String?
    /// The server's confirmed offset (bytes).
    var offset: Int64 = 0
    /// The furthest confirmed offset seen; failures in a row reset when it grows.
    var bestOffset: Int64 = -1
    var consecutiveFailures = 0
    var retries = 0
    var resumedFrom: Int64 = 0

    init(client: TusClient, file: SourceFile, fileName: String, contentType: String?, cancellation: CancellationToken,
         onEvent: @escaping (UploadEvent) -> Void, progress: @escaping (Int64, Int64) -> Void) throws(ClientError) {
        self.client = client; self.file = file; self.fileName = fileName; self.contentType = contentType
        self.cancellation = cancellation; self.onEvent = onEvent
        let interval = Duration.milliseconds(Int64(client.configuration.progressIntervalSeconds * 1000))
        reporter = ProgressReporter(total: file.size, minimumInterval: interval, callback: progress)
        requests = TusRequests(client: client, handle: try EasyHandle.forClient(), cancellation: cancellation)
    }

    var configuration: TusClient.Configuration { client.configuration }

    func run(resumeURL: String?) throws(ClientError) -> UploadResult {
        // A checksum helper still reading the file must finish before the file is closed.
        defer { _ = try? prefetch?.value() }
        // Phase 1: find the upload (resume) or make one.
        var needHead = false
        if let resumeURL {
            uploadURL = resumeURL
            needHead = true
        }
        var firstContact = true
        while true {
            guard !cancellation.isCancelled else { throw ClientError(.cancelled, "Cancelled.") }
            do throws(ClientError) {
                if uploadURL == nil {
                    uploadURL = try create()
                    offset = 0
                    needHead = false
                    onEvent(.created(uploadURL: uploadURL!))
                }
                let url = uploadURL!
                if needHead {
                    let status = try requests.head(url)
                    if status.length != nil && status.length != file.size {
                        // A stored URL for other content: start afresh.
                        let reason = ClientError(.rejected, "The stored upload is \(status.length!) bytes; the file is \(file.size).")
                        onEvent(.restarted(previousURL: url, reason: reason))
                        uploadURL = nil
                        continue
                    }
                    needHead = false
                    if firstContact, resumeURL != nil {
                        resumedFrom = status.offset
                        onEvent(.resumed(uploadURL: url, offset: status.offset))
                    }
                    offset = status.offset
                    noteProgress()
                    reporter.update(offset)
                    if let name = status.fileName { return finish(url: url, name: name, fileURL: status.fileURL) }
                }
                firstContact = false
                if offset >= file.size {
                    // Everything is there but the answer naming the file was lost (or the file is
                    // empty): HEAD completes and names it.
                    let status = try requests.head(url)
                    if let name = status.fileName { return finish(url: url, name: name, fileURL: status.fileURL) }
                    throw ClientError(.protocolError, "The server holds all \(file.size) bytes but names no file.")
                }
                let status = try sendChunk(url)
                guard status.offset > offset, status.offset <= file.size else {
                    throw ClientError(.protocolError, "The server moved the offset from \(offset) to \(status.offset).")
                }
                offset = status.offset
                noteProgress()
                reporter.update(offset)
                if let name = status.fileName { return finish(url: url, name: name, fileURL: status.fileURL) }
            } catch {
                if firstContact, resumeURL != nil, uploadURL == resumeURL, error.code == .notFound || error.code == .gone {
                    onEvent(.restarted(previousURL: resumeURL!, reason: error))
                    uploadURL = nil
                    firstContact = false
                    continue
                }
                consecutiveFailures += 1
                guard error.isRetryable, consecutiveFailures < configuration.retry.maxConsecutiveFailures else { throw counted(error) }
                retries += 1
                // The backoff, or longer when the server says when to come back (a 423 while
                // another instance's lease lapses).
                let delay = max(configuration.retry.delaySeconds(beforeRetry: consecutiveFailures), error.retryAfterSeconds ?? 0)
                onEvent(.retrying(attempt: consecutiveFailures, delaySeconds: delay, error: error))
                guard cancellation.sleep(seconds: delay) else { throw ClientError(.cancelled, "Cancelled.") }
                if uploadURL != nil { needHead = true }
            }
        }
    }

    /// The error with the number of attempts made in a row (counting the one that failed).
    func counted(_ error: ClientError) -> ClientError {
        var e = error
        e.attempts = max(1, consecutiveFailures)
        return e
    }

    /// A confirmed offset beyond any before resets the failure count (the upload is moving).
    func noteProgress() {
        if offset > bestOffset {
            bestOffset = offset
            consecutiveFailures = 0
        }
    }

    func create() throws(ClientError) -> String {
        var metadata: [(String, String)] = [("filename", fileName)]
        if let contentType { metadata.append(("filetype", contentType)) }
        return try requests.create(length: file.size, metadata: metadata)
    }

    /// The next chunk's checksum, being computed while the current chunk is sent.
    var prefetch: ChecksumPrefetch?

    /// Sends the chunk at `offset` with its checksum; progress flows while the body goes out.
    func sendChunk(_ url: String) throws(ClientError) -> UploadStatus {
        let length = min(configuration.chunkBytes, file.size - offset)
        let checksum: String?
        if let p = prefetch, p.offset == offset, p.length == length {
            checksum = try p.value()
        } else {
            _ = try? prefetch?.value()  // let a stale helper finish before it is dropped
            checksum = try ChecksumPrefetch.header(configuration.checksum, file: file, offset: offset, length: length, buffer: &buffer)
        }
        prefetch = nil
        let next = offset + length
        if configuration.checksum != .none, next < file.size {
            prefetch = ChecksumPrefetch(file: file, offset: next, length: min(configuration.chunkBytes, file.size - next),
                                        algorithm: configuration.checksum)
        }
        let start = offset
        let reporter = reporter, cancellation = cancellation
        return try requests.patch(url, file: file, offset: offset, length: length, checksum: checksum) { sent in
            reporter.update(start + sent)
            return !cancellation.isCancelled
        }
    }

    func finish(url: String, name: String, fileURL: String?) -> UploadResult {
        offset = file.size
        reporter.finish()
        return UploadResult(uploadURL: url, fileName: name, fileURL: fileURL ?? "", totalBytes: file.size,
                            resumedFromOffset: resumedFrom, retries: retries)
    }
}
