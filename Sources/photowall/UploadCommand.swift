import Foundation
import PhotoWallClient
import PhotoWallCore
import PhotoWallImaging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `photowall upload FILE... [--comment TEXT] [--server URL] [--chunk-size SIZE] [--parallel N] [--json]`
///
/// Does what the seed app's `Comms.uploadImage` does, for each file: uploads it (resumable tus
/// upload, chunked, with progress), saves a `WallImage` {image, user, userFBId} and, with
/// `--comment`, a `WallImageComment` {comment, user, userFBId, imageObjectId}. An interrupted run
/// resumes when the same command runs again (state in `UploadResumeState`).
enum UploadCommand {
    static let help = """
        usage: photowall upload FILE... [--comment TEXT] [--server URL] [--app-id ID] [--chunk-size SIZE]
                                        [--parallel N] [--checksum sha256|sha1|none] [--file-only] [--json]

          --comment TEXT      also post TEXT as a WallImageComment on each photo
          --server URL        API root (PHOTOWALL_SERVER; default: the logged-in server, else \(ClientTarget.defaultServer))
          --app-id ID         application id (PARSE_SERVER_APPLICATION_ID; default: the logged-in one, else \(ClientTarget.defaultAppId))
          --chunk-size SIZE   bytes per request, e.g. 4mb, 512k (default 4mb)
          --parallel N        files uploaded at once, 1-64 (default 1)
          --checksum ALGO     checksum sent with each chunk (default sha256)
          --file-only         only upload the files (any type) as Parse files; post nothing to the wall
          --json              one JSON event per line on stdout instead of progress bars

        Needs `photowall login` first. Files must be JPEG, PNG, WebP, HEIC/HEIF or AVIF (checked from their
        first bytes; the original is stored as it is, thumbnails are JPEG or PNG).
        Run the same command again after an interruption (Ctrl-C, network, server restart) to resume;
        resume state lives in $XDG_CACHE_HOME/photowall/uploads (default ~/.cache/photowall/uploads).

        Exit codes: 0 done; 1 failed; 2 not logged in (or the session expired); 3 unsupported file type;
        4 file too large for the server; 5 server unreachable; 64 usage; 66 file missing or unreadable;
        130 interrupted (resumable).

        """

