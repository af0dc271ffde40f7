import Foundation
import PhotoWallClient
import PhotoWallCore
import PhotoWallImaging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `photowall upload FILE... [--comment TEXT] [--server URL] [--chunk-size SIZE] [--parallel N] [--allow-duplicate] [--json]`
///
/// Does what the seed app's `Comms.uploadImage` does, for each file: uploads it (resumable tus
/// upload, chunked, with progress), saves a `WallImage` {image, user, userFBId} and, with
/// `--comment`, a `WallImageComment` {comment, user, userFBId, imageObjectId}. An interrupted run
/// resumes when the same command runs again (state in `UploadResumeState`). A file whose content
/// (SHA-256) the user already posted, or given twice, is skipped unless `--allow-duplicate`.
enum UploadCommand {
    static let help = """
        usage: photowall upload FILE... [--comment TEXT] [--server URL] [--app-id ID] [--chunk-size SIZE]
                                        [--parallel N] [--max-retries N] [--checksum sha256|sha1|none] [--allow-duplicate]
                                        [--file-only] [--json]

          --comment TEXT      also post TEXT as a WallImageComment on each photo
          --server URL        API root (PHOTOWALL_SERVER; default: the logged-in server, else \(ClientTarget.defaultServer))
          --app-id ID         application id (PARSE_SERVER_APPLICATION_ID; default: the logged-in one, else \(ClientTarget.defaultAppId))
          --chunk-size SIZE   bytes per request, e.g. 4mb, 512k (default 4mb)
          --parallel N        files uploaded at once, 1-64 (default 1)
          --max-retries N     failed requests in a row retried, with growing waits, before giving up (default 9:
                              about 45 s); the bytes sent so far stay on the server for the next run
          --checksum ALGO     checksum sent with each chunk (default sha256)
          --allow-duplicate   post a file even if you already posted the same content (by default it is skipped:
                              files are compared by SHA-256 with your own photos on the wall, and a file given
                              twice is posted once)
          --file-only         only upload the files (any type) as Parse files; post nothing to the wall
          --json              one JSON event per line on stdout instead of progress bars

        Needs `photowall login` first. Files must be JPEG, PNG, WebP, HEIC/HEIF or AVIF (checked from their
        first bytes; the original is stored as it is, thumbnails are JPEG or PNG).
        On a terminal each file has a live progress line; a finished file prints its WallImage id (for
        `photowall comment`), and the batch ends with a summary:
          5 uploaded, 1 skipped (already posted), 1 refused (too large); 18.1 MiB in 4.2 s
        A file you already posted is skipped with a line saying which photo has it:
          photo.jpg: already posted as WallImage Ab12Cd34Ef on 2026-12-01 (--allow-duplicate posts it again)
        A refused file (type, size, unreadable) doesn't stop the others; every refusal is listed at the end.
        While the server is away the retries show ("server unreachable, retrying in 8 s (attempt 3)").
        Run the same command again after an interruption (Ctrl-C, network, server restart) to resume;
        resume state lives in $XDG_CACHE_HOME/photowall/uploads (default ~/.cache/photowall/uploads).

        Exit codes: 0 every file posted (or skipped as already posted); else the first failing file's: 1 failed; 2 not logged in (or the
        session expired); 3 unsupported file type; 4 file too large for the server; 5 server unreachable;
        64 usage; 66 file missing or unreadable; 130 interrupted (resumable).

        """

    /// A file that passed the local checks.
    struct Job: Sendable {
        /// Its position on the command line.
        var index: Int
        /// Its position among the files that passed the local checks (its display line).
        var slot = 0
        /// As given on the command line (shown and reported).
        var path: String
        /// Absolute, symlinks resolved (read, and part of the resume key).
        var absolutePath: String
        var size: Int64
        var mtimeNanoseconds: Int64
        var contentType: String
        /// The name asked for on the server (the base name, made valid for Parse).
        var uploadName: String
    }

