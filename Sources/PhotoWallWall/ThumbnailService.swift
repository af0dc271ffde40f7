import Foundation
import Synchronization
import PhotoWallCore
import PhotoWallImaging
import PhotoWallServices
import PhotoWallStorage

/// Makes the thumbnails of wall photos: when a `WallImage` is saved with an `image` file
/// (`Wall.beforeSave` asks on every save of one), a `thumbnail` (256-pixel box) and a `display` image (1080-pixel box) are made from one decode,
/// stored as Parse files, and set on the object with the photo's upright `width` and `height`.
///
/// The decoding runs on a pool of `concurrency` threads of its own (default: one per core, named
/// `thumbnail-N`), not on the thread that handles the request, so a burst of uploads can't take every
/// request thread; saves beyond that wait their turn, each giving its request's worker slot back
/// until its render starts (see `render`), for at most `renderWaitLimit`: a save whose render has not
/// started by then is refused with 124 and `Retry-After` (503), and its render stays queued for the
/// client's retry to take. Not on Dispatch's global queues: other work
/// there blocks on disks and networks (S3 part uploads, file syncs), and on Linux that pool adds a
/// thread only about once a second while its threads are blocked, so a render could wait that long.
/// A failure refuses the save with a clear Parse error and deletes any file made for it.
///
/// The render starts when the image is uploaded (`prerender`, told by `FileService.onUploaded`),
/// not when the save comes: a Parse client uploads the file, then saves the object naming it, and
/// that save takes what was made meanwhile. Under the 64-client mixed load (tmpfs) the overall p99
/// was lower in 5 of 6 runs alternating with the build before, by a median of 6 ms; a phone
/// photo's save no longer waits for its whole render.
public final class ThumbnailService: Sendable {
    public struct Sizes: Sendable {
        /// Longest edge of `thumbnail`, in pixels.
        public var thumbnail: Int = 256
        /// Longest edge of `display`, in pixels.
        public var display: Int = 1080
        public init(thumbnail: Int = 256, display: Int = 1080) { self.thumbnail = thumbnail; self.display = display }
    }

    public let files: FileService
    public let sizes: Sizes
    public let options: ThumbnailOptions
    let pool: WorkerPool
    let logger: Logger
    /// How long a save waits for its render to start (`--render-wait-limit`): behind a backlog of renders
    /// (a burst of large photos) it sends nothing meanwhile, and clients give up on a silent request
    /// (curl's stall limit in the CLI: 30 s).
    public let renderWaitLimit: Duration

    /// The default `renderWaitLimit`: 20 s, within the 30 s of silence that clients commonly allow.
    public static let defaultRenderWaitLimit = Duration.seconds(20)
    /// `Retry-After` of a save refused because its render had not started, in seconds: the wait limit
    /// (the render queue was at least that long), rounded up, from 1 to 5. The retry takes the render
    /// queued for it.
    var busyRetryAfterSeconds: Int { min(5, max(1, Int(renderWaitLimit.inSeconds.rounded(.up)))) }

    /// Render threads when none are asked for (`--thumbnail-threads`): one per core.
    public static var defaultConcurrency: Int { ProcessInfo.processInfo.activeProcessorCount }

    public init(files: FileService, sizes: Sizes = Sizes(), options: ThumbnailOptions = ThumbnailOptions(),
                concurrency: Int = ThumbnailService.defaultConcurrency,
                renderWaitLimit: Duration = ThumbnailService.defaultRenderWaitLimit, logger: Logger) {
        self.files = files; self.sizes = sizes; self.options = options; self.logger = logger
        self.renderWaitLimit = renderWaitLimit
        pool = WorkerPool(threadCount: max(1, concurrency), name: "thumbnail")
    }

    deinit {
        // Its threads end once the renders queued are done.
        pool.stop()
    }

    /// The fields made from `image`, which go when it changes.
    public static let derivedFileFields = ["thumbnail", "display"]