    /// A file that passed the local checks.
    struct Job: Sendable {
        var index: Int
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
            o = try Options(args, known: ClientTarget.optionNames.union(["comment", "chunk-size", "parallel", "checksum"]),
                            flags: ["json", "help", "file-only"])
        } catch {
            return clientFail("upload", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        let json = o.flag("json")
        func fail(_ message: String, _ code: Int32, _ kind: String) -> Int32 {
            if json {
                Terminal.write(JSON.object(["event": "error", "code": .string(kind), "exitCode": .number(Double(code)),
                                            "message": .string(message)]).text + "\n", to: 1)
            }
            return clientFail("upload", message, code)
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
        if let s = o.value("checksum") {
            guard let a = ChecksumAlgorithm(rawValue: s) else { return fail("--checksum needs sha256, sha1 or none", ClientExit.usage, "usage") }
            configuration.checksum = a
        }

        // 1. Logged in to this server?
        let stored = StoredSession.load()
        let target = ClientTarget(o, session: stored)
        guard let session = stored else {
            return fail("not logged in (run photowall login)", ClientExit.notLoggedIn, "not-logged-in")
        }
        guard session.server == target.server, session.appId == target.appId else {
            return fail("not logged in to \(target.server) as app \(target.appId) (run photowall login --server \(target.server))",
                        ClientExit.notLoggedIn, "not-logged-in")
        }

        // 2. Local checks of every file before any byte is sent.
        var jobs: [Job] = []
        for (i, path) in o.positional.enumerated() {
            switch inspect(path, index: i, anyType: o.flag("file-only")) {
            case .success(let job): jobs.append(job)
            case .failure(let f): return fail(f.message, f.exitCode, f.kind)
            }
        }

        // 3. The server: reachable, its size limit, and whether it still accepts the session.
        let server = target.parseServer(.sessionToken(session.sessionToken))
        let tus = TusClient(server: server, configuration: configuration)
        let me: [String: JSON]
        do {
            let info = try tus.serverInfo()
            if let max = info.maxSizeBytes, let big = jobs.first(where: { $0.size > max }) {
                return fail("\(big.path): too large (\(UploadDisplay.bytes(big.size)); the server accepts at most \(UploadDisplay.bytes(max)))",
                            ClientExit.tooLarge, "too-large")
            }
            me = try ParseClient(server: server).currentUser()
        } catch {
            switch error.code {
            case .unreachable: return fail("server unreachable at \(target.server)", ClientExit.unreachable, "unreachable")
            case .unauthorized: return fail("not logged in: the session is no longer valid (run photowall login)", ClientExit.notLoggedIn, "not-logged-in")
            default: return fail(error.message, ClientExit.code(for: error), error.code.rawValue)
            }
        }
        guard let userId = me["objectId"]?.stringValue else { return fail("the server did not say who is logged in", ClientExit.failure, "protocol-error") }
        let fbId = me["fbId"]?.stringValue ?? ""

        // 4. Upload, `parallel` files at a time; Ctrl-C cancels (and leaves everything resumable).
        Interrupt.install()
        let mode: UploadDisplay.Mode = json ? .json : (isatty(1) == 1 ? .bar : .plain)
        let context = Context(tus: tus, server: server, userId: userId, userFBId: fbId.isEmpty ? userId : fbId,
                              comment: o.value("comment"), fileOnly: o.flag("file-only"), display: UploadDisplay(mode: mode, names: jobs.map { displayName($0.path) }),
                              json: json)
        let codes = runParallel(jobs, width: parallel) { job in uploadOne(job, context) }
        if codes.contains(ClientExit.interrupted) || Interrupt.token.isCancelled {
            Terminal.write("photowall upload: interrupted; run the same command again to resume\n", to: 2)
            return ClientExit.interrupted
        }
        return codes.first { $0 != ClientExit.ok } ?? ClientExit.ok
    }

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

    /// Uploads one file, then saves its WallImage and comment. - Returns: its exit code.
    static func uploadOne(_ job: Job, _ c: Context) -> Int32 {
        var state = UploadResumeState.load(server: c.server.baseURL, path: job.absolutePath, size: job.size,
                                           mtimeNanoseconds: job.mtimeNanoseconds)
        let file = JSON.string(job.path)
        let d = c.display, i = job.index
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
                        d.event(i, ["event": "retry", "file": file, "attempt": .number(Double(attempt)),
                                    "delaySeconds": .number((delay * 1000).rounded() / 1000), "error": .string(error.message)])
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
            d.event(i, ["event": "uploaded", "file": file, "fileName": .string(state.fileName!), "url": .string(state.fileURL ?? "")])
            if c.fileOnly {
                state.remove()
                d.finished(i, json: ["event": "done", "file": file, "fileName": .string(state.fileName!), "url": .string(state.fileURL ?? ""),
                                     "totalBytes": .number(Double(job.size))],
                           summary: "done: \(state.fileName!)")
                return ClientExit.ok
            }

            let parse = try ParseClient(server: c.server)
            let user: JSON = ["__type": "Pointer", "className": "_User", "objectId": .string(c.userId)]
            if state.wallImageId == nil {
                d.note(i, "saving WallImage")
                var image: [String: JSON] = ["__type": "File", "name": .string(state.fileName!)]
                if let url = state.fileURL, !url.isEmpty { image["url"] = .string(url) }
                let created = Result { () throws(ClientError) -> String in
                    try parse.createObject(className: "WallImage", fields: [
                        "image": .object(image), "user": user, "userFBId": .string(c.userFBId),
                    ])
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
            // The file's plain URL stops working once it is on a wall (wall files are served by signed
            // URLs only): report the signed ones the saved WallImage carries. Best effort.
            if let saved = try? parse.getObject(className: "WallImage", objectId: state.wallImageId!) {
                for key in ["image", "thumbnail"] { if let url = saved[key]?["url"] { done[key + "URL"] = url } }
            }
            let summary = "done: WallImage \(state.wallImageId!)" + (state.commentId.map { ", comment \($0)" } ?? "")
            d.finished(i, json: done, summary: summary)
            return ClientExit.ok
        } catch {
            let code = ClientExit.code(for: error)
            let message: String
            switch error.code {
            case .unreachable: message = "server unreachable (\(error.message))"
            case .cancelled: message = "interrupted"
            case .rejected where error.parseCode == 111: message = "refused by the server: \(error.message)"
            default: message = error.message
            }
            d.failed(i, path: job.path, code: error.code.rawValue, exitCode: code, message: message)
            if code != ClientExit.interrupted { Terminal.write("photowall upload: \(job.path): \(message)\n", to: 2) }
            return code
        }
    }

    /// Runs `body` for every job on `width` threads. - Returns: each job's exit code, in job order.
    static func runParallel(_ jobs: [Job], width: Int, _ body: @escaping @Sendable (Job) -> Int32) -> [Int32] {
        final class Shared: Sendable {
            let next = Mutex(0)
            let codes: Mutex<[Int32]>
            init(count: Int) { codes = Mutex([Int32](repeating: ClientExit.ok, count: count)) }
        }
        let shared = Shared(count: jobs.count)
        let group = DispatchGroup()
        for _ in 0..<min(width, jobs.count) {
            group.enter()
            let thread = Thread {
                while true {
                    let i: Int = shared.next.withLock { n in defer { n += 1 }; return n }
                    guard i < jobs.count, !Interrupt.token.isCancelled else { break }
                    let code = body(jobs[i])
                    shared.codes.withLock { $0[i] = code }
                }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        if Interrupt.token.isCancelled {
            // Jobs never started count as interrupted too.
            return shared.codes.withLock { $0 }.map { $0 == ClientExit.ok ? ClientExit.interrupted : $0 }
        }
        return shared.codes.withLock { $0 }
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
