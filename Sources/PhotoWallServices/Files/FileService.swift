import Foundation
import Synchronization
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallImaging
import PhotoWallStorage

/// Parse files: validated names, streamed storage, metadata, download and delete.
///
/// A file becomes visible only once its bytes are durable and its metadata row is committed;
/// until then a failed or aborted upload leaves nothing behind.
/// - Source: parse-rest-api.md §5; parse-server `FilesController`/`FilesRouter`.
public final class FileService: Sendable {
    /// File metadata.
    let records: any FileRecordStore
    /// Objects, to find those still referencing a file (unclaimed sweep, delete).
    let objects: any ObjectStore
    /// The bytes. Public while REST reads `directDownloadURL` through it.
    public let store: any FileStore
    public let config: ServerConfig

    public init(records: any FileRecordStore, objects: any ObjectStore, store: any FileStore, config: ServerConfig) {
        self.records = records; self.objects = objects; self.store = store; self.config = config
    }

    /// Called with each file a client uploaded, once its bytes are durable and its record
    /// committed: a `POST /files` (`finish`) and a finished resumable upload
    /// (`UploadService.complete`), not the files the server makes (`store`, `storeUnclaimed`).
    private let uploadObservers = Mutex<[@Sendable (FileRecord) -> Void]>([])

    /// Adds `observer` to those told of each uploaded file (see `uploadObservers`). It runs on the
    /// request's thread before the client's answer is sent, so it must only hand work on.
    public func onUploaded(_ observer: @escaping @Sendable (FileRecord) -> Void) {
        uploadObservers.withLock { $0.append(observer) }
    }

    /// Tells the observers of `onUploaded` about `record`. Internal: only this module's upload
    /// paths (`finish`, `UploadService.complete`) announce a file as uploaded.
    func uploaded(_ record: FileRecord) {
        for observer in uploadObservers.withLock({ $0 }) { observer(record) }
    }

    /// The longest client file name accepted, in bytes of UTF-8 (what Linux, macOS and Windows file
    /// systems allow for one name).
    public static let maxNameBytes = 255

    /// Checks a client file name. Any name a phone or an operating system makes is accepted: Unicode
    /// (`café.jpg`, `灯泡.jpeg`), spaces, parentheses, apostrophes, long names. Refused with 122:
    /// an empty name (`Filename not provided.`), one over `maxNameBytes` bytes of UTF-8 (`Filename too
    /// long.`), and (`Filename contains invalid characters.`) one starting with `.` (`.`, `..`, hidden
    /// files), containing `/` or `\` (traversal), a control character (C0, DEL, C1: NUL included), a
    /// bidirectional override (U+202A–U+202E, U+2066–U+2069: they disguise an extension) or U+FFFD
    /// (bytes that were not UTF-8).
    public static func validate(name: String) throws(ParseError) {
        guard !name.isEmpty else { throw ParseError(.invalidFileName, "Filename not provided.") }
        guard name.utf8.count <= maxNameBytes else { throw ParseError(.invalidFileName, "Filename too long.") }
        let refused = name.hasPrefix(".") || name.unicodeScalars.contains { c in
            let v = c.value
            return v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2F || v == 0x5C || (0x202A...0x202E).contains(v)
                || (0x2066...0x2069).contains(v) || v == 0xFFFD
        }
        if refused { throw ParseError(.invalidFileName, "Filename contains invalid characters.") }
    }

