import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// Streams a PATCH body (or a creation request's first chunk) into an `UploadAppend`; for a creation
/// it also keeps the record made, which the answer reports even when that chunk is refused.
final class UploadAppendSink: RequestBodySink {
    let append: UploadAppend
    let created: UploadState?
    init(_ append: UploadAppend, created: UploadState? = nil) { self.append = append; self.created = created }
    func write(_ bytes: UnsafeRawBufferPointer) throws { try append.write(bytes) }
    func abort() { append.abort() }
    func disconnected() { append.disconnected() }
    func attach(_ peer: PeerConnection) { append.attach(clientHungUp: { peer.hasHungUp() }) }
}

/// The tus 1.0.0 server at `<mount>/uploads`, with the same credentials as `/files`.
/// - Source: tus 1.0.0 protocol; social-and-uploads.md §4.1.
extension ParseAPI {
    static let tusVersion = "1.0.0"
    static let tusExtensions = "creation,creation-with-upload,creation-defer-length,termination,checksum,expiration"

    func registerUploads(on router: inout Router, uploads: UploadService) {
        let base = config.mountPath + "/uploads"
        router.add("OPTIONS", base) { [self] _ in .immediate(tusOptions()) }
        router.add("OPTIONS", base + "/:id") { [self] _ in .immediate(tusOptions()) }
        router.add("POST", base) { [self] head in tusCreatePlan(head, uploads) }
        router.add("POST", base + "/:id") { [self] head in
            // X-HTTP-Method-Override for clients that cannot send PATCH or DELETE (tus §Core).
            var head = head
            switch head.headers["X-HTTP-Method-Override"]?.uppercased() {
            case "PATCH"?: head.method = "PATCH"; return tusPatchPlan(head, uploads)
            case "DELETE"?: head.method = "DELETE"; return tusDeletePlan(head, uploads)
            case "HEAD"?: return tusHeadPlan(head, uploads)
            default: return .refuse(UploadError.badRequest("POST to an upload URL needs X-HTTP-Method-Override."))
            }
        }
        router.add("HEAD", base + "/:id") { [self] head in tusHeadPlan(head, uploads) }
        router.add("PATCH", base + "/:id") { [self] head in tusPatchPlan(head, uploads) }
        router.add("DELETE", base + "/:id") { [self] head in tusDeletePlan(head, uploads) }
    }

    // MARK: responses

    /// The headers of every tus answer: CORS, `Tus-Resumable`, `Cache-Control: no-store`, then `extra`.
    static func tusHeaders(_ extra: [(String, String)] = []) -> HTTPHeaders {
        var h = HTTPHeaders(Render.corsHeaders)
        h.add("Tus-Resumable", Self.tusVersion)
        h.add("Cache-Control", "no-store")
        for (k, v) in extra { h.add(k, v) }
        return h
    }

    /// `OPTIONS`: what this server supports (tus §OPTIONS), which is also the CORS preflight of a
    /// browser's `PATCH`, `HEAD` or `DELETE` of an upload.
    func tusOptions() -> Response {
        Response(status: 204, headers: Self.tusHeaders([
            ("Tus-Version", Self.tusVersion), ("Tus-Extension", Self.tusExtensions),
            ("Tus-Max-Size", "\(config.maxUploadBytes)"), ("Tus-Checksum-Algorithm", UploadService.checksumAlgorithms.joined(separator: ",")),
        ] + Render.preflightHeaders))
    }

    /// Upload state headers: offset, length, metadata, expiry, and the Parse file once complete.
    func uploadHeaders(_ u: UploadState) -> [(String, String)] {
        var h: [(String, String)] = [("Upload-Offset", "\(u.offset)")]
        if let length = u.length { h.append(("Upload-Length", "\(length)")) } else { h.append(("Upload-Defer-Length", "1")) }
        if !u.metadata.isEmpty {
            h.append(("Upload-Metadata", u.metadata.keys.sorted().map { "\($0) \(Base64.encode(Array(u.metadata[$0]!.utf8)))" }.joined(separator: ",")))
        }
        if let name = u.completedName {
            h.append(("X-Parse-File-Name", name))
            h.append(("X-Parse-File-URL", config.fileURL(name)))
        } else {
            h.append(("Upload-Expires", HTTPDate.format(u.expiresAt)))
        }
        return h
    }

    /// Checks `Tus-Resumable` (412 otherwise) and the credentials, as `/files` does.
    func tusAuth(_ head: RequestHead) throws -> AuthContext {
        guard head.headers["Tus-Resumable"] == Self.tusVersion else { throw TusVersionError() }
        let credentials = Credentials(headers: head.headers)
        guard credentials.isAuthorized(config) else { throw PlainError.unauthorized }
        let auth = try authenticate(credentials, segments: ["uploads"])
        guard auth.isMaster || auth.user != nil else { throw ParseError(.fileSaveError, "File upload by public is disabled.") }
        return auth
    }

    static func offsetOctetStream(_ head: RequestHead) -> Bool {
        head.headers["Content-Type"].map { $0.split(separator: ";").first?.trimmingWhitespace() == "application/offset+octet-stream" } ?? false
    }

    static func parseMetadata(_ header: String?) throws -> [String: String] {
        var out: [String: String] = [:]
        guard let header, !header.isEmpty else { return out }
        for pair in header.split(separator: ",") {
            let kv = pair.trimmingWhitespace().split(separator: " ", maxSplits: 1)
            guard let key = kv.first, !key.isEmpty else { throw UploadError.badRequest("Malformed Upload-Metadata.") }
            if kv.count == 2 {
                guard let raw = Base64.decode(kv[1], ignoringUnknownCharacters: true), let value = String(validating: raw, as: UTF8.self) else {
                    throw UploadError.badRequest("Upload-Metadata values must be base64 UTF-8.")
                }
                out[String(key)] = value
            } else {
                out[String(key)] = ""
            }
        }
        return out
    }