    /// When `body` sets `image` to a File: the derived fields (`thumbnail`, `display`, `width`,
    /// `height`) in wire form, owned by the photo's author, an undo that deletes the made files,
    /// and (on an update) an `afterSave` that deletes the derived files the new ones replace.
    /// When it deletes `image`, the derived fields and their files go too. A body without `image`
    /// (the object write path drops an `image` equal to the stored one) does no imaging work.
    /// - Throws: 111 when the file was sent with an image type its bytes contradict (`FileService.imageTypeMismatch`);
    ///   111 `Unsupported image type: …` / `Image too large: …` / `Corrupt … image: …` /
    ///   `Truncated … image: …` (the imaging module's sentences) for input the thumbnailer refuses; 130 when the image file doesn't exist or storing fails;
    ///   124 (HTTP 503, `Retry-After`) when the render had not started after `renderWaitLimit`: nothing
    ///   was stored, and the render stays queued for the retry.
    public func thumbnailFields(for body: [String: JSON], original: StoredObject? = nil, auth: AuthContext = .master) throws(ParseError) -> SaveHookOutcome {
        guard let image = body["image"] else { return SaveHookOutcome() }
        let replaced = Self.derivedFileFields.compactMap { original?.fields[$0]?["name"]?.stringValue }
        let objectId = original?.objectId ?? ""
        let remove: @Sendable () -> Void = { [files, logger] in
            files.deleteUnreferenced(replaced, className: WallSchema.imageClass, fields: WallSchema.fileFields, excluding: objectId, logger: logger)
        }
        let removeReplaced = replaced.isEmpty ? nil : remove
        if image["__op"]?.stringValue == "Delete" || image.isNull {
            let delete: JSON = ["__op": "Delete"]
            return SaveHookOutcome(fields: ["thumbnail": delete, "display": delete, "width": delete, "height": delete],
                                   afterSave: removeReplaced)
        }
        guard image.parseType == "File", let name = image["name"]?.stringValue else {
            throw ParseError(.incorrectType, "WallImage.image must be a File.")
        }
        guard let (record, location) = try files.lookup(name: name) else {
            throw ParseError(.fileSaveError, "The image file \(name) does not exist.")
        }
        // A wall image is what it says it is: a file whose declared type its bytes contradict is refused.
        if let mismatch = FileService.imageTypeMismatch(record) { throw mismatch }
        let made = try render(path: location.path, name: name)
        let base = Self.baseName(name)
        // The photo's author owns its derived files.
        let owner = auth.isMaster ? (body["user"] ?? original?.fields["user"])?["objectId"]?.stringValue : auth.userId
        var stored: [String] = []
        let undo: @Sendable ([String]) -> Void = { [files] names in for n in names { try? files.delete(name: n) } }
        do {
            let records = try files.storeUnclaimed([
                (made.display.bytes, "\(base)_display.\(made.display.format.fileExtension)", made.display.mimeType),
                (made.thumbnail.bytes, "\(base)_thumbnail.\(made.thumbnail.format.fileExtension)", made.thumbnail.mimeType),
            ], owner: owner)
            let (display, thumb) = (records[0], records[1])
            stored = records.map(\.name)
            let names = stored
            let claimAndRemove: @Sendable () -> Void = { [files, logger] in
                files.claim(names, logger: logger)
                removeReplaced?()
            }
            return SaveHookOutcome(fields: [
                "thumbnail": ["__type": "File", "name": .string(thumb.name), "url": .string(files.config.fileURL(thumb.name))],
                "display": ["__type": "File", "name": .string(display.name), "url": .string(files.config.fileURL(display.name))],
                "width": .number(Double(made.thumbnail.sourceUprightWidth)),
                "height": .number(Double(made.thumbnail.sourceUprightHeight)),
            ], undo: { undo(names) }, afterSave: claimAndRemove)
        } catch {
            undo(stored)
            throw error
        }
    }

    /// The client's name without the 32-hex prefix and extension, for readable thumbnail names.
    static func baseName(_ stored: String) -> String {
        var n = Substring(stored)
        if n.count > 33, n.dropFirst(32).first == "_" { n = n.dropFirst(33) }
        if let dot = n.lastIndex(of: "."), dot != n.startIndex { n = n[..<dot] }
        let safe = n.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        return safe.isEmpty ? "image" : String(safe.prefix(64))
    }

