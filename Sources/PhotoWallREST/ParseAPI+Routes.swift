import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// A JSON route's handler: gets the API and the resolved request (auth, params, body, path parameters).
typealias JSONRoute = @Sendable (ParseAPI, APIRequest) throws -> APIResponse

extension ParseAPI {
    /// The JSON routes, by path under the mount path, first match wins (see `RouteTable`). A class path
    /// with a method it has no route for still checks the class name first, then answers 404 (Parse's order).
    /// - Source: parse-rest-api.md §2 (routes), §3 (users), §4 (sessions), §6 (functions), §7 (batch).
    static func makeJSONRoutes() -> RouteTable<JSONRoute> {
        var t = RouteTable<JSONRoute>()
        t.add("GET", "/classes/:className") { api, r in try api.find(r, className: r.parameter("className")) }
        t.add("POST", "/classes/:className") { api, r in try api.create(r, className: r.parameter("className")) }
        t.add("*", "/classes/:className") { api, r in try api.noRoute(className: r.parameter("className")) }
        t.add("GET", "/classes/:className/:objectId") { api, r in try api.get(r, className: r.parameter("className"), objectId: r.parameter("objectId")) }
        t.add("PUT", "/classes/:className/:objectId") { api, r in try api.update(r, className: r.parameter("className"), objectId: r.parameter("objectId")) }
        t.add("DELETE", "/classes/:className/:objectId") { api, r in try api.delete(r, className: r.parameter("className"), objectId: r.parameter("objectId")) }
        t.add("*", "/classes/:className/:objectId") { api, r in try api.noRoute(className: r.parameter("className")) }

        t.add("GET", "/users") { api, r in try api.find(r, className: "_User") }
        t.add("POST", "/users") { api, r in try api.create(r, className: "_User") }
        t.add("*", "/users") { api, _ in try api.noRoute(className: "_User") }
        t.add("GET", "/users/me") { api, r in .ok(.object(try api.users.me(auth: r.auth))) }
        t.add("GET", "/users/:objectId") { api, r in try api.get(r, className: "_User", objectId: r.parameter("objectId")) }
        t.add("PUT", "/users/:objectId") { api, r in try api.update(r, className: "_User", objectId: r.parameter("objectId")) }
        t.add("DELETE", "/users/:objectId") { api, r in try api.delete(r, className: "_User", objectId: r.parameter("objectId")) }
        t.add("*", "/users/:objectId") { api, _ in try api.noRoute(className: "_User") }
        t.add("GET", "/login") { api, r in try api.logIn(r) }
        t.add("POST", "/login") { api, r in try api.logIn(r) }
        t.add("POST", "/logout") { api, r in
            try api.users.logout(auth: r.auth)
            return .ok([:])
        }

        t.add("GET", "/sessions/me") { api, r in .ok(.object(try api.users.currentSession(auth: r.auth))) }
        t.add("GET", "/sessions") { api, r in try api.find(r, className: "_Session") }
        t.add("POST", "/sessions") { api, r in try api.create(r, className: "_Session") }
        t.add("*", "/sessions") { api, _ in try api.noRoute(className: "_Session") }
        t.add("GET", "/sessions/:objectId") { api, r in try api.get(r, className: "_Session", objectId: r.parameter("objectId")) }
        t.add("PUT", "/sessions/:objectId") { api, r in try api.update(r, className: "_Session", objectId: r.parameter("objectId")) }
        t.add("DELETE", "/sessions/:objectId") { api, r in try api.delete(r, className: "_Session", objectId: r.parameter("objectId")) }
        t.add("*", "/sessions/:objectId") { api, _ in try api.noRoute(className: "_Session") }

        t.add("POST", "/batch") { api, r in try api.batch(r) }
        t.add("POST", "/functions/:name") { api, r in
            let name = r.parameter("name")
            guard let f = api.functions[name] else { throw ParseError(.scriptFailed, "Invalid function: \"\(name)\"") }
            switch try f(r.body, r.auth) {
            case .json(let value): return .ok(["result": value])
            case .text(let text): return .ok(text: Array(#"{"result":"#.utf8) + text + [UInt8(ascii: "}")])
            }
        }
        t.add("DELETE", "/files/:name") { api, r in
            guard r.auth.isMaster else { throw PlainError.masterKeyRequired }
            try api.files.delete(name: r.parameter("name"))
            return .ok([:])
        }
        return t
    }

    // MARK: classes (also `_User` at /users and `_Session` at /sessions)

    /// A class path with a method it has no route for: the class name is checked first, then 404.
    func noRoute(className: String) throws -> APIResponse {
        try objects.validateClassName(className)
        throw PlainError(status: 404, message: "not found")
    }

    func find(_ r: APIRequest, className: String) throws -> APIResponse {
        try objects.validateClassName(className)
        var options = try FindOptions.parse(r.params)
        if options.limit == nil { options.limit = config.defaultLimit }
        if className == "_Session" { return .ok(try users.findSessions(options: options, auth: r.auth)) }
        return .ok(text: try objects.findRendered(className: className, options: options, auth: r.auth))
    }

    func get(_ r: APIRequest, className: String, objectId: String) throws -> APIResponse {
        try objects.validateClassName(className)
        let options = try FindOptions.parse(r.params, allowed: ["keys", "include", "excludeKeys"])
        return .ok(text: try objects.getRendered(className: className, objectId: objectId, options: options, auth: r.auth))
    }

    func create(_ r: APIRequest, className: String) throws -> APIResponse {
        try objects.validateClassName(className)
        let base = config.publicServerURL
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
    }

    func update(_ r: APIRequest, className: String, objectId: String) throws -> APIResponse {
        try objects.validateClassName(className)
        let (updatedAt, changed): (ParseDate, [String: JSON])
        if className == "_User" {
            (updatedAt, changed) = try users.update(userId: objectId, body: r.body, auth: r.auth)
        } else if className == "_Session" && !r.auth.isMaster {
            throw ParseError(.operationForbidden, "Sessions cannot be modified.")
        } else {
            (updatedAt, changed) = try objects.update(className: className, objectId: objectId, body: r.body, auth: r.auth)
        }
        var json = changed
        json["updatedAt"] = .string(updatedAt.iso)
        return .ok(.object(json))
    }

    func delete(_ r: APIRequest, className: String, objectId: String) throws -> APIResponse {
        try objects.validateClassName(className)
        if className == "_User" { try users.delete(userId: objectId, auth: r.auth) } else {
            try objects.delete(className: className, objectId: objectId, auth: r.auth)
        }
        return .ok([:])
    }

    /// `GET` or `POST /login`: credentials from the query (GET) or the body, the body's winning.
    func logIn(_ r: APIRequest) throws -> APIResponse {
        let p = r.method == "GET" && !r.params.isEmpty ? r.params : r.body.merging(r.params) { a, _ in a }
        return .ok(.object(try users.logIn(username: p["username"]?.stringValue, email: p["email"]?.stringValue,
                                           password: p["password"]?.stringValue, installationId: r.auth.installationId)))
    }
}
