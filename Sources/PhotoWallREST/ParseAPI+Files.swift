import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// Streams an upload body into a `FileUpload` (engine thread), then lets the handler finish it.
final class FileUploadSink: RequestBodySink {
    let upload: FileUpload
    init(_ upload: FileUpload) { self.upload = upload }
    func write(_ bytes: UnsafeRawBufferPointer) throws { try upload.write(bytes) }
    func abort() { upload.abort() }
}

extension ParseAPI {
    /// A `POST /files` body declared no bigger than this (64 KiB: a small photo, an avatar) is read
    /// whole before its credentials are checked, then checked, stored and answered in one worker job
    /// (`RoutePlan.streamed(wholeBodiesUpTo:)`); a bigger one is refused from its head and streamed.
    static let wholeFileBodyBytes = 64 << 10

    /// `POST /files/:filename`: credentials and name are checked from the head, before any body
    /// byte is read (except for a body of at most `wholeFileBodyBytes`, read first); the body streams
    /// to a temporary file (never held in memory beyond that); the file becomes visible only when
    /// complete and durable.
    /// - Source: parse-rest-api.md §5 ("Route details", "Who may upload").
    func fileUploadPlan(_ routed: RequestHead) -> RoutePlan {
        let name = routed.pathParameters["filename"] ?? ""
        return .streamed(maxBodyBytes: config.maxUploadBytes, wholeBodiesUpTo: Self.wholeFileBodyBytes,
                         open: { [self] head -> StreamOpenResult<FileUploadSink> in
            let credentials = Credentials(headers: head.headers)
            guard credentials.isAuthorized(config) else { throw PlainError.unauthorized }
            let auth = try authenticate(credentials, segments: ["files"])
            guard auth.isMaster || auth.user != nil else { throw ParseError(.fileSaveError, "File upload by public is disabled.") }
            return .sink(FileUploadSink(try files.beginUpload(name: name, contentType: head.headers["Content-Type"], owner: auth.userId)))
        }, handler: { [self] _, sink in
            let name = try files.finish(sink.upload).name
            let url = config.fileURL(name)
            return Render.json(["name": .string(name), "url": .string(url)], status: 201, headers: [("Location", url)])
        })
    }