    struct Made: Sendable { var display: Thumbnail; var thumbnail: Thumbnail }

    /// One render on the pool: signalled when it starts and when its result is set.
    final class Render: Sendable {
        let started = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        /// When it was queued, or put back for a retry (a prerender unclaimed for `prerenderLifetime`
        /// is dropped).
        let keptSince = Mutex(ContinuousClock.now)
        /// An idle render thread was woken for it when it was queued (`WorkerPool.submit`): it did not
        /// wait behind other renders.
        let wokeIdleThread = Atomic<Bool>(false)
    }

    /// Renders started when an image was uploaded (`prerender`), by file name, until a save
    /// takes theirs or they expire.
    let prerendered = Mutex<[String: Render]>([:])

    /// The prerenders kept at once: a new upload past them is not prerendered. Each holds its
    /// result, a display image (up to `Sizes.display` pixels, a few hundred KB of JPEG) and a
    /// thumbnail, until taken or expired (at the next upload).
    static let prerenderLimit = 32
    /// How long a prerender waits to be taken by a save before it is dropped.
    static let prerenderLifetime = Duration.seconds(60)
    /// The stored types `prerender` renders (those the thumbnailer reads).
    static let prerenderTypes: Set<String> = ["image/jpeg", "image/png", "image/webp", "image/heic", "image/heif", "image/avif"]

    /// Starts rendering an uploaded image's display and thumbnail at once, on the render pool, so
    /// that the `WallImage` save naming it (a client's next request, Parse's two-step photo
    /// upload) finds them made or under way (`render`) instead of rendering then: the save no
    /// longer waits for a render thread and the render. The files are stored by that save as
    /// before (its owner, its undo); a prerender no save takes stores nothing and is dropped after
    /// `prerenderLifetime`. Not for a file whose bytes contradict its declared type (a save refuses
    /// it), one of another type, or when `prerenderLimit` prerenders are waiting already.
    public func prerender(_ record: FileRecord) {
        guard Self.prerenderTypes.contains(record.contentType), record.declaredType == nil else { return }
        let render = Render()
        guard keep(render, as: record.name, replacing: true) else { return }
        let name = record.name
        submit(render, path: { [files] () throws(ImagingError) -> String in
            // The file's place is found on the render thread: for object storage it may be a download.
            guard let location = try? files.location(of: name) else { throw ImagingError(code: .readFailed, message: "The image file \(name) is gone.") }
            return location.path
        }, then: { [logger] outcome in
            if case .failure(let e) = outcome {
                logger.debug("prerendered", ["file": name, "error": e.message])
            } else {
                logger.debug("prerendered", ["file": name])
            }
        })
    }

    /// Keeps `render` as the prerender of the file `name`, after dropping the expired ones (at most
    /// `prerenderLimit` entries: expiring them as each comes is cheap), unless `prerenderLimit` are kept
    /// or, without `replacing`, one is kept for `name` already. - Returns: whether it was kept.
    private func keep(_ render: Render, as name: String, replacing: Bool) -> Bool {
        prerendered.withLock { d -> Bool in
            let now = ContinuousClock.now
            d = d.filter { entry in entry.value.keptSince.withLock { now - $0 } < Self.prerenderLifetime }
            guard d.count < Self.prerenderLimit, replacing || d[name] == nil else { return false }
            d[name] = render
            return true
        }
    }

    /// Queues `render` on the pool: `path` gives the file, then one decode makes both sizes;
    /// `then` sees the outcome once it is set.
    private func submit(_ render: Render, path: @escaping @Sendable () throws(ImagingError) -> String,
                        then: (@Sendable (Result<Made, ImagingError>) -> Void)? = nil) {
        let sizes = sizes, options = options
        let woke = pool.submit {
            render.started.signal()
            let outcome = Result { () throws(ImagingError) -> Made in
                let t = try Thumbnailer.makeThumbnails(fromFile: try path(), longestEdges: [sizes.display, sizes.thumbnail], options: options)
                return Made(display: t[0], thumbnail: t[1])
            }
            render.result.set(outcome)
            render.done.signal()
            then?(outcome)
        }
        render.wokeIdleThread.store(woke, ordering: .relaxed)
    }