    /// What every upload thread shares.
    struct Context: Sendable {
        var tus: TusClient
        var server: ParseServer
        /// The API root as given (named in messages).
        var serverURL: String
        var userId: String
        var userFBId: String
        var comment: String?
        /// Upload only; no WallImage or comment.
        var fileOnly: Bool
        var display: UploadDisplay
        var json: Bool
    }

    static func run(_ args: [String]) -> Int32 {
        let o: Options
        do {
            o = try Options(args, known: ClientTarget.optionNames.union(["comment", "chunk-size", "parallel", "checksum", "max-retries"]),
                            flags: ["json", "help", "file-only", "allow-duplicate"])
        } catch {
            return clientFail("upload", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        let json = o.flag("json")
        func fail(_ f: ClientFailure) -> Int32 {
            if json {
                Terminal.write(JSON.object(["event": "error", "code": .string(f.kind), "exitCode": .number(Double(f.exitCode)),
                                            "message": .string(f.message)]).text + "\n", to: 1)
            }
            return clientFail("upload", f)
        }
        func fail(_ message: String, _ code: Int32, _ kind: String) -> Int32 {
            fail(ClientFailure(message: message, exitCode: code, kind: kind))
        }
        guard !o.positional.isEmpty else { return fail("no FILE given (photowall upload --help)", ClientExit.usage, "usage") }
        var configuration = TusClient.Configuration()
        if let s = o.value("chunk-size") {
            guard let n = parseByteSize(s), n >= 1 else { return fail("bad --chunk-size '\(s)'", ClientExit.usage, "usage") }
            configuration.chunkBytes = Int64(n)
        }
        var parallel = 1
        if let s = o.value("parallel") {
            guard let n = Int(s), (1...64).contains(n) else { return fail("--parallel needs 1-64", ClientExit.usage, "usage") }
            parallel = n
        }
        if let s = o.value("max-retries") {
            guard let n = Int(s), (0...1000).contains(n) else { return fail("--max-retries needs 0-1000", ClientExit.usage, "usage") }
            configuration.retry.maxConsecutiveFailures = n + 1
        }
        if let s = o.value("checksum") {
            guard let a = ChecksumAlgorithm(rawValue: s) else { return fail("--checksum needs sha256, sha1 or none", ClientExit.usage, "usage") }
            configuration.checksum = a
        }

        // 1. Logged in to this server?
        let stored = StoredSession.load()
        let target = ClientTarget(o, session: stored)
        guard let session = stored else { return fail(.notLoggedIn()) }
        guard session.server == target.server, session.appId == target.appId else {
            return fail(.notLoggedIn(server: target.server, appId: target.appId))
        }

        // 2. Local checks of every file before any byte is sent; a file refused here is reported
        //    at the end and the others go on.
        var jobs: [Job] = []
        var refusals: [Refusal] = []
        for (i, path) in o.positional.enumerated() {
            switch inspect(path, index: i, anyType: o.flag("file-only")) {
            case .success(let job): jobs.append(job)
            case .failure(let f):
                // Listed as "<path>: <message>" at the end, so the message loses its own path prefix.
                var message = f.message.hasPrefix(path + ": ") ? String(f.message.dropFirst(path.count + 2)) : f.message
                if f.kind == "file-error" { message += ": check the path and that the file is readable" }
                refusals.append(Refusal(index: i, path: path, failure: ClientFailure(message: message, exitCode: f.exitCode, kind: f.kind)))
            }
        }

        if jobs.isEmpty {
            if json { for r in refusals { jsonError(r) } }
            return finish(jobs: [], outcomes: [], refusals: refusals, duplicates: [], seconds: 0,
                          display: UploadDisplay(mode: json ? .json : .plain, names: []), json: json)
        }

        // 3. The server: reachable, its size limit, and whether it still accepts the session.
        let server = target.parseServer(.sessionToken(session.sessionToken))
        let tus = TusClient(server: server, configuration: configuration)
        let me: [String: JSON]
        do {
            let info = try tus.serverInfo()
            if let max = info.maxSizeBytes {
                for big in jobs where big.size > max {
                    refusals.append(Refusal(index: big.index, path: big.path, failure: ClientFailure(
                        message: "too large (\(UploadDisplay.bytes(big.size)); the server accepts at most \(UploadDisplay.bytes(max))): choose a smaller file",
                        exitCode: ClientExit.tooLarge, kind: "too-large")))
                }
                jobs.removeAll { $0.size > max }
            }
            me = try ParseClient(server: server).currentUser()
        } catch {
            return fail(ClientFailure(error, server: target.server))
        }
        guard let userId = me["objectId"]?.stringValue else {
            return fail(ClientFailure(message: "the server did not say who is logged in: check --server", exitCode: ClientExit.failure, kind: "protocol-error"))
        }
        let fbId = me["fbId"]?.stringValue ?? ""

        // 3b. Already posted? Files whose content the user has on the wall, and a file given twice,
        //     are skipped (unless --allow-duplicate; --file-only posts nothing).
        var duplicates: [Duplicate] = []
        if !o.flag("allow-duplicate"), !o.flag("file-only") {
            do {
                duplicates = try skipDuplicates(&jobs, server: server)
            } catch {
                return fail(ClientFailure(error, server: target.server))
            }
        }

        // 4. Upload, `parallel` files at a time; Ctrl-C cancels (and leaves everything resumable).
        Interrupt.install()
        refusals.sort { $0.index < $1.index }
        for (n, _) in jobs.enumerated() { jobs[n].slot = n }
        let mode: UploadDisplay.Mode = json ? .json : (isatty(1) == 1 ? .bar : .plain)
        let display = UploadDisplay(mode: mode, names: jobs.map { displayName($0.path) })
        if json { for r in refusals { jsonError(r) } }
        for d in duplicates { display.skipped(name: displayName(d.path), results: d.messages, json: d.event) }
        let context = Context(tus: tus, server: server, serverURL: target.server, userId: userId, userFBId: fbId.isEmpty ? userId : fbId,
                              comment: o.value("comment"), fileOnly: o.flag("file-only"), display: display, json: json)
        let started = ContinuousClock.now
        let outcomes = runParallel(jobs, width: parallel) { job in uploadOne(job, context) }
        let elapsed = (ContinuousClock.now - started).inSeconds
        return finish(jobs: jobs, outcomes: outcomes, refusals: refusals, duplicates: duplicates, seconds: elapsed, display: display, json: json)
    }

    /// The `error` event of a file refused before upload (`--json`).
    static func jsonError(_ r: Refusal) {
        Terminal.write(JSON.object(["event": "error", "file": .string(r.path), "code": .string(r.failure.kind),
                                    "exitCode": .number(Double(r.failure.exitCode)), "message": .string(r.failure.message)]).text + "\n", to: 1)
    }

    /// A file refused before upload (unreadable, wrong type, too large), reported with the summary.
    struct Refusal: Sendable {
        /// Its position on the command line.
        var index: Int
        var path: String
        var failure: ClientFailure
    }

    /// How one file's upload ended.
    enum Outcome: Sendable {
        case uploaded
        case failed(ClientFailure)
        /// Not started: Ctrl-C, or the server went away while an earlier file was uploading.
        case notStarted
    }

    /// Prints the summary ("5 uploaded, 1 skipped (already posted), 1 refused (too large); 18.1 MiB
    /// in 4.2 s") and every refusal and failure on stderr, each with its next step. - Returns: the
    /// exit code: 0 when every file was posted or skipped as a duplicate, 130 after Ctrl-C, else the
    /// first failing file's code.
    static func finish(jobs: [Job], outcomes: [Outcome], refusals: [Refusal], duplicates: [Duplicate], seconds: Double,
                       display: UploadDisplay, json: Bool) -> Int32 {
        let interrupted = Interrupt.token.isCancelled
        var uploadedBytes: Int64 = 0, uploaded = 0
        var failures = refusals
        var skipped: [Job] = []
        for (job, outcome) in zip(jobs, outcomes) {
            switch outcome {
            case .uploaded: uploaded += 1; uploadedBytes += job.size
            case .failed(let f) where f.exitCode == ClientExit.interrupted: skipped.append(job)
            case .failed(let f): failures.append(Refusal(index: job.index, path: job.path, failure: f))
            case .notStarted: skipped.append(job)
            }
        }
        failures.sort { $0.index < $1.index }
        // "refused" when the file itself is the problem (type, size, missing); "failed" otherwise.
        let refusedKinds: Set<String> = ["unsupported-type", "too-large", "file-error"]
        let refused = failures.filter { refusedKinds.contains($0.failure.kind) }
        let failed = failures.filter { !refusedKinds.contains($0.failure.kind) }
        func reasons(_ list: [Refusal]) -> String {
            var seen: [String] = []
            for r in list {
                let label = Self.reasonLabels[r.failure.kind] ?? r.failure.kind.replacingOccurrences(of: "-", with: " ")
                if !seen.contains(label) { seen.append(label) }
            }
            return seen.joined(separator: ", ")
        }
        var parts = ["\(uploaded) uploaded"]
        if !duplicates.isEmpty {
            let why = [duplicates.contains { $0.posted != nil } ? "already posted" : nil,
                       duplicates.contains { $0.posted == nil } ? "given twice" : nil].compactMap { $0 }
            parts.append("\(duplicates.count) skipped (\(why.joined(separator: ", ")))")
        }
        if !refused.isEmpty { parts.append("\(refused.count) refused (\(reasons(refused)))") }
        if !failed.isEmpty { parts.append("\(failed.count) failed (\(reasons(failed)))") }
        if !skipped.isEmpty { parts.append("\(skipped.count) not finished") }
        let text = parts.joined(separator: ", ") + "; \(UploadDisplay.bytes(uploadedBytes)) in \(UploadDisplay.format(seconds)) s"
        display.summary(text, json: ["event": "summary", "uploaded": .number(Double(uploaded)), "skipped": .number(Double(duplicates.count)),
                                     "refused": .number(Double(refused.count)),
                                     "failed": .number(Double(failed.count)), "notFinished": .number(Double(skipped.count)),
                                     "totalBytes": .number(Double(uploadedBytes)), "seconds": .number((seconds * 1000).rounded() / 1000)])
        for r in failures { Terminal.write("photowall upload: \(r.path): \(r.failure.message)\n", to: 2) }
        if interrupted {
            Terminal.write("photowall upload: interrupted: run the same command again to resume\n", to: 2)
            return ClientExit.interrupted
        }
        // The last line when what is left can resume (the server went away, a file was not started).
        if !skipped.isEmpty || failed.contains(where: { Self.resumableKinds.contains($0.failure.kind) }) {
            Terminal.write("photowall upload: run the same command again to resume\n", to: 2)
        }
        if let first = failures.first { return first.failure.exitCode }
        return skipped.isEmpty ? ClientExit.ok : ClientExit.failure
    }

    /// A file not uploaded because its content is already on the wall or given earlier in the command.
    struct Duplicate: Sendable {
        var path: String
        /// The user's newest photo with the same content; nil when `sameAs` says why.
        var posted: PostedPhoto?
        /// The earlier path on the command line with the same content (it is posted).
        var sameAs: String?

        /// The file's line, most detailed first, e.g. "already posted as WallImage Ab12Cd34Ef on
        /// 2026-12-01 (--allow-duplicate posts it again)"; the shorter ones for narrow terminals keep the id.
        var messages: [String] {
            if let p = posted {
                let on = "already posted as WallImage \(p.objectId) on \(p.createdAt.prefix(10))"
                return [on + " (--allow-duplicate posts it again)", on, "already posted as WallImage \(p.objectId)"]
            }
            let name = UploadCommand.displayName(sameAs ?? "")
            return ["same as \(sameAs ?? "") (posted once)", "same as \(name) (posted once)", "same as \(name)"]
        }

        /// The `skipped` event (`--json`).
        var event: [String: JSON] {
            var e: [String: JSON] = ["event": "skipped", "file": .string(path), "reason": "duplicate", "message": .string(messages[0])]
            if let p = posted { e["objectId"] = .string(p.objectId); e["createdAt"] = .string(p.createdAt) }
            if let sameAs { e["sameAs"] = .string(sameAs) }
            return e
        }
    }

    /// Takes out of `jobs` the files whose content (SHA-256) the user already posted (asking the
    /// server once per 1000 files) and each later copy of a file given twice. A file with resume
    /// state goes on (it resumes, even when it was posted already); an unreadable one too (its upload
    /// says why); against a server without the check (older, Parse 141) only copies are skipped.
    /// - Returns: the skipped files, in command-line order.
    /// - Throws: what the server's answer fails with (session, network).
    static func skipDuplicates(_ jobs: inout [Job], server: ParseServer) throws(ClientError) -> [Duplicate] {
        var digests: [String?] = []
        var resumed: [Bool] = []
        for job in jobs {
            digests.append(try? ParseClient.sha256Hex(ofFile: job.absolutePath))
            let fresh = UploadResumeState(server: server.baseURL, path: job.absolutePath, size: job.size, mtimeNanoseconds: job.mtimeNanoseconds)
            resumed.append(UploadResumeState.load(server: server.baseURL, path: job.absolutePath, size: job.size,
                                                  mtimeNanoseconds: job.mtimeNanoseconds) != fresh)
        }
        var ask: [String] = [], asked = Set<String>()
        for (d, r) in zip(digests, resumed) where !r { if let d, asked.insert(d).inserted { ask.append(d) } }
        let posted = ask.isEmpty ? [:] : try ParseClient(server: server).postedPhotos(sha256: ask) ?? [:]
        var firstPath: [String: String] = [:]
        for (job, (d, r)) in zip(jobs, zip(digests, resumed)) where r { if let d, firstPath[d] == nil { firstPath[d] = job.path } }
        var kept: [Job] = []
        var skipped: [Duplicate] = []
        for (job, (d, r)) in zip(jobs, zip(digests, resumed)) {
            guard let d, !r else { kept.append(job); continue }
            if let photo = posted[d] {
                skipped.append(Duplicate(path: job.path, posted: photo))
            } else if let first = firstPath[d] {
                skipped.append(Duplicate(path: job.path, sameAs: first))
            } else {
                firstPath[d] = job.path
                kept.append(job)
            }
        }
        jobs = kept
        return skipped
    }

    /// Failures after which running again resumes where the server's offset is.
    static let resumableKinds: Set<String> = ["unreachable", "transport", "server-error", "checksum-mismatch"]

    /// The summary's words for a failure kind.
    static let reasonLabels: [String: String] = [
        "unsupported-type": "unsupported type", "too-large": "too large", "file-error": "unreadable",
        "unreachable": "server unreachable", "transport": "connection broke", "not-logged-in": "session no longer valid",
        "server-error": "server error",
    ]

    // MARK: one file

    struct LocalFailure: Error {
        var message: String
        var exitCode: Int32
        var kind: String
    }

    /// Exists, is a regular readable file, and (unless `anyType`) starts like an image type the
    /// server decodes (`ImageType.isDecodable`: JPEG, PNG, WebP, HEIC/HEIF, AVIF).
    static func inspect(_ path: String, index: Int, anyType: Bool) -> Result<Job, LocalFailure> {
        var st = stat()
        guard stat(path, &st) == 0 else {
            return .failure(LocalFailure(message: "\(path): \(String(cString: strerror(errno)))", exitCode: ClientExit.noInput, kind: "file-error"))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            return .failure(LocalFailure(message: "\(path): not a regular file", exitCode: ClientExit.noInput, kind: "file-error"))
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(LocalFailure(message: "\(path): \(String(cString: strerror(errno)))", exitCode: ClientExit.noInput, kind: "file-error"))
        }
        var head = [UInt8](repeating: 0, count: 4096)
        let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        close(fd)
        let type = ImageSniffer.sniff(Array(head.prefix(max(0, n))))
        guard anyType || type.isDecodable else {
            let what = type == .unknown ? "not an image" : type.description
            return .failure(LocalFailure(message: "\(path): unsupported type (\(what)); only JPEG, PNG, WebP, HEIC and AVIF can be posted",
                                         exitCode: ClientExit.unsupportedType, kind: "unsupported-type"))
        }
        let absolute = realpath(path, nil).map { p -> String in defer { free(p) }; return String(cString: p) } ?? path
        let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        return .success(Job(index: index, path: path, absolutePath: absolute, size: Int64(st.st_size), mtimeNanoseconds: mtime,
                            contentType: type.mimeType, uploadName: parseFileName(displayName(path), type: type)))
        // (--file-only: an unknown type is stored as application/octet-stream.)
    }

    static func displayName(_ path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    /// A name Parse accepts (`[A-Za-z0-9_][A-Za-z0-9@. ~_-]*`, at most 128 bytes), keeping the extension.
    static func parseFileName(_ name: String, type: ImageType) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            let ok = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "@. ~_-".unicodeScalars.contains(scalar))
            out.unicodeScalars.append(ok ? scalar : "_")
        }
        if let first = out.unicodeScalars.first, !(first.properties.isAlphabetic || ("0"..."9").contains(first) || first == "_") {
            out = "_" + out
        }
        if out.isEmpty { out = "photo." + type.fileExtension }
        if out.count > 128 { out = "_" + String(out.suffix(127)) }  // ASCII only by now: characters are bytes
        return out
    }

