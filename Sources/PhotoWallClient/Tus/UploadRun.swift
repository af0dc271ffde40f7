internal import PhotoWallCurl
import PhotoWallCrypto
import Synchronization

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
                if let status = try sendChunks(url), let name = status.fileName {
                    return finish(url: url, name: name, fileURL: status.fileURL)
                }
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
                let delay = configuration.retry.delaySeconds(beforeRetry: consecutiveFailures, after: error)
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

    /// The `Upload-Checksum` of the chunk at `offset` (prefetched when it was the next one), and starts
    /// hashing the chunk after it.
    func checksum(offset: Int64, length: Int64) throws(ClientError) -> String? {
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
        return checksum
    }

    /// At most this many PATCHes in flight when pipelining: the oldest one verifying, syncing and
    /// committing on the server, and the bodies of the next ones queued behind it (a server syncs the
    /// ones behind while the one before commits, so its sync latency no longer paces the upload).
    /// Four: with 4 MiB chunks and SHA-256 on this project's 2-core machine and virtual disk, 256 MiB
    /// went at 132–185 MB/s with three (median 163) and 170–215 with four (median 193), in eight
    /// alternating pairs. Three of them (those behind the first) take places of the server's sixteen for
    /// pipelined PATCHes (`UploadService.pipelineSlots`, shared by all uploads).
    static let pipelineDepth = 4
    /// The further connections, for pipelined PATCHes (made on first use).
    var pipelinedRequests: [TusRequests] = []
    /// Whether PATCHes are pipelined: off when disabled, or after the server refused three pipelined
    /// PATCHes in a row (an older server answers them 409 or 423).
    lazy var pipelining = configuration.pipelining
    var pipelineRefusals = 0

    /// Sends chunks from `offset` until the upload is complete or a request fails, moving `offset`
    /// with every confirmed chunk. With `pipelining`, the next chunk's PATCH starts on another
    /// connection as soon as the last one's body is sent (at most `pipelineDepth` in flight), so its
    /// bytes travel while the server verifies, syncs and commits the ones before (the server starts
    /// it only then, behind those bytes, and confirms it only after the ones before are durable; see
    /// PhotoWall's `UploadAppend`).
    /// Progress flows while the bodies go out; callbacks stay on this thread.
    /// - Returns: the last confirmed status (naming the file once complete).
    /// - Throws: the first failure, once every request in flight has ended (the caller then HEADs).
    func sendChunks(_ url: String) throws(ClientError) -> UploadStatus? {
        let wake = Semaphore()
        let relay = ProgressRelay(minimumInterval: configuration.progressIntervalSeconds, wake: wake)
        var inFlight: [PatchTask] = []
        var nextOffset = offset
        var last: UploadStatus?
        var handles = [requests]
        if pipelining {
            while pipelinedRequests.count < Self.pipelineDepth - 1 {
                pipelinedRequests.append(TusRequests(client: client, handle: try EasyHandle.forClient(), cancellation: cancellation))
            }
            handles += pipelinedRequests
        }
        /// Waits for every request still in flight (after a failure or at the end), passing their
        /// progress on meanwhile (a request waiting in the relay would never end).
        func drain() {
            for t in inFlight {
                while !t.isDone {
                    wake.wait(timeoutSeconds: 0.05)
                    relay.deliver { reporter.update($0) }
                }
            }
        }
        while true {
            let mayStart = inFlight.isEmpty
                || (pipelining && inFlight.count < handles.count && inFlight.last!.bodySent && !inFlight[0].isDone)
            if mayStart, nextOffset < file.size {
                let length = min(configuration.chunkBytes, file.size - nextOffset)
                let sum: String?
                do throws(ClientError) { sum = try checksum(offset: nextOffset, length: length) } catch {
                    drain()
                    throw error
                }
                let free = handles.first { h in !inFlight.contains { $0.requests.handle === h.handle } }!
                inFlight.append(PatchTask(requests: free, url: url, file: file, offset: nextOffset, length: length, checksum: sum,
                                          pipelined: !inFlight.isEmpty, wake: wake, relay: relay))
                nextOffset += length
                continue
            }
            guard let first = inFlight.first else { return last }
            if !first.isDone { wake.wait(timeoutSeconds: 0.05) }
            relay.deliver { reporter.update($0) }
            guard first.isDone else { continue }
            inFlight.removeFirst()
            switch first.result {
            case .success(let status):
                guard status.offset > offset, status.offset <= file.size else {
                    drain()
                    throw ClientError(.protocolError, "The server moved the offset from \(offset) to \(status.offset).")
                }
                offset = status.offset
                noteProgress()
                reporter.update(offset)
                last = status
                if first.pipelined { pipelineRefusals = 0 }
                if status.fileName != nil || status.offset != first.offset + first.length {
                    // Complete, or the server kept another amount: whatever is still in flight was sent
                    // for other offsets; go on from the server's.
                    drain()
                    return status
                }
            case .failure(let error):
                drain()
                // A pipelined PATCH refused after its predecessor succeeded: the server does not
                // pipeline (or its predecessor was not done in time). Go on from the confirmed offset.
                if first.pipelined, error.httpStatus == 409 || error.httpStatus == 423, offset == first.offset {
                    pipelineRefusals += 1
                    if pipelineRefusals >= 3 { pipelining = false }
                    return last
                }
                throw error
            }
        }
    }

    func finish(url: String, name: String, fileURL: String?) -> UploadResult {
        offset = file.size
        reporter.finish()
        return UploadResult(uploadURL: url, fileName: name, fileURL: fileURL ?? "", totalBytes: file.size,
                            resumedFromOffset: resumedFrom, retries: retries)
    }
}

