import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// The Parse REST API under the mount path, registered on the engine's `Router`.
///
/// Files and tus uploads are routes of their own on the engine's router (streamed bodies). Every JSON
/// call comes through one buffered route under the mount path: credentials and the session are resolved
/// once (`APIRequest`), then the call is routed on `jsonRoutes`, the one table of typed JSON routes,
/// which `/batch` sub-requests and `_method` overrides resolve on too. Handlers throw; what they throw is
/// answered by `APIErrorRenderer`.
/// - Source: parse-rest-api.md (the whole subset).
public final class ParseAPI: Sendable {
    public let config: ServerConfig
    public let objects: ObjectService
    public let users: UserService
    public let files: FileService
    public let uploads: UploadService?
    /// Who may download which files (the installed extension's); nil serves every file to anyone (Parse's default).
    public let fileAccess: FileAccess?
    let functions: [String: CloudFunction]
    let logger: Logger
    /// Whether reading objects is a local page-cache read (SQLite): one object by id is cheap enough to run
    /// on the event thread, and queries run on the engine's local pool (`.local`); false for a database
    /// across the network (PostgreSQL), whose reads wait on it and so run on the worker pool.
    let objectReadsAreLocal: Bool
    /// The JSON routes, by path under the mount path.
    let jsonRoutes = ParseAPI.makeJSONRoutes()

    /// - Parameter objectReadsAreLocal: true only when the objects' database is in-process (SQLite): `GET`
    ///   of one object then runs on the event thread, queries on the local pool. A network round trip
    ///   (PostgreSQL) must not.
    public init(config: ServerConfig, objects: ObjectService, users: UserService, files: FileService,
                uploads: UploadService? = nil, fileAccess: FileAccess? = nil, functions: [String: CloudFunction] = [:],
                objectReadsAreLocal: Bool = false, logger: Logger) {
        self.config = config; self.objects = objects; self.users = users; self.files = files; self.uploads = uploads
        self.fileAccess = fileAccess
        self.functions = functions; self.objectReadsAreLocal = objectReadsAreLocal; self.logger = logger
    }

    /// The answer while the server is starting (bound, routes not yet set): 503 `{"status":"starting"}`
    /// with `Retry-After: 1`, parse-server's health shape. For `HTTPServer(configuration:whileStarting:)`.
    public static var starting: Response {
        var h = HTTPHeaders()
        h.add("Retry-After", "1")
        return .json(["status": "starting"], status: 503, headers: h)
    }

    /// Adds the API's routes to `router`.
    public func register(on router: inout Router) {
        let mount = config.mountPath
        if let uploads { registerUploads(on: &router, uploads: uploads) }
        router.add("OPTIONS", "/*path") { _ in .immediate(Render.json([:], status: 200, headers: Render.preflightHeaders)) }
        router.add("*", mount + "/health") { _ in .immediate(Render.json(["status": "ok"], status: 200)) }
        router.add("POST", mount + "/files") { _ in .refuse(ParseError(.invalidFileName, "Filename not provided.")) }
        router.add("POST", mount + "/files/:filename") { [self] head in fileUploadPlan(head) }
        router.add("GET", mount + "/files/:appId/:filename") { [self] routed in
            let appId = routed.pathParameters["appId"] ?? "", name = routed.pathParameters["filename"] ?? ""
            return .buffered(maxBodyBytes: 0) { request in try self.fileDownload(request.head, appId: appId, name: name) }
        }
        // Fetching one object by id from SQLite is a primary-key page-cache read and a small render:
        // cheaper than the hand-off to a worker thread, so it runs on the event thread (on the local pool
        // when `include` widens it). On PostgreSQL it is a network round trip: a worker's.
        // The engine matched the same pattern the JSON table has for it, so the JSON route is taken from
        // here (found once) with the engine's path parameters, instead of splitting and matching the path again.
        guard let getObject = jsonRoutes.match(method: "GET", segments: ["classes", "c", "o"]),
              getObject.pattern == "/classes/:className/:objectId" else { preconditionFailure("JSON routes lack GET of one object") }
        router.add("GET", mount + "/classes/:className/:objectId") { [self] head in
            let routed = PreRouted(match: RouteTable.Match(target: getObject.target, pattern: getObject.pattern,
                                                           parameters: head.pathParameters),
                                   segments: ["classes", head.pathParameters["className"] ?? "", head.pathParameters["objectId"] ?? ""])
            if !objectReadsAreLocal {
                return .buffered(maxBodyBytes: config.maxJSONBytes) { request in try self.handleJSON(request, routed: routed) }
            }
            if head.queryValue("include") != nil {
                return .local(maxBodyBytes: config.maxJSONBytes) { request in try self.handleJSON(request, routed: routed) }
            }
            return .inline(maxBodyBytes: config.maxJSONBytes) { request in try self.handleJSON(request, routed: routed) }
        }
        // A query on SQLite only reads local pages, but can take much longer than one object: the local
        // pool's (one thread per core, first in, first out), not the event thread's nor the worker pool's.
        guard let findObjects = jsonRoutes.match(method: "GET", segments: ["classes", "c"]),
              findObjects.pattern == "/classes/:className" else { preconditionFailure("JSON routes lack GET of a class") }
        router.add("GET", mount + "/classes/:className") { [self] head in
            let routed = PreRouted(match: RouteTable.Match(target: findObjects.target, pattern: findObjects.pattern,
                                                           parameters: head.pathParameters),
                                   segments: ["classes", head.pathParameters["className"] ?? ""])
            if !objectReadsAreLocal {
                return .buffered(maxBodyBytes: config.maxJSONBytes) { request in try self.handleJSON(request, routed: routed) }
            }
            return .local(maxBodyBytes: config.maxJSONBytes) { request in try self.handleJSON(request, routed: routed) }
        }
        router.add("*", mount + "/*rest") { [self] _ in
            .buffered(maxBodyBytes: config.maxJSONBytes) { request in try self.handleJSON(request) }
        }
    }