    /// The retry notice shown while a request is tried again, e.g. "server unreachable, retrying in 8 s (attempt 3)".
    static func retryNotice(attempt: Int, delaySeconds: Double, error: ClientError) -> String {
        let what: String
        switch error.code {
        case .unreachable: what = "server unreachable"
        case .transport: what = "connection broke"
        case .serverError where error.parseCode == 124: what = "server busy making thumbnails"
        case .serverError: what = "server error" + (error.httpStatus.map { " \($0)" } ?? "")
        case .checksumMismatch: what = "checksum refused"
        default: what = error.httpStatus.map { "HTTP \($0)" } ?? error.code.rawValue
        }
        let wait = delaySeconds < 1 ? "\(UploadDisplay.format(delaySeconds)) s" : "\(Int(delaySeconds.rounded())) s"
        return "\(what), retrying in \(wait) (attempt \(attempt + 1))"
    }

    /// `POST /classes/WallImage`, tried again while the server answers 124 with 503: its renders were
    /// too far behind to start this photo's thumbnails within its wait limit. Nothing was saved then,
    /// and the render stays queued for the retry, which waits the server's `Retry-After` (or the
    /// backoff of `retry`, when longer), at most `retry.maxConsecutiveFailures` attempts in all.
    /// - Returns: the new object's `objectId`.
    /// - Throws: what the last attempt threw; `.cancelled` on Ctrl-C while waiting.
    static func createWallImage(_ parse: ParseClient, fields: [String: JSON], retry: RetryPolicy,
                                onRetry: (_ attempt: Int, _ delaySeconds: Double, ClientError) -> Void) throws(ClientError) -> String {
        var attempt = 0
        while true {
            do {
                return try parse.createObject(className: "WallImage", fields: fields)
            } catch where error.httpStatus == 503 && error.parseCode == 124 && attempt + 1 < retry.maxConsecutiveFailures {
                attempt += 1
                let delay = retry.delaySeconds(beforeRetry: attempt, after: error)
                onRetry(attempt, delay, error)
                guard Interrupt.token.sleep(seconds: delay) else { throw ClientError(.cancelled, "Cancelled.") }
            }
        }
    }