/// One PATCH of `UploadRun.sendChunks`, running on its own thread with its own connection
/// (`requests`), so several can be in flight: it reports how much of its body went out and its result.
///
/// `@unchecked Sendable`: `requests` (its libcurl handle) and `file` are used by the helper thread
/// only until `isDone` (the run uses a handle again only after that); the counters are atomics and
/// the result is set once under `state` before `isDone` turns true.
final class PatchTask: @unchecked Sendable {
    let requests: TusRequests
    let offset: Int64
    let length: Int64
    /// Sent behind a PATCH still in flight.
    let pipelined: Bool
    private let sent = Atomic<Int64>(0)
    private let done = Atomic<Bool>(false)
    private let state = Mutex<Result<UploadStatus, ClientError>?>(nil)
    private let finished = Semaphore()

    private let file: SourceFile

    init(requests: TusRequests, url: String, file: SourceFile, offset: Int64, length: Int64, checksum: String?, pipelined: Bool,
         wake: Semaphore, relay: ProgressRelay) {
        self.requests = requests; self.file = file; self.offset = offset; self.length = length; self.pipelined = pipelined
        BlockingThread.start(name: "tus-patch") { [self] in
            let result = Result { () throws(ClientError) -> UploadStatus in
                try self.requests.patch(url, file: self.file, offset: offset, length: length, checksum: checksum) { [self] n in
                    if n > sent.load(ordering: .relaxed) {
                        sent.store(n, ordering: .relaxed)
                        if n >= length { wake.signal() }  // the body is out: the next PATCH may start
                    }
                    // On the run's thread, while this transfer waits (as when it ran there itself).
                    relay.offer(offset + n)
                    return !(self.requests.cancellation?.isCancelled ?? false)
                }
            }
            state.withLock { $0 = result }
            done.store(true, ordering: .releasing)
            finished.signal()
            wake.signal()
        }
    }

    /// Body bytes handed to the connection so far.
    var sentBytes: Int64 { sent.load(ordering: .relaxed) }
    var bodySent: Bool { sentBytes >= length }
    var isDone: Bool { done.load(ordering: .acquiring) }
    /// The result; only once `isDone`.
    var result: Result<UploadStatus, ClientError> { state.withLock { $0! } }

    func waitUntilDone() {
        finished.wait()
        finished.signal()  // later callers pass too
    }
}

/// Hands the byte counts of PATCHes running on helper threads to the thread running the upload, which
/// makes the progress callbacks (`TusClient.upload` promises them on the calling thread). The
/// offering transfer waits until its count was passed on, so a callback that blocks holds the transfer
/// up, as when the transfer ran on the calling thread; counts come at most once per
/// `minimumInterval` (the reporter's own), others are dropped.
final class ProgressRelay: Sendable {
    private let minimumInterval: Duration
    private let wake: Semaphore
    /// The count waiting to be passed on, and when one was last offered.
    private let state = Mutex<(pending: Int64?, last: ContinuousClock.Instant?)>((nil, nil))
    /// One offering transfer at a time.
    private let turn = Mutex<Void>(())
    private let delivered = Semaphore()

    init(minimumInterval: Double, wake: Semaphore) {
        self.minimumInterval = .milliseconds(Int64(minimumInterval * 1000))
        self.wake = wake
    }

    /// Helper thread: offers `bytes`; when it is time for a callback, waits until it was passed on.
    func offer(_ bytes: Int64) {
        turn.withLock { _ in
            let now = ContinuousClock.now
            let due = state.withLock { s -> Bool in
                if let last = s.last, now - last < minimumInterval { return false }
                s = (bytes, now)
                return true
            }
            guard due else { return }
            wake.signal()
            delivered.wait()
        }
    }

    /// The upload's thread: passes a waiting count to `callback`, then lets its transfer go on.
    func deliver(_ callback: (Int64) -> Void) {
        guard let bytes = state.withLock({ s -> Int64? in
            defer { s.pending = nil }
            return s.pending
        }) else { return }
        callback(bytes)
        delivered.signal()
    }
}