    /// `GET /files/:appId/:filename`: no credentials needed (the app id is in the path); supports
    /// a single `Range` (206/416), `ETag` + `If-None-Match` (304), the type stored at upload, and
    /// `X-Content-Type-Options: nosniff` plus a sandboxing CSP so an uploaded page can't run script.
    /// - Throws: 403 for another app id; what the file lookup or the access check throws.
    /// - Source: parse-rest-api.md §2 row 9; RFC 9110 §14 (ranges), §13.1.2 (If-None-Match).
    func fileDownload(_ head: RequestHead, appId: String, name: String) throws -> Response {
        guard appId == config.appId else { throw ParseError(.operationForbidden, "Invalid application ID.", status: 403) }
        // The metadata and the access check come first, and a 304 needs no bytes: on S3 nothing is
        // downloaded into the read cache for a request that won't be sent the file.
        guard let record = try files.record(named: name) else { return Response.text("File not found.", status: 404) }
        if let fileAccess {
            // Wall files are served to the owner's friends only: by a signed URL or by a session.
            var query: [String: String] = [:]
            for (k, v) in head.query { query[k] = v }
            let credentials = Credentials(headers: head.headers)
            let auth = credentials.isAuthorized(config) ? try? authenticate(credentials, segments: ["files"]) : nil
            guard try fileAccess.mayDownload(name, query: query, auth: auth, objects: objects) else { return Response.text("File not found.", status: 404) }
        }
        let etag = "\"\(record.sha256)\""
        var h = HTTPHeaders(Render.corsHeaders)
        h.add("ETag", etag)
        h.add("Accept-Ranges", "bytes")
        h.add("X-Content-Type-Options", "nosniff")
        h.add("Content-Security-Policy", "default-src 'none'; img-src 'self'; media-src 'self'; sandbox")
        h.add("Cache-Control", "private, max-age=86400")
        h.add("Last-Modified", HTTPDate.format(record.createdAt))
        if let inm = head.headers["If-None-Match"], inm.split(separator: ",").contains(where: { $0.trimmingWhitespace() == etag || $0.trimmingWhitespace() == "*" }) {
            return Response(status: 304, headers: h, body: .empty)
        }
        // The S3 store may hand the bytes to S3 itself (presigned URLs): a redirect after the checks.
        if let direct = files.directDownloadURL(for: name, contentType: record.contentType) {
            var r = HTTPHeaders(Render.corsHeaders)
            r.add("Location", direct)
            r.add("Cache-Control", "no-store")
            return Response(status: 302, headers: r, body: .empty)
        }
        h.add("Content-Type", record.contentType)
        if let original = record.originalName { h.add("Content-Disposition", Self.contentDisposition(original: original)) }
        guard let location = try files.location(of: name) else { return Response.text("File not found.", status: 404) }
        let size = location.byteCount
        if let range = head.headers["Range"], head.headers["If-Range"].map({ $0 == etag }) ?? true {
            switch ByteRange.parse(range, size: size) {
            case .satisfiable(let start, let end):
                h.add("Content-Range", "bytes \(start)-\(end)/\(size)")
                return Response(status: 206, headers: h, body: .file(path: location.path, offset: start, length: end - start + 1))
            case .unsatisfiable:
                h.add("Content-Range", "bytes */\(size)")
                return Response(status: 416, headers: h, body: .empty)
            case .ignored:
                break
            }
        }
        return Response(status: 200, headers: h, body: .file(path: location.path, offset: 0, length: size))
    }
}

extension ParseAPI {
    /// `inline; filename*=UTF-8''<original name>` (RFC 6266 §4.3, RFC 8187 §3.2: every byte outside
    /// `attr-char` percent-encoded), so a browser saving the file offers the name the client sent.
    static func contentDisposition(original: String) -> String {
        "inline; filename*=UTF-8''" + percentEncode(original) { b in
            (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || "!#$&+-.^_`|~".utf8.contains(b)
        }
    }
}

/// A single `bytes=` range (RFC 9110 §14.1.2). Multiple ranges are ignored (the whole file is sent).
enum ByteRange: Equatable {
    case satisfiable(Int64, Int64)
    case unsatisfiable
    case ignored

    static func parse(_ header: String, size: Int64) -> ByteRange {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .ignored }
        let spec = header.dropFirst(6).trimmingWhitespace()
        guard let dash = spec.firstIndex(of: "-") else { return .ignored }
        let a = spec[..<dash], b = spec[spec.index(after: dash)...]
        if a.isEmpty {
            guard let n = Int64(b), n > 0 else { return .unsatisfiable }
            return size == 0 ? .unsatisfiable : .satisfiable(max(0, size - n), size - 1)
        }
        guard let start = Int64(a) else { return .ignored }
        let end = b.isEmpty ? size - 1 : (Int64(b).map { min($0, size - 1) } ?? -1)
        guard start < size, end >= start else { return .unsatisfiable }
        return .satisfiable(start, end)
    }
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7).
enum HTTPDate {
    static func format(_ d: ParseDate) -> String {
        let iso = d.iso  // yyyy-MM-ddTHH:mm:ss.SSSZ
        let days = d.millisecondsSince1970 >= 0 ? d.millisecondsSince1970 / 86_400_000 : (d.millisecondsSince1970 - 86_399_999) / 86_400_000
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let c = Array(iso)
        let month = months[Int(String(c[5...6]))! - 1]
        return "\(weekday), \(String(c[8...9])) \(month) \(String(c[0...3])) \(String(c[11...18])) GMT"
    }
}
