import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// The one place errors become responses, for every route the server has; handed to the engine as
/// `HTTPServer.Configuration.errorRenderer`, so the engine's own refusals pass through it too.
///
/// By the error and the route that matched (`RequestHead.routePattern`):
/// - `HTTPError` (the engine's 400 framing, 404 no route, 413, 500): `{"error": message}`, as the engine words it;
/// - on the tus routes (`<mount>/uploads`, `<mount>/uploads/:id`): tus statuses with `Tus-Resumable` and a
///   Parse-style body `{"code","error"}` (412 with `Tus-Version`, 409 with `Upload-Offset`, 423 with
///   `Retry-After`, 415 for a wrong `Content-Type`); other errors as on the Parse routes plus `Tus-Resumable`;
///   a `HEAD` (or `X-HTTP-Method-Override: HEAD`) answer has no body;
/// - on the Parse routes (under the mount path): `ParseError` → `{"code","error"}` (with `Retry-After`
///   when it carries `retryAfterSeconds`: 124 from a save whose thumbnails could not start), `PlainError` →
///   `{"error"}`, both with the CORS headers; anything else → 500 `{"code":1,"message":"Internal server error."}`
///   with the cause logged;
/// - on the page's own routes (PhotoWallWeb, e.g. the Facebook code exchange): `ParseError` → `{"code","error"}`
///   without CORS headers.
/// - Source: parse-rest-api.md §1 (errors); tus 1.0.0 (statuses); style.md §3 ("One renderer").
public struct APIErrorRenderer: Sendable {
    let mountPath: String
    /// `Retry-After` of a tus 423: the stall limit after which a dead writer's lease lapses, plus one.
    let lockedRetryAfterSeconds: Int64
    let logger: Logger

    /// - Parameters:
    ///   - mountPath: the Parse API's mount path (`/parse`).
    ///   - uploadStallLimit: `UploadService.writerStallLimit` (the 423 answer's `Retry-After` is one more second).
    public init(mountPath: String, uploadStallLimit: Duration, logger: Logger) {
        self.mountPath = mountPath
        self.lockedRetryAfterSeconds = uploadStallLimit.components.seconds + 1
        self.logger = logger
    }

    /// The response for `error`, thrown while answering `head`.
    public func render(_ error: any Error, _ head: RequestHead) -> Response {
        if let e = error as? HTTPError { return e.response }
        let route = head.routePattern
        if route == mountPath + "/uploads" {
            return tus(error, head)
        }
        if route == mountPath + "/uploads/:id" {
            var response = tus(error, head)
            if head.method == "HEAD" || head.headers["X-HTTP-Method-Override"]?.uppercased() == "HEAD" { response.body = .empty }
            return response
        }
        if !route.isEmpty, route != mountPath, !route.hasPrefix(mountPath + "/"), let e = error as? ParseError {
            return .json(e.json, status: e.status, headers: HTTPHeaders(e.retryAfterHeaders))
        }
        return parse(error, head)
    }

    /// Parse's shapes, with the CORS headers.
    func parse(_ error: any Error, _ head: RequestHead) -> Response {
        switch error {
        case let e as ParseError:
            if e.code == .internalServerError {
                logger.error("internal error", ["request.id": head.requestID, "at": e.location,
                                                "cause": String(describing: e.cause.map { "\($0)" } ?? e.message)])
            }
            return Render.json(e.json, status: e.status, headers: e.retryAfterHeaders)
        case let e as PlainError:
            return Render.json(["error": .string(e.message)], status: e.status)
        default:
            logger.error("internal error", ["request.id": head.requestID, "cause": "\(error)"])
            return Render.json(["code": 1, "message": "Internal server error."], status: 500)
        }
    }

    /// tus statuses with a Parse-style body `{"code": N, "error": …}` (101 for an unknown or expired
    /// upload, 130 for a chunk or upload that was not saved); Parse errors as everywhere else.
    func tus(_ error: any Error, _ head: RequestHead) -> Response {
        let code: ParseError.Code, status: Int, message: String
        var extra: [(String, String)] = []
        switch error {
        case let e as UploadError:
            (code, status, message) = (e.parseCode, e.status, e.message)
            if case .offsetMismatch(let current) = e { extra.append(("Upload-Offset", "\(current)")) }
            if e.status == 412 { extra.append(("Tus-Version", ParseAPI.tusVersion)) }
            // RFC 9110 §10.2.3: the lease of a dead or stalled writer lapses after the stall limit.
            if e.status == 423 { extra.append(("Retry-After", "\(lockedRetryAfterSeconds)")) }
        case is TusVersionError:
            (code, status, message) = (.fileSaveError, 412, "Tus-Resumable 1.0.0 is required.")
            extra.append(("Tus-Version", ParseAPI.tusVersion))
        case is UnsupportedMediaType:
            (code, status, message) = (.fileSaveError, 415, "Content-Type must be application/offset+octet-stream.")
        default:
            var response = parse(error, head)
            response.headers.add("Tus-Resumable", ParseAPI.tusVersion)
            return response
        }
        var headers = ParseAPI.tusHeaders(extra)
        headers.set("Content-Type", "application/json; charset=utf-8")
        return Response(status: status, headers: headers,
                        body: .bytes(JSON.object(["code": .number(Double(code.rawValue)), "error": .string(message)]).serialized))
    }
}

/// A tus request without `Tus-Resumable: 1.0.0`: 412.
struct TusVersionError: Error {}

/// A tus body whose `Content-Type` is not `application/offset+octet-stream`: 415.
struct UnsupportedMediaType: Error {}

extension ParseError {
    /// `Retry-After` when the error says when to try again (RFC 9110 §10.2.3, delay-seconds).
    var retryAfterHeaders: [(String, String)] { retryAfterSeconds.map { [("Retry-After", "\($0)")] } ?? [] }
}
