import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// One API call after credentials are resolved, as routes see it (also used for `/batch` sub-requests).
struct APIRequest {
    var method: String
    /// Path segments after the mount path, percent-decoded (`["classes","GameScore","xyz"]`).
    var segments: [String]
    /// Query parameters for reads (query string values JSON-parsed when they parse), or the body for `_method:GET`.
    var params: [String: JSON]
    /// The JSON body of writes.
    var body: [String: JSON]
    var auth: AuthContext
    var credentials: Credentials
    /// `:name` segments the matched JSON route captured (set by `ParseAPI.route`).
    var pathParameters: [String: String] = [:]

    /// The `:name` path parameter of the matched route; its pattern has it (a missing one is a bug).
    func parameter(_ name: String) -> String {
        guard let value = pathParameters[name] else { preconditionFailure("route pattern has no :\(name)") }
        return value
    }
}

/// A route's answer before rendering: a JSON value, or JSON text a service rendered straight into bytes.
struct APIResponse {
    enum Body {
        case json(JSON)
        /// UTF-8 JSON text, sent as it is.
        case text([UInt8])
    }
    var status: Int = 200
    var body: Body
    /// Absolute URL for `Location` on 201.
    var location: String?

    /// The body as a value (rendered text is parsed back: for `/batch` results).
    var json: JSON {
        switch body {
        case .json(let value): return value
        case .text(let bytes): return (try? JSON.parse(bytes)) ?? .null
        }
    }

    static func ok(_ json: JSON) -> APIResponse { APIResponse(body: .json(json)) }
    static func ok(text: [UInt8]) -> APIResponse { APIResponse(body: .text(text)) }
    static func created(_ json: JSON, location: String) -> APIResponse { APIResponse(status: 201, body: .json(json), location: location) }
}

/// Errors the REST layer answers without a Parse code (`{"error":"…"}`): 403 unauthorized, 404 route.
struct PlainError: Error {
    var status: Int
    var message: String
    static let unauthorized = PlainError(status: 403, message: "unauthorized")
    static let masterKeyRequired = PlainError(status: 403, message: "unauthorized: master key is required")
}

enum Render {
    /// The CORS headers of an actual response: which origins may read it and which of its headers
    /// scripts may read. What a CORS-preflight answer adds (`preflightHeaders`) browsers read only there.
    /// - Source: Fetch §3.2.3 (HTTP responses), §4.8 (CORS-preflight fetch).
    static let corsHeaders: [(String, String)] = [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Expose-Headers", "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id, Location, Upload-Offset, Upload-Length, Upload-Defer-Length, Upload-Metadata, Upload-Expires, Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm, X-Parse-File-Name, X-Parse-File-URL, X-Request-Id"),
    ]

    /// What a CORS-preflight answer (`OPTIONS`) adds to `corsHeaders`: the methods and request headers
    /// allowed (parse-server's lists, plus tus's), and how long the browser may keep the answer.
    /// - Source: Fetch §3.2.3, §4.8; parse-server `allowCrossDomain`.
    static let preflightHeaders: [(String, String)] = [
        ("Access-Control-Allow-Methods", "GET,PUT,POST,DELETE,OPTIONS,HEAD,PATCH"),
        ("Access-Control-Allow-Headers", "X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, X-Parse-Application-Id, X-Parse-Client-Version, X-Parse-Session-Token, X-Requested-With, X-Parse-Revocable-Session, X-Parse-Request-Id, Content-Type, Pragma, Cache-Control, X-Parse-Installation-Id, X-Parse-Client-Key, Upload-Offset, Upload-Length, Upload-Defer-Length, Upload-Metadata, Tus-Resumable, Upload-Checksum, X-HTTP-Method-Override"),
        ("Access-Control-Max-Age", "86400"),
    ]

    static func json(_ value: JSON, status: Int, headers extra: [(String, String)] = []) -> Response {
        json(text: value.serialized, status: status, headers: extra)
    }

    static func json(text: [UInt8], status: Int, headers extra: [(String, String)] = []) -> Response {
        var h = HTTPHeaders(corsHeaders)
        for (k, v) in extra { h.add(k, v) }
        return Response.json(text: text, status: status, headers: h)
    }

    static func api(_ r: APIResponse) -> Response {
        let extra = r.location.map { [("Location", $0)] } ?? []
        switch r.body {
        case .json(let value): return json(value, status: r.status, headers: extra)
        case .text(let text): return json(text: text, status: r.status, headers: extra)
        }
    }
}