    /// Uploads one file, then saves its WallImage and comment. - Returns: how it ended.
    static func uploadOne(_ job: Job, _ c: Context) -> Outcome {
        var state = UploadResumeState.load(server: c.server.baseURL, path: job.absolutePath, size: job.size,
                                           mtimeNanoseconds: job.mtimeNanoseconds)
        let file = JSON.string(job.path)
        let d = c.display, i = job.slot
        /// A request is tried again after `delay` seconds: the notice on the file's line, a `retry` event.
        @Sendable func showRetry(_ attempt: Int, _ delay: Double, _ error: ClientError) {
            let notice = retryNotice(attempt: attempt, delaySeconds: delay, error: error)
            d.retrying(i, notice: notice, json: ["event": "retry", "file": file, "attempt": .number(Double(attempt)),
                                                 "delaySeconds": .number((delay * 1000).rounded() / 1000),
                                                 "error": .string(error.message), "message": .string(notice)])
        }
        d.start(i, path: job.path, total: job.size)
        do {
            if state.fileName == nil {
                let result = try c.tus.upload(file: job.absolutePath, fileName: job.uploadName, contentType: job.contentType,
                                              resumeURL: state.uploadURL, cancellation: Interrupt.token, onEvent: { event in
                    switch event {
                    case .created(let url):
                        state.uploadURL = url
                        state.save()
                        d.event(i, ["event": "created", "file": file, "uploadURL": .string(url)])
                    case .resumed(_, let offset):
                        d.resumed(i, path: job.path, offset: offset)
                    case .restarted(let previous, let reason):
                        d.event(i, ["event": "restarted", "file": file, "previousURL": .string(previous), "reason": .string(reason.message)])
                    case .retrying(let attempt, let delay, let error):
                        showRetry(attempt, delay, error)
                    }
                }, progress: { sent, total in
                    d.progress(i, path: job.path, sent: sent, total: total)
                })
                state.fileName = result.fileName
                state.fileURL = result.fileURL
                state.save()
            } else {
                d.progress(i, path: job.path, sent: job.size, total: job.size)
            }
            if c.fileOnly {
                // Not on a wall: the file's plain URL is served.
                d.event(i, ["event": "uploaded", "file": file, "fileName": .string(state.fileName!), "url": .string(state.fileURL ?? "")])
                state.remove()
                d.finished(i, json: ["event": "done", "file": file, "fileName": .string(state.fileName!), "url": .string(state.fileURL ?? ""),
                                     "totalBytes": .number(Double(job.size))],
                           result: "done: \(state.fileName!)")
                return .uploaded
            }
            // The plain URL stops working once the file is on a wall (wall files are served by signed
            // URLs only): `done` carries the signed ones.
            d.event(i, ["event": "uploaded", "file": file, "fileName": .string(state.fileName!)])

            let parse = try ParseClient(server: c.server)
            let user: JSON = ["__type": "Pointer", "className": "_User", "objectId": .string(c.userId)]
            if state.wallImageId == nil {
                d.note(i, "saving WallImage")
                var image: [String: JSON] = ["__type": "File", "name": .string(state.fileName!)]
                if let url = state.fileURL, !url.isEmpty { image["url"] = .string(url) }
                let created = Result { () throws(ClientError) -> String in
                    try createWallImage(parse, fields: ["image": .object(image), "user": user, "userFBId": .string(c.userFBId)],
                                        retry: c.tus.configuration.retry, onRetry: showRetry)
                }
                if case .failure(let e) = created, !e.isRetryable, e.httpStatus.map({ (400..<500).contains($0) }) == true {
                    // Refused for good (e.g. the image can't be decoded): running again won't help,
                    // so forget this file's state instead of retrying the same refusal forever.
                    state.remove()
                }
                state.wallImageId = try created.get()
                state.save()
            }
            if let comment = c.comment, state.commentId == nil {
                d.note(i, "saving comment")
                state.commentId = try parse.createObject(className: "WallImageComment", fields: [
                    "comment": .string(comment), "user": user, "userFBId": .string(c.userFBId),
                    "imageObjectId": .string(state.wallImageId!),
                ])
                state.save()
            }
            state.remove()
            var done: [String: JSON] = ["event": "done", "file": file, "fileName": .string(state.fileName!),
                                        "wallImageId": .string(state.wallImageId!), "totalBytes": .number(Double(job.size))]
            if let id = state.commentId { done["commentId"] = .string(id) }
            // The signed URLs the saved WallImage carries. Best effort.
            if let saved = try? parse.getObject(className: "WallImage", objectId: state.wallImageId!) {
                for key in ["image", "thumbnail"] { if let url = saved[key]?["url"] { done[key + "URL"] = url } }
            }
            let result = "done: WallImage \(state.wallImageId!)" + (state.commentId.map { ", comment \($0)" } ?? "")
            d.finished(i, json: done, result: result)
            return .uploaded
        } catch {
            let failure = ClientFailure(error, server: c.serverURL, resumable: true)
            d.failed(i, path: job.path, failure: failure, short: reasonLabels[failure.kind] ?? failure.kind)
            return .failed(failure)
        }
    }