    // MARK: JSON routes

    /// A JSON route the engine's router already resolved (a route registered on the engine with the
    /// same pattern as in `jsonRoutes`), with the request's segments after the mount path.
    struct PreRouted: Sendable {
        var match: RouteTable<JSONRoute>.Match
        var segments: [String]
    }

    /// Reads the JSON body, resolves credentials, the session and `_method`, then answers from `jsonRoutes`
    /// (or from `routed`, when the method stays `GET`).
    /// - Throws: 107 for a body that is not a JSON object; `PlainError.unauthorized`; 209 for an invalid
    ///   session token; what the route throws; `PlainError` 404 for a path no JSON route has.
    func handleJSON(_ request: Request, routed: PreRouted? = nil) throws -> Response {
        let head = request.head
        var body: [String: JSON] = [:]
        if !request.body.isEmpty, head.method != "GET" {
            guard case .object(let o) = try JSON.parse(request.body) else {
                throw ParseError(.invalidJSON, "Invalid JSON body: expected an object.")
            }
            body = o
        }
        var credentials = Credentials(headers: head.headers)
        credentials.takeOverrides(from: &body, config: config)
        guard credentials.isAuthorized(config) else { throw PlainError.unauthorized }
        var method = head.method == "PATCH" ? "PUT" : head.method
        if method == "HEAD" { method = "GET" }
        if method == "POST", let m = body["_method"]?.stringValue {
            method = m.uppercased()
            body["_method"] = nil
        }
        var params: [String: JSON] = [:]
        if method == "GET" {
            if head.method == "POST" {
                params = body
            } else {
                for (k, v) in head.query { params[k] = (try? JSON.parse(v)) ?? .string(v) }
            }
        }
        let known = method == "GET" ? routed : nil
        let segments = known?.segments
            ?? pathSegments(head.path.dropFirst(config.mountPath.count)).map { percentDecode($0) }
        let auth = try authenticate(credentials, segments: segments)
        let api = APIRequest(method: method, segments: segments, params: params, body: body, auth: auth, credentials: credentials)
        return Render.api(try route(api, known: known?.match))
    }

    /// Answers `r` with the JSON route its method and segments match (`known`, when already resolved).
    /// - Throws: what the route throws; `PlainError` 404 `not found` when no route matches.
    func route(_ r: APIRequest, known: RouteTable<JSONRoute>.Match? = nil) throws -> APIResponse {
        guard let match = known ?? jsonRoutes.match(method: r.method, segments: r.segments) else {
            throw PlainError(status: 404, message: "not found")
        }
        var r = r
        r.pathParameters = match.parameters
        return try match.target(self, r)
    }

    /// Resolves the caller. An invalid session token fails every route but `/login` and
    /// `/sessions/me` (parse-server's rule); with the master key it is ignored.
    func authenticate(_ c: Credentials, segments: [String]) throws(ParseError) -> AuthContext {
        let master = c.isMaster(config)
        guard let token = c.sessionToken, !token.isEmpty, segments.first != "login" else {
            return AuthContext(isMaster: master, installationId: c.installationId)
        }
        do {
            var auth = try users.authenticate(sessionToken: token)
            auth.isMaster = master
            return auth
        } catch {
            if master { return AuthContext(isMaster: true, installationId: c.installationId) }
            if segments == ["sessions", "me"] { return AuthContext(installationId: c.installationId) }
            throw error
        }
    }

    // MARK: batch

    /// `POST /batch`: each sub-request is routed on `jsonRoutes` with the batch's auth.
    /// - Throws: 107 `requests must be an array`; sub-request failures become `{"error":…}` entries.
    /// - Source: parse-rest-api.md §7.
    func batch(_ r: APIRequest) throws -> APIResponse {
        guard let requests = r.body["requests"]?.arrayValue else { throw ParseError(.invalidJSON, "requests must be an array") }
        guard requests.count <= 1000 else { throw ParseError(.invalidJSON, "too many requests in one batch (at most 1000)") }
        var results: [JSON] = []
        for item in requests {
            do {
                guard let method = item["method"]?.stringValue?.uppercased(), let path = item["path"]?.stringValue else {
                    throw ParseError(.invalidJSON, "batch request must have a method and a path")
                }
                let prefix = config.mountPath + "/"
                guard path.hasPrefix(prefix) else { throw ParseError(.invalidJSON, "cannot route batch path \(path)") }
                let rest = path.dropFirst(prefix.count)
                let segs = pathSegments(rest.utf8.firstIndex(of: UInt8(ascii: "?")).map { rest[..<$0] } ?? rest).map { percentDecode($0) }
                guard segs.first != "batch" else { throw ParseError(.invalidJSON, "cannot route batch path \(path)") }
                let body = item["body"]?.objectValue ?? [:]
                let sub = APIRequest(method: method == "PATCH" ? "PUT" : method, segments: segs,
                                     params: method == "GET" ? body : [:], body: method == "GET" ? [:] : body,
                                     auth: r.auth, credentials: r.credentials)
                results.append(["success": try route(sub).json])
            } catch let e as ParseError {
                results.append(["error": ["code": .number(Double(e.code.rawValue)), "error": .string(e.message)]])
            } catch let e as PlainError {
                results.append(["error": ["code": .number(Double(ParseError.Code.operationForbidden.rawValue)), "error": .string(e.message)]])
            }
        }
        return .ok(.array(results))
    }
}