    // MARK: creation (+ creation-with-upload)

    func tusCreatePlan(_ routed: RequestHead, _ uploads: UploadService) -> RoutePlan {
        .streamed(maxBodyBytes: config.maxUploadBytes, open: { [self] head -> StreamOpenResult<UploadAppendSink> in
            let auth = try tusAuth(head)
            let length: Int64?
            if head.headers["Upload-Defer-Length"] == "1" {
                length = nil
            } else {
                guard let text = head.headers["Upload-Length"], let l = Int64(text) else {
                    throw UploadError.badRequest("Upload-Length or Upload-Defer-Length: 1 is required.")
                }
                length = l
            }
            let hasBody = (head.contentLength ?? 0) > 0 || head.headers["Transfer-Encoding"] != nil
            if hasBody, !Self.offsetOctetStream(head) { throw UnsupportedMediaType() }
            if hasBody, let length, let n = head.contentLength, Int64(n) > length {
                throw UploadError.tooLarge(maximum: Int(length))
            }
            let record = UploadState(try uploads.create(length: length, metadata: try Self.parseMetadata(head.headers["Upload-Metadata"]), auth: auth))
            if !hasBody { return .respond(createdResponse(record)) }
            let append = try uploads.beginAppend(id: record.id, offset: 0, length: nil, checksum: head.headers["Upload-Checksum"],
                                                 contentLength: head.contentLength.map { Int64($0) }, auth: auth)
            return .sink(UploadAppendSink(append, created: record))
        }, handler: { [self] _, sink in
            do {
                return createdResponse(UploadState(try sink.append.finish()))
            } catch {
                // The upload exists even if its first chunk was refused: answer 201 so the client can resume,
                // except for a checksum mismatch, which the client must see.
                if let e = error as? UploadError, case .checksumMismatch = e { throw error }
                if let record = sink.created { return createdResponse(record) }
                throw error
            }
        })
    }

    func createdResponse(_ u: UploadState) -> Response {
        Response(status: 201, headers: Self.tusHeaders([("Location", config.publicServerURL + "/uploads/" + u.id)] + uploadHeaders(u)))
    }

    // MARK: HEAD, PATCH, DELETE

    /// `HEAD`: the upload's state, once a PATCH on it that is ending has kept what it received
    /// (`UploadService.settledUpload`). Errors have no body (`APIErrorRenderer` drops it).
    func tusHeadPlan(_ routed: RequestHead, _ uploads: UploadService) -> RoutePlan {
        let id = routed.pathParameters["id"] ?? ""
        return .buffered(maxBodyBytes: 0) { [self] request in
            let auth = try tusAuth(request.head)
            let u = try uploads.settledUpload(id: id, auth: auth)
            return Response(status: 200, headers: Self.tusHeaders(uploadHeaders(UploadState(u))))
        }
    }

    func tusPatchPlan(_ routed: RequestHead, _ uploads: UploadService) -> RoutePlan {
        let id = routed.pathParameters["id"] ?? ""
        return .streamed(maxBodyBytes: config.maxUploadBytes, open: { [self] head -> StreamOpenResult<UploadAppendSink> in
            // The most a PATCH may carry is what the upload still lacks; a larger Content-Length gets 413
            // before any body byte is read (and before the credentials are checked). An unknown or
            // foreign upload is refused below. A PATCH at another offset gets 409 below instead, even on a
            // finished upload: the offset is checked before the length (tus 1.0.0 §PATCH, as tusd does).
            // This runs on a worker: the record lookup is a database read.
            let offset = head.headers["Upload-Offset"].flatMap { Int64($0) }
            let limit = max(0, offset.flatMap { uploads.patchLimit(id: id, offset: $0) } ?? config.maxUploadBytes)
            if let length = head.contentLength, length > limit { throw HTTPError.payloadTooLarge }
            let auth = try tusAuth(head)
            guard Self.offsetOctetStream(head) else { throw UnsupportedMediaType() }
            guard let offsetText = head.headers["Upload-Offset"], let offset = Int64(offsetText), offset >= 0 else {
                throw UploadError.badRequest("Upload-Offset is required.")
            }
            let length = head.headers["Upload-Length"].flatMap { Int64($0) }
            do {
                let append = try uploads.beginAppend(id: id, offset: offset, length: length, checksum: head.headers["Upload-Checksum"],
                                                     contentLength: head.contentLength.map { Int64($0) }, auth: auth)
                return .sink(UploadAppendSink(append), maxBodyBytes: limit)
            } catch UploadError.alreadyComplete(let u) {
                // A retried final PATCH whose answer was lost: the upload is done, say so.
                return .respond(Response(status: 204, headers: Self.tusHeaders(uploadHeaders(UploadState(u)))))
            }
        }, handler: { [self] _, sink in
            Response(status: 204, headers: Self.tusHeaders(uploadHeaders(UploadState(try sink.append.finish()))))
        })
    }

    func tusDeletePlan(_ routed: RequestHead, _ uploads: UploadService) -> RoutePlan {
        let id = routed.pathParameters["id"] ?? ""
        return .buffered(maxBodyBytes: 0) { [self] request in
            let auth = try tusAuth(request.head)
            try uploads.terminate(id: id, auth: auth)
            return Response(status: 204, headers: Self.tusHeaders())
        }
    }
}
