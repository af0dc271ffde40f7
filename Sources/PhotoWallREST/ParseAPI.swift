import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices
import PhotoWallStorage

/// The Parse REST API under the mount path, registered on the engine's `Router`.
///
/// Every JSON route goes through one dispatcher (`dispatch`), which `/batch` and `_method`
/// overrides reuse; files have their own streamed routes. Handlers throw; only `Render`
/// writes error bodies.
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

    public init(config: ServerConfig, objects: ObjectService, users: UserService, files: FileService,
                uploads: UploadService? = nil, fileAccess: FileAccess? = nil, functions: [String: CloudFunction] = [:], logger: Logger) {
        self.config = config; self.objects = objects; self.users = users; self.files = files; self.uploads = uploads
        self.fileAccess = fileAccess
        self.functions = functions; self.logger = logger
    }

    /// Adds the API's routes to `router`.
    public func register(on router: inout Router) {
        let mount = config.mountPath
        if let uploads { registerUploads(on: &router, uploads: uploads) }
        router.add("OPTIONS", "/*path") { _ in .immediate(Render.json([:], status: 200, headers: [("Access-Control-Max-Age", "86400")])) }
        router.add("*", mount + "/health") { _ in .immediate(Render.json(["status": "ok"], status: 200)) }
        router.add("POST", mount + "/files") { _ in
            .immediate(Render.json(ParseError(.invalidFileName, "Filename not provided.").json, status: 400))
        }
        router.add("POST", mount + "/files/:filename") { [self] head in fileUploadPlan(head) }
        router.add("GET", mount + "/files/:appId/:filename") { [self] routed in
            let appId = routed.pathParameters["appId"] ?? "", name = routed.pathParameters["filename"] ?? ""
            return .buffered(maxBodyBytes: 0) { request in self.fileDownload(request.head, appId: appId, name: name) }
        }
        // Fetching one object by id is a primary-key read and a small render: cheaper than the
        // hand-off to a worker thread, so it runs on the event thread (unless `include` widens it).
        router.add("GET", mount + "/classes/:className/:objectId") { [self] head in
            if head.queryValue("include") != nil {
                return .buffered(maxBodyBytes: config.maxJSONBytes) { request in self.handleJSON(request) }
            }
            return .inline(maxBodyBytes: config.maxJSONBytes) { request in self.handleJSON(request) }
        }
        router.add("*", mount + "/*rest") { [self] _ in
            .buffered(maxBodyBytes: config.maxJSONBytes) { request in self.handleJSON(request) }
        }
    }

    // MARK: JSON routes

    func handleJSON(_ request: Request) -> Response {
        let head = request.head
        do {
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
            let segments = Array(head.path.dropFirst(config.mountPath.count).split(separator: "/").map { percentDecode($0) })
            let auth = try authenticate(credentials, segments: segments)
            let api = APIRequest(method: method, segments: segments, params: params, body: body, auth: auth, credentials: credentials)
            return Render.api(try dispatch(api))
        } catch {
            return Render.error(error, logger: logger, requestID: head.requestID)
        }
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

    func dispatch(_ r: APIRequest) throws -> APIResponse {
        let s = r.segments
        switch (r.method, s.count, s.first) {
        case (_, 2, "classes"):
            return try classRoute(r, className: s[1], objectId: nil)
        case (_, 3, "classes"):
            return try classRoute(r, className: s[1], objectId: s[2])
        case (_, 1, "users"):
            return try classRoute(r, className: "_User", objectId: nil)
        case ("GET", 2, "users") where s[1] == "me":
            return .ok(.object(try users.me(auth: r.auth)))
        case (_, 2, "users"):
            return try classRoute(r, className: "_User", objectId: s[1])
        case ("GET", 1, "login"), ("POST", 1, "login"):
            let p = r.method == "GET" && !r.params.isEmpty ? r.params : r.body.merging(r.params) { a, _ in a }
            return .ok(.object(try users.logIn(username: p["username"]?.stringValue, email: p["email"]?.stringValue,
                                               password: p["password"]?.stringValue, installationId: r.auth.installationId)))
        case ("POST", 1, "logout"):
            try users.logout(auth: r.auth)
            return .ok([:])
        case ("GET", 2, "sessions") where s[1] == "me":
            return .ok(.object(try users.currentSession(auth: r.auth)))
        case (_, 1, "sessions"):
            return try classRoute(r, className: "_Session", objectId: nil)
        case (_, 2, "sessions"):
            return try classRoute(r, className: "_Session", objectId: s[1])
        case ("POST", 1, "batch"):
            return try batch(r)
        case ("POST", 2, "functions"):
            guard let f = functions[s[1]] else { throw ParseError(.scriptFailed, "Invalid function: \"\(s[1])\"") }
            return .ok(["result": try f(r.body, r.auth)])
        case ("DELETE", 2, "files"):
            guard r.auth.isMaster else { throw PlainError.masterKeyRequired }
            try files.delete(name: s[1])
            return .ok([:])
        default:
            throw PlainError(status: 404, message: "not found")
        }
    }

    // MARK: classes

    func classRoute(_ r: APIRequest, className: String, objectId: String?) throws -> APIResponse {
        try objects.validateClassName(className)
        let base = config.publicServerURL
        switch (r.method, objectId) {
        case ("GET", nil):
            var options = try FindOptions.parse(r.params)
            var extra: Predicate?
            if className == "_Session", !r.auth.isMaster {
                guard let uid = r.auth.userId else { throw ParseError(.invalidSessionToken, "Session token required.") }
                extra = .compare("user", .eq, .pointer(className: "_User", objectId: uid))
            }
            if options.limit == nil { options.limit = config.defaultLimit }
            return .ok(try objects.find(className: className, options: options, auth: r.auth, extraPredicate: extra))
        case ("GET", let id?):
            let options = try FindOptions.parse(r.params, allowed: ["keys", "include", "excludeKeys"])
            return .ok(.object(try objects.get(className: className, objectId: id, options: options, auth: r.auth)))
        case ("POST", nil):
            if className == "_User" {
                let (id, body, created) = try users.signUp(body: r.body, auth: r.auth)
                var response = APIResponse.created(.object(body), location: "\(base)/users/\(id)")
                if !created { response.status = 200 }  // an authData login of an existing user
                return response
            }
            if className == "_Session" { throw ParseError(.operationForbidden, "Sessions are created by signing up or logging in.") }
            let result = try objects.create(className: className, body: r.body, auth: r.auth)
            var json = result.changed
            json["objectId"] = .string(result.objectId)
            json["createdAt"] = .string(result.createdAt.iso)
            return .created(.object(json), location: "\(base)/classes/\(className)/\(result.objectId)")
        case ("PUT", let id?):
            let (updatedAt, changed): (ParseDate, [String: JSON])
            if className == "_User" {
                (updatedAt, changed) = try users.update(userId: id, body: r.body, auth: r.auth)
            } else if className == "_Session" && !r.auth.isMaster {
                throw ParseError(.operationForbidden, "Sessions cannot be modified.")
            } else {
                (updatedAt, changed) = try objects.update(className: className, objectId: id, body: r.body, auth: r.auth)
            }
            var json = changed
            json["updatedAt"] = .string(updatedAt.iso)
            return .ok(.object(json))
        case ("DELETE", let id?):
            if className == "_User" { try users.delete(userId: id, auth: r.auth) } else {
                try objects.delete(className: className, objectId: id, auth: r.auth)
            }
            return .ok([:])
        default:
            throw PlainError(status: 404, message: "not found")
        }
    }

    // MARK: batch

    /// `POST /batch`: each sub-request runs through `dispatch` with the batch's auth.
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
                let segs = path.dropFirst(prefix.count).split(separator: "?").first.map { $0.split(separator: "/").map { percentDecode($0) } } ?? []
                guard segs.first != "batch" else { throw ParseError(.invalidJSON, "cannot route batch path \(path)") }
                let body = item["body"]?.objectValue ?? [:]
                let sub = APIRequest(method: method == "PATCH" ? "PUT" : method, segments: segs,
                                     params: method == "GET" ? body : [:], body: method == "GET" ? [:] : body,
                                     auth: r.auth, credentials: r.credentials)
                results.append(["success": try dispatch(sub).json])
            } catch let e as ParseError {
                results.append(["error": ["code": .number(Double(e.code.rawValue)), "error": .string(e.message)]])
            } catch let e as PlainError {
                results.append(["error": ["code": .number(Double(ParseError.Code.operationForbidden.rawValue)), "error": .string(e.message)]])
            }
        }
        return .ok(.array(results))
    }
}
