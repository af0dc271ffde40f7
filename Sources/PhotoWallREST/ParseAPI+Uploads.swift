import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices
import PhotoWallStorage

/// Streams a PATCH body into an `UploadAppend`.
final class UploadAppendSink: RequestBodySink {
    let append: UploadAppend
    init(_ append: UploadAppend) { self.append = append }
    func write(_ bytes: UnsafeRawBufferPointer) throws { try append.write(bytes) }
    func abort() { append.abort() }
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
            default: return .immediate(tusError(UploadError.badRequest("POST to an upload URL needs X-HTTP-Method-Override.")))
            }
        }
        router.add("HEAD", base + "/:id") { [self] head in tusHeadPlan(head, uploads) }
        router.add("PATCH", base + "/:id") { [self] head in tusPatchPlan(head, uploads) }
        router.add("DELETE", base + "/:id") { [self] head in tusDeletePlan(head, uploads) }
    }

    // MARK: responses

    func tusHeaders(_ extra: [(String, String)] = []) -> HTTPHeaders {
        var h = HTTPHeaders(Render.corsHeaders)
        h.add("Tus-Resumable", Self.tusVersion)
        h.add("Cache-Control", "no-store")
        for (k, v) in extra { h.add(k, v) }
        return h
    }

    /// `OPTIONS`: what this server supports (tus §OPTIONS).
    func tusOptions() -> Response {
        Response(status: 204, headers: tusHeaders([
            ("Tus-Version", Self.tusVersion), ("Tus-Extension", Self.tusExtensions),
            ("Tus-Max-Size", "\(config.maxUploadBytes)"), ("Tus-Checksum-Algorithm", UploadService.checksumAlgorithms.joined(separator: ",")),
            ("Access-Control-Max-Age", "86400"),
        ]))
    }

    /// Errors: tus statuses with a Parse-style body `{"code": N, "error": …}` (101 for an unknown or
    /// expired upload, 130 for a chunk or upload that was not saved); Parse errors as everywhere else.
    func tusError(_ error: any Error, requestID: String = "") -> Response {
        if let e = error as? UploadError {
            var extra: [(String, String)] = []
            if case .offsetMismatch(let current) = e { extra.append(("Upload-Offset", "\(current)")) }
            if e.status == 412 { extra.append(("Tus-Version", Self.tusVersion)) }
            // RFC 9110 §10.2.3: the lease of a dead or stalled writer lapses after the stall limit.
            if e.status == 423 { extra.append(("Retry-After", "\((uploads?.writerStallLimit.components.seconds ?? 5) + 1)")) }
            var h = tusHeaders(extra)
            h.set("Content-Type", "application/json; charset=utf-8")
            return Response(status: e.status, headers: h, body: .bytes(JSON.object(["code": .number(Double(e.parseCode.rawValue)), "error": .string(e.message)]).serialized))
        }
        var r = Render.error(error, logger: logger, requestID: requestID)
        r.headers.add("Tus-Resumable", Self.tusVersion)
        return r
    }

    /// Upload state headers: offset, length, metadata, expiry, and the Parse file once complete.
    func uploadHeaders(_ u: UploadRecord) -> [(String, String)] {
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

    struct TusVersionError: Error {}

    func render(_ error: any Error, _ head: RequestHead) -> Response {
        if error is TusVersionError {
            var h = tusHeaders([("Tus-Version", Self.tusVersion)])
            h.set("Content-Type", "application/json; charset=utf-8")
            return Response(status: 412, headers: h, body: .bytes(JSON.object(["code": .number(Double(ParseError.Code.fileSaveError.rawValue)), "error": "Tus-Resumable 1.0.0 is required."]).serialized))
        }
        return tusError(error, requestID: head.requestID)
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
        let created = CreatedUpload()
        return .streamed(maxBodyBytes: config.maxUploadBytes, open: { [self] head in
            do {
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
                let record = try uploads.create(length: length, metadata: try Self.parseMetadata(head.headers["Upload-Metadata"]), auth: auth)
                created.set(record)
                if !hasBody { return .respond(createdResponse(record)) }
                let append = try uploads.beginAppend(id: record.id, offset: 0, length: nil, checksum: head.headers["Upload-Checksum"], auth: auth)
                return .sink(UploadAppendSink(append))
            } catch is UnsupportedMediaType {
                return .respond(unsupportedMedia())
            } catch {
                return .respond(render(error, head))
            }
        }, handler: { [self] head, sink in
            guard let sink = sink as? UploadAppendSink else { return Render.json(["code": 1, "message": "Internal server error."], status: 500) }
            do {
                return createdResponse(try sink.append.finish())
            } catch {
                // The upload exists even if its first chunk was refused: answer 201 so the client can resume,
                // except for a checksum mismatch, which the client must see.
                if let e = error as? UploadError, case .checksumMismatch = e { return render(error, head) }
                if let record = created.get() { return createdResponse(record) }
                return render(error, head)
            }
        })
    }

    func createdResponse(_ u: UploadRecord) -> Response {
        Response(status: 201, headers: tusHeaders([("Location", config.publicServerURL + "/uploads/" + u.id)] + uploadHeaders(u)))
    }

    struct UnsupportedMediaType: Error {}

    func unsupportedMedia() -> Response {
        var h = tusHeaders()
        h.set("Content-Type", "application/json; charset=utf-8")
        return Response(status: 415, headers: h, body: .bytes(JSON.object(["code": .number(Double(ParseError.Code.fileSaveError.rawValue)), "error": "Content-Type must be application/offset+octet-stream."]).serialized))
    }

    // MARK: HEAD, PATCH, DELETE

    func tusHeadPlan(_ routed: RequestHead, _ uploads: UploadService) -> RoutePlan {
        let id = routed.pathParameters["id"] ?? ""
        return .buffered(maxBodyBytes: 0) { [self] request in
            do {
                let auth = try tusAuth(request.head)
                let u = try uploads.upload(id: id, auth: auth)
                return Response(status: 200, headers: tusHeaders(uploadHeaders(u)))
            } catch {
                var r = render(error, request.head)
                r.body = .empty
                return r
            }
        }
    }

    func tusPatchPlan(_ routed: RequestHead, _ uploads: UploadService) -> RoutePlan {
        let id = routed.pathParameters["id"] ?? ""
        // The most a PATCH may carry is what the upload still lacks; a larger Content-Length gets 413
        // before any body byte is read. (An unknown or foreign upload is refused in `open`.) A PATCH at
        // another offset gets 409 from `open` instead, even on a finished upload: the offset is checked
        // before the length (tus 1.0.0 §PATCH, as tusd does).
        let record = UploadService.isValidIDForRouting(id) ? (try? uploads.database.upload(id: id)) ?? nil : nil
        let offsetMatches = record != nil && routed.headers["Upload-Offset"].flatMap { Int64($0) } == record?.offset
        let limit = offsetMatches ? record.map { uploads.remainingBytes($0) } ?? config.maxUploadBytes : config.maxUploadBytes
        return .streamed(maxBodyBytes: max(0, limit), open: { [self] head in
            do {
                let auth = try tusAuth(head)
                guard Self.offsetOctetStream(head) else { throw UnsupportedMediaType() }
                guard let offsetText = head.headers["Upload-Offset"], let offset = Int64(offsetText), offset >= 0 else {
                    throw UploadError.badRequest("Upload-Offset is required.")
                }
                let length = head.headers["Upload-Length"].flatMap { Int64($0) }
                let append = try uploads.beginAppend(id: id, offset: offset, length: length, checksum: head.headers["Upload-Checksum"], auth: auth)
                return .sink(UploadAppendSink(append))
            } catch is UnsupportedMediaType {
                return .respond(unsupportedMedia())
            } catch let e as UploadError {
                if case .alreadyComplete(let u) = e {
                    // A retried final PATCH whose answer was lost: the upload is done, say so.
                    return .respond(Response(status: 204, headers: tusHeaders(uploadHeaders(u))))
                }
                return .respond(render(e, head))
            } catch {
                return .respond(render(error, head))
            }
        }, handler: { [self] head, sink in
            guard let sink = sink as? UploadAppendSink else { return Render.json(["code": 1, "message": "Internal server error."], status: 500) }
            do {
                return Response(status: 204, headers: tusHeaders(uploadHeaders(try sink.append.finish())))
            } catch {
                return render(error, head)
            }
        })
    }

    func tusDeletePlan(_ routed: RequestHead, _ uploads: UploadService) -> RoutePlan {
        let id = routed.pathParameters["id"] ?? ""
        return .buffered(maxBodyBytes: 0) { [self] request in
            do {
                let auth = try tusAuth(request.head)
                try uploads.terminate(id: id, auth: auth)
                return Response(status: 204, headers: tusHeaders())
            } catch {
                return render(error, request.head)
            }
        }
    }
}

/// The record made by a creation request, kept for its response.
final class CreatedUpload: Sendable {
    private let value = Mutex<UploadRecord?>(nil)
    func set(_ r: UploadRecord) { value.withLock { $0 = r } }
    func get() -> UploadRecord? { value.withLock { $0 } }
}

import Synchronization