    /// The stored form of a valid client name: ASCII letters, digits and `._-` only. Letters are
    /// transliterated to ASCII where ICU can (`café` → `cafe`, `灯泡` → `deng_pao`, `’` → `_`), every
    /// other run of characters becomes one `_`; the extension (up to 16 letters or digits after the
    /// last `.`) is kept, the rest cut to 100 bytes; `file` when nothing is left.
    public static func safeForm(of name: String) -> String {
        // ASCII is its own transliteration: skip ICU, whose transliterator data (about 3 MiB, mapped
        // on first use) would otherwise be paged in by the first upload.
        let latin = name.utf8.allSatisfy { $0 < 0x80 } ? name
            : name.applyingTransform(StringTransform(rawValue: "Any-Latin; Latin-ASCII"), reverse: false) ?? name
        // On UTF-8 bytes: every kept character is ASCII, so a byte is a character here (a scalar ICU
        // left non-ASCII is a run of bytes that becomes one `_`, as the scalar would). 9.7 µs → 0.24 µs
        // for `small.jpg` against the same steps on `Character`s, which were 1.2% of the mixed load's CPU.
        func isAlphanumeric(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) }
        let underscore = UInt8(ascii: "_"), dot = UInt8(ascii: "."), hyphen = UInt8(ascii: "-")
        var mapped: [UInt8] = []
        mapped.reserveCapacity(latin.utf8.count)
        for b in latin.utf8 {
            if isAlphanumeric(b) || b == dot || b == hyphen || b == underscore {
                mapped.append(b)
            } else if mapped.last != underscore {
                mapped.append(underscore)
            }
        }
        var baseEnd = mapped.count, ext: ArraySlice<UInt8> = []
        if let lastDot = mapped.lastIndex(of: dot) {
            let candidate = mapped[(lastDot + 1)...]
            if !candidate.isEmpty, candidate.count <= 16, candidate.allSatisfy(isAlphanumeric) { baseEnd = lastDot; ext = candidate }
        }
        var start = 0, end = baseEnd
        while start < end, mapped[start] == underscore || mapped[start] == dot || mapped[start] == hyphen { start += 1 }
        while end > start, mapped[end - 1] == underscore || mapped[end - 1] == dot { end -= 1 }
        var out = start == end ? Array("file".utf8) : Array(mapped[start..<min(end, start + 100)])
        if !ext.isEmpty { out.append(dot); out += ext }
        return String(decoding: out, as: UTF8.self)
    }

    /// Starts an upload of a file named `name` (validated) with the client's `Content-Type`, owned
    /// by `owner` (the uploader's `_User` objectId; nil for the master key).
    ///
    /// The stored name is `<32 hex>_<safe form of name>` (see `safeForm`), with `.<ext>` appended when
    /// the name has no known extension and the type has one; the client's name is kept in the record
    /// (`FileRecord.originalName`). The stored type comes from the first bytes for the image types we
    /// know (see `storedType`), else the sent type, else a guess from the name.
    /// - Throws: 122 for a bad name; 130 when the store can't accept it.
    public func beginUpload(name: String, contentType: String?, owner: String? = nil) throws(ParseError) -> FileUpload {
        try Self.validate(name: name)
        let sentType = Self.mediaType(contentType)
        let stored = Self.storedName(for: name, contentType: sentType)
        let type = sentType ?? MimeTypes.type(forName: stored) ?? "application/octet-stream"
        return try FileUpload(name: stored, originalName: name, contentType: type, owner: owner, writer: try store.makeWriter(for: stored))
    }

    /// `image/jpeg` from `image/jpeg; charset=…`; nil when empty.
    static func mediaType(_ contentType: String?) -> String? {
        contentType.map { ($0.split(separator: ";").first ?? "").trimmingWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `<32 hex>_<safe form>`, with `.<ext>` appended when `name` has no known extension and the type has one.
    /// `prefix` is the 32 hex (random by default).
    static func storedName(for name: String, contentType: String?, prefix: String = ParseIdentifier.hex(byteCount: 16)) -> String {
        var finalName = safeForm(of: name)
        if MimeTypes.type(forName: finalName) == nil, let t = mediaType(contentType), let ext = MimeTypes.extensionByType[t.lowercased()] {
            finalName += "." + ext
        }
        return prefix + "_" + finalName
    }

    /// How many leading bytes `storedType` looks at (the sniffer's SVG window; binary signatures need 32).
    public static let sniffBytes = 4096

    /// The image types recognised from the bytes, whose type then replaces the declared one.
    static let sniffedImageTypes: Set<ImageType> = [.jpeg, .png, .gif, .webp, .avif, .heic, .bmp, .tiff]

    /// The type to store for a file that starts with `firstBytes` (up to `sniffBytes`) and was sent as
    /// `declared`: the sniffed type when the bytes are an image type we know (`ImageSniffer`), else
    /// `declared`. - Returns: that type, and `declared` again when it names another image type (a
    /// GIF sent as `image/jpeg`): a wall image refuses such a file (`imageTypeMismatch`).
    public static func storedType(declared: String, firstBytes: [UInt8]) -> (type: String, mismatch: String?) {
        let sniffed = ImageSniffer.sniff(firstBytes)
        guard sniffedImageTypes.contains(sniffed) else { return (declared, nil) }
        return (sniffed.mimeType, declaredMismatch(declared: declared, stored: sniffed.mimeType))
    }

    /// `declared` when it names an image type other than `stored` (aliases such as `image/jpg` agree).
    public static func declaredMismatch(declared: String?, stored: String) -> String? {
        guard let declared else { return nil }
        let said = canonicalImageType(declared)
        return said.hasPrefix("image/") && said != canonicalImageType(stored) ? declared : nil
    }

    /// `image/jpeg` for its aliases (`image/jpg`, `image/pjpeg`), `image/heic` for HEIF's, lowercase.
    static func canonicalImageType(_ type: String) -> String {
        let t = (mediaType(type) ?? "").lowercased()
        switch t {
        case "image/jpg", "image/pjpeg": return "image/jpeg"
        case "image/x-png": return "image/png"
        case "image/heif", "image/heic-sequence", "image/heif-sequence": return "image/heic"
        case "image/avif-sequence": return "image/avif"
        case "image/x-ms-bmp": return "image/bmp"
        default: return t
        }
    }

    /// 111 when a file's declared type disagreed with its bytes: a wall image must be what it says.
    public static func imageTypeMismatch(_ record: FileRecord) -> ParseError? {
        guard let declared = record.declaredType else { return nil }
        return ParseError(.incorrectType, "The image was sent as \(declared) but its bytes are \(record.contentType).")
    }

    /// Makes an upload durable and visible.
    /// - Returns: `{"name","url"}` as the REST API answers.
    /// - Throws: 130 `Invalid file upload.` for an empty body; 130 when storing fails.
    public func finish(_ upload: FileUpload) throws(ParseError) -> FileRecord {
        guard upload.writer.byteCount > 0 else {
            upload.abort()
            throw ParseError(.fileSaveError, "Invalid file upload.")
        }
        let sha256: String
        do {
            sha256 = try upload.sha256()
            try upload.writer.commit()
        } catch {
            upload.abort()
            throw error
        }
        let (type, mismatch) = Self.storedType(declared: upload.contentType, firstBytes: upload.firstBytes)
        let record = FileRecord(name: upload.name, contentType: type, byteCount: upload.writer.byteCount,
                                sha256: sha256, createdAt: ParseDate.now(),
                                originalName: upload.originalName, declaredType: mismatch, owner: upload.owner)
        do {
            try records.insertFile(record)
        } catch {
            _ = try? store.delete(upload.name)
            throw ParseError(.fileSaveError, "Could not store file: \(upload.name).", cause: error)
        }
        uploaded(record)
        return record
    }

    /// Stores bytes made by the server (thumbnails) as a Parse file named `<32 hex>_<name>`, owned by `owner`.
    /// - Throws: 130 when storing fails (nothing is left behind).
    public func store(_ bytes: [UInt8], name: String, contentType: String, owner: String? = nil) throws(ParseError) -> FileRecord {
        let upload = try beginUpload(name: name, contentType: contentType, owner: owner)
        let failure = bytes.withUnsafeBytes { b -> ParseError? in
            do throws(ParseError) { try upload.write(b); return nil } catch { return error }
        }
        if let failure {
            upload.abort()
            throw failure
        }
        return try finish(upload)
    }

    /// Stores bytes the server made for an object not stored yet (a photo's thumbnail and display)
    /// as Parse files named `<32 hex>_<name>`, owned by `owner`: the records come first, marked
    /// `unclaimed` (in one commit), then the bytes, so a crash at any point leaves records the orphan
    /// sweep (`removeUnclaimed`) finds. The files' bytes are written and made durable side by side
    /// (their syncs overlap instead of queueing). Call `claim` once the object naming them is stored.
    /// - Returns: the records, in the order of `files`.
    /// - Throws: 130 when storing any of them fails (nothing is left behind).
    public func storeUnclaimed(_ files: [(bytes: [UInt8], name: String, contentType: String)], owner: String?) throws(ParseError) -> [FileRecord] {
        let records = files.map { file in
            FileRecord(name: Self.storedName(for: file.name, contentType: file.contentType), contentType: file.contentType,
                       byteCount: Int64(file.bytes.count), sha256: Digest.hash(.sha256, file.bytes).hexString,
                       createdAt: ParseDate.now(), owner: owner, unclaimed: true)
        }
        do {
            try self.records.insertFiles(records)
        } catch {
            throw ParseError(.fileSaveError, "Could not store file: \(records.map(\.name).joined(separator: ", ")).", cause: error)
        }
        let failures = Mutex<[Int: ParseError]>([:])
        DispatchQueue.concurrentPerform(iterations: files.count) { i in
            do throws(ParseError) {
                let writer = try store.makeWriter(for: records[i].name)
                let failure = files[i].bytes.withUnsafeBytes { b -> ParseError? in
                    do throws(ParseError) { try writer.write(b); try writer.commit(); return nil } catch { return error }
                }
                if let failure {
                    writer.abort()
                    throw failure
                }
            } catch {
                failures.withLock { $0[i] = error }
            }
        }
        if let failure = failures.withLock({ $0.sorted { $0.key < $1.key }.first?.value }) {
            for (i, record) in records.enumerated() {
                if failures.withLock({ $0[i] }) == nil { _ = try? store.delete(record.name) }
                _ = try? self.records.deleteFile(named: record.name)
            }
            throw failure
        }
        return records
    }

    /// Marks server-made files as belonging to a stored object (see `storeUnclaimed`). Failures are
    /// logged: the sweep keeps files an object names.
    public func claim(_ names: [String], logger: Logger) {
        do { try records.claimFiles(named: names) } catch {
            logger.warning("could not mark files as claimed", ["files": names.joined(separator: ","), "cause": "\(error)"])
        }
    }

    /// Removes files still unclaimed that were recorded before `cutoff` and that no object of
    /// `className` names in `fields` (a crash between making a photo's thumbnails and storing the
    /// photo); named ones are claimed instead. - Returns: how many were removed.
    @discardableResult
    public func removeUnclaimed(before cutoff: ParseDate, className: String, fields: [String], logger: Logger) -> Int {
        var removed = 0
        do throws(ParseError) {
            while true {
                let names = try records.unclaimedFileNames(before: cutoff, limit: 200)
                if names.isEmpty { break }
                var named: [String] = []
                for name in names {
                    let byName: PhotoWallStorage.Predicate = .or(fields.map { .compare("\($0).name", .eq, .string(name)) })
                    if try !objects.find(StoredQuery(className: className, predicate: byName, limit: 1, readers: nil)).isEmpty {
                        named.append(name)
                        continue
                    }
                    _ = try records.deleteFile(named: name)
                    _ = try? store.delete(name)
                    removed += 1
                }
                try records.claimFiles(named: named)
            }
        } catch {
            logger.warning("unclaimed file sweep failed", ["cause": "\(error)"])
        }
        if removed > 0 { logger.info("removed unclaimed files", ["count": "\(removed)"]) }
        return removed
    }

    /// A stored file's metadata (no byte is touched: on S3, nothing is downloaded), or nil.
    public func record(named name: String) throws(ParseError) -> FileRecord? {
        try records.file(named: name)
    }

    /// Where a stored file's bytes are, for sending them (on S3, fetched into the read cache first), or nil.
    public func location(of name: String) throws(ParseError) -> FileLocation? {
        try store.location(of: name)
    }

    /// A URL that serves the file's bytes directly (an S3 presigned URL), or nil to have PhotoWall send
    /// them. Only for a request that passed PhotoWall's checks. See `FileStore.directDownloadURL`.
    public func directDownloadURL(for name: String, contentType: String) -> String? {
        store.directDownloadURL(for: name, contentType: contentType)
    }

    /// Metadata and location of a stored file, or nil.
    public func lookup(name: String) throws(ParseError) -> (FileRecord, FileLocation)? {
        guard let record = try records.file(named: name), let location = try store.location(of: name) else { return nil }
        return (record, location)
    }

    /// Deletes a file (metadata first, so it stops being served at once).
    /// - Throws: 153 `Could not delete file.` when there was no such file or the store failed.
    public func delete(name: String) throws(ParseError) {
        let hadRecord = try records.deleteFile(named: name)
        let hadBytes = (try? store.delete(name)) ?? false
        guard hadRecord || hadBytes else { throw ParseError(.fileDeleteError, "Could not delete file.") }
    }

    /// Deletes each named file (record, then bytes) that no object of `className` other than
    /// `excluding` names in one of `fields` (files may be shared, e.g. by seeded photos).
    /// Failures are logged, not thrown: the caller's own change is already stored.
    /// - Returns: the names deleted.
    @discardableResult
    public func deleteUnreferenced(_ names: [String], className: String, fields: [String], excluding objectId: String,
                                   logger: Logger) -> [String] {
        var deleted: [String] = []
        for name in Set(names).sorted() {
            do throws(ParseError) {
                let byName: PhotoWallStorage.Predicate = .or(fields.map { .compare("\($0).name", .eq, .string(name)) })
                let others = try objects.find(StoredQuery(className: className, predicate: .and([
                    byName, .compare("objectId", .ne, .string(objectId)),
                ]), limit: 1, readers: nil))
                guard others.isEmpty else { continue }
                try delete(name: name)
                deleted.append(name)
            } catch {
                if error.code == .fileDeleteError { continue }  // already gone
                logger.warning("could not delete a file", ["file": name, "cause": "\(error)"])
            }
        }
        return deleted
    }
}

/// One file upload in progress: bytes go to a private temporary while their SHA-256 is computed
/// (`ReadBackDigests`: read back and hashed on other threads where the store allows).
///
/// `@unchecked Sendable`: an upload is used by one request at a time — the engine thread writes the
/// body, then (after the body is complete, ordered by the engine's suspend/resume) one worker
/// thread finishes it, or, after the last write, one thread aborts it (a worker after a disconnect,
/// the engine thread for a body over its limit). It is never touched concurrently (`digests` is
/// thread-safe itself).
public final class FileUpload: @unchecked Sendable {
    public let name: String
    /// The client's name, as sent.
    public let originalName: String
    /// The declared (or guessed) type; the stored one may come from the bytes (`FileService.storedType`).
    public let contentType: String
    /// The `FileRecord.owner` the file gets.
    public let owner: String?
    let writer: any FileWriter
    /// The body's SHA-256, computed behind the writes; the body is its one range.
    let digests: ReadBackDigests
    let body: ReadBackDigests.Segment
    /// The first `FileService.sniffBytes` bytes, kept as they stream for the type sniffer.
    private(set) var firstBytes: [UInt8] = []

    /// - Throws: 130 when the store's temporary can't be read back.
    init(name: String, originalName: String, contentType: String, owner: String?, writer: any FileWriter) throws(ParseError) {
        self.name = name; self.originalName = originalName; self.contentType = contentType; self.owner = owner; self.writer = writer
        do {
            digests = ReadBackDigests(startingAt: 0, runningState: ResumableSHA256().state, reader: try writer.openReader())
        } catch {
            writer.abort()
            throw error
        }
        body = digests.addSegment(start: 0, length: nil, chunk: nil)
    }

    public var byteCount: Int64 { writer.byteCount }

    /// Appends body bytes. - Throws: 130 when the disk write fails.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        if firstBytes.count < FileService.sniffBytes {
            firstBytes.append(contentsOf: bytes.prefix(FileService.sniffBytes - firstBytes.count))
        }
        try writer.write(bytes)
        digests.wrote(bytes, to: body, endingAt: writer.byteCount)
    }

    /// The body's SHA-256 in lowercase hex, once every byte written is hashed.
    /// - Throws: 130 when the bytes could not be read back.
    func sha256() throws(ParseError) -> String {
        let sums = try digests.digests(of: body, endingAt: writer.byteCount)
        guard let state = sums.running, let digest = ResumableSHA256(state: state) else {
            throw ParseError(.internalServerError, "Internal server error.")
        }
        return digest.finalize().hexString
    }

    /// Discards the upload (client gone, limit exceeded, or a failure).
    public func abort() { writer.abort() }
}