    /// Runs `body` for every job on `width` threads; after Ctrl-C, or once a file failed because
    /// the server is unreachable, the jobs not yet started are left (`.notStarted`).
    /// - Returns: each job's outcome, in job order.
    static func runParallel(_ jobs: [Job], width: Int, _ body: @escaping @Sendable (Job) -> Outcome) -> [Outcome] {
        final class Shared: Sendable {
            let next = Mutex(0)
            let serverGone = Atomic<Bool>(false)
            let outcomes: Mutex<[Outcome]>
            init(count: Int) { outcomes = Mutex([Outcome](repeating: .notStarted, count: count)) }
        }
        let shared = Shared(count: jobs.count)
        let group = DispatchGroup()
        for _ in 0..<min(width, jobs.count) {
            group.enter()
            let thread = Thread {
                while true {
                    let i: Int = shared.next.withLock { n in defer { n += 1 }; return n }
                    guard i < jobs.count, !Interrupt.token.isCancelled, !shared.serverGone.load(ordering: .relaxed) else { break }
                    let outcome = body(jobs[i])
                    if case .failed(let f) = outcome, f.kind == "unreachable" { shared.serverGone.store(true, ordering: .relaxed) }
                    shared.outcomes.withLock { $0[i] = outcome }
                }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        return shared.outcomes.withLock { $0 }
    }
}

/// Ctrl-C / SIGTERM during `upload`: the first cancels the transfers (they stop within about
/// 50 ms, keeping what the server has); a second exits at once.
enum Interrupt {
    static let token = CancellationToken()
    static let count = Atomic<Int>(0)

    static func install() {
        signal(SIGINT, interruptSignalHandler)
        signal(SIGTERM, interruptSignalHandler)
        // A parent may have started us with these blocked (the mask is inherited); threads made
        // after this point inherit the unblocked mask.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

/// The signal handler: an atomic add and an atomic store (async-signal-safe), or `_exit`.
func interruptSignalHandler(_ signal: Int32) {
    if Interrupt.count.add(1, ordering: .relaxed).newValue > 1 { _exit(ClientExit.interrupted) }
    Interrupt.token.cancel()
}