    /// Decodes once on the pool and makes both sizes, or takes the prerender of `name` (`prerender`).
    /// A prerender that could not read the file (object storage unreachable then) is done again.
    func render(path: String, name: String) throws(ParseError) -> Made {
        if let prerendered = prerendered.withLock({ $0.removeValue(forKey: name) }) {
            let outcome = try wait(for: prerendered, name: name)
            if case .failure(let e) = outcome, e.code == .readFailed {
                logger.debug("prerender could not read the file; rendering again", ["file": name])
            } else {
                logger.debug("thumbnails from the upload's prerender", ["file": name])
                return try made(outcome, name: name)
            }
        }
        let render = Render()
        submit(render, path: { path })
        return try made(wait(for: render, name: name), name: name)
    }

    /// Waits for `render`'s result (the render of the file `name`). A render queued behind others (no
    /// idle render thread took it) that has not started logs "a save waits for a render thread" at debug
    /// level first: a backlog of renders shows there.
    /// - Throws: 124 (HTTP 503, `Retry-After`) when the render has not started after `renderWaitLimit`.
    ///   It stays queued, kept as a prerender of `name` (its time restarts; not when `prerenderLimit`
    ///   are kept already), so the client's retry takes it instead of queueing the same work again.
    private func wait(for render: Render, name: String) throws(ParseError) -> Result<Made, ImagingError> {
        let started = render.started, done = render.done
        // While the render waits for a render thread, this request gives its worker slot back
        // (`WorkerPool.blocking`): it uses no CPU, and a slot held through a backlog of renders made every
        // other request (a GET of one object) queue behind a burst of large photos, for seconds. While
        // the render runs, the slot is held: the render is this machine's CPU work, and a slot given
        // back would only admit more work to the same cores (the mixed load's p99 rose by 6-9 ms).
        if started.wait(timeout: .now()) == .timedOut {
            if !render.wokeIdleThread.load(ordering: .relaxed) { logger.debug("a save waits for a render thread", ["file": name]) }
            let limit = renderWaitLimit
            let startedInTime = WorkerPool.blocking { started.wait(timeout: .now() + limit.inSeconds) == .success }
            if !startedInTime {
                render.keptSince.withLock { $0 = .now }
                let kept = keep(render, as: name, replacing: false)
                logger.notice("a save gave up waiting for its render to start" + (kept ? "; the render stays queued for the retry" : ""),
                              ["file": name, "waited.s": "\(limit.inSeconds)"])
                let after = busyRetryAfterSeconds
                throw ParseError(.timeout, "The server is busy making thumbnails. Nothing was saved; try again in \(after) s.",
                                 status: 503, retryAfterSeconds: after)
            }
        }
        done.wait()
        return render.result.get()!
    }

    private func made(_ outcome: Result<Made, ImagingError>, name: String) throws(ParseError) -> Made {
        switch outcome {
        case .success(let m): return m
        case .failure(let e): throw Self.parseError(e, name: name)
        }
    }

    static func parseError(_ e: ImagingError, name: String) -> ParseError {
        switch e.code {
        // The imaging messages are whole sentences for people already ("Unsupported image type: GIF. …").
        case .unsupportedType, .tooLarge, .corrupt, .truncated: return ParseError(.incorrectType, e.message, cause: e)
        case .decoderMemoryExceeded: return ParseError(.incorrectType, "Image is too large to decode: \(e.message)", cause: e)
        case .readFailed: return ParseError(.fileSaveError, "The image file \(name) could not be read.", cause: e)
        default: return ParseError(.internalServerError, "Internal server error.", cause: e)
        }
    }
}

/// Hands a result from a pool thread to the waiting caller (ordered by the semaphore).
final class ResultBox: @unchecked Sendable {
    // @unchecked Sendable: written once on the pool thread before `done.signal()`, read after `done.wait()`.
    private var value: Result<ThumbnailService.Made, ImagingError>?
    func set(_ v: Result<ThumbnailService.Made, ImagingError>) { value = v }
    func get() -> Result<ThumbnailService.Made, ImagingError>? { value }
}
