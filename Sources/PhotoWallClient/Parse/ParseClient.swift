internal import PhotoWallCurl
import PhotoWallCore

/// A small Parse REST client (JSON over libcurl) for the command line: log in and out, read the
/// current user, create, read and query objects.
///
/// Holds one libcurl handle (one keep-alive connection): use an instance from one thread at a
/// time. Requests are not retried; a failure throws at once.
/// - Source: parse-rest-api.md (users, sessions, objects, queries, error shapes).
public final class ParseClient {
    public var server: ParseServer
    let handle: EasyHandle
    let timeouts: Timeouts

    /// - Parameters:
    ///   - connectTimeoutSeconds: TCP connect timeout, in seconds.
    ///   - stallTimeoutSeconds: a request moving under 1 byte/s this long fails, in seconds.
    /// - Throws: `.internalError` when libcurl can't make a handle.
    public init(server: ParseServer, connectTimeoutSeconds: Double = 10, stallTimeoutSeconds: Int = 30) throws(ClientError) {
        self.server = server
        handle = try EasyHandle.forClient()
        timeouts = Timeouts(connectMilliseconds: max(1, Int(connectTimeoutSeconds * 1000)), stallSeconds: max(1, stallTimeoutSeconds))
    }

    /// A logged-in user.
    public struct Session: Sendable, Hashable {
        public var objectId: String
        public var username: String
        /// `r:<32 hex>`; send as `X-Parse-Session-Token`.
        public var sessionToken: String
        /// The user's Facebook id (`fbId` field), when set.
        public var fbId: String?
    }

    // MARK: users

    /// `POST /login` with a username and password.
    /// - Returns: the session; the client's credential is switched to its token.
    /// - Throws: `.rejected` with Parse 101 `Invalid username/password.` for wrong credentials;
    ///   `.unreachable`, `.transport`, `.serverError`.
    public func logIn(username: String, password: String) throws(ClientError) -> Session {
        let body: JSON = ["username": .string(username), "password": .string(password)]
        let json = try send("POST", "/login", json: body, credential: .anonymous, action: "Logging in")
        guard let id = json["objectId"]?.stringValue, let token = json["sessionToken"]?.stringValue else {
            throw ClientError(.protocolError, "The login answer has no objectId or sessionToken.")
        }
        server.credential = .sessionToken(token)
        return Session(objectId: id, username: json["username"]?.stringValue ?? username, sessionToken: token,
                       fbId: json["fbId"]?.stringValue)
    }

    /// `POST /logout`: ends the current session on the server.
    /// - Throws: `.unauthorized` when the token is already invalid; network errors.
    public func logOut() throws(ClientError) {
        _ = try send("POST", "/logout", json: [:], action: "Logging out")
    }

    /// `GET /users/me`: the user of the current session token, as stored.
    /// - Throws: `.unauthorized` (Parse 209) when the token is missing, unknown or expired.
    public func currentUser() throws(ClientError) -> [String: JSON] {
        let json = try send("GET", "/users/me", json: nil, action: "Reading the current user")
        guard let object = json.objectValue else { throw ClientError(.protocolError, "/users/me did not answer an object.") }
        return object
    }

    // MARK: objects

    /// `POST /classes/<className>`. - Returns: the new object's `objectId`.
    /// - Throws: `.rejected` with the Parse code (e.g. 111 for a refused image, 119 for an unknown class).
    public func createObject(className: String, fields: [String: JSON]) throws(ClientError) -> String {
        let json = try send("POST", "/classes/\(className)", json: .object(fields), action: "Creating a \(className)")
        guard let id = json["objectId"]?.stringValue else { throw ClientError(.protocolError, "The \(className) has no objectId.") }
        return id
    }

    /// `GET /classes/<className>/<objectId>`.
    /// - Throws: `.rejected` (Parse 101, HTTP 404) when it doesn't exist or isn't readable.
    public func getObject(className: String, objectId: String) throws(ClientError) -> [String: JSON] {
        let json = try send("GET", "/classes/\(className)/\(objectId)", json: nil, action: "Reading \(className) \(objectId)")
        return json.objectValue ?? [:]
    }

    /// `GET /classes/<className>?where=…&order=…&limit=…`. - Returns: the `results` array's objects.
    public func query(className: String, where constraints: JSON = [:], order: String? = nil, limit: Int? = nil) throws(ClientError) -> [[String: JSON]] {
        var query = "where=" + Self.percentEncode(constraints.text)
        if let order { query += "&order=" + Self.percentEncode(order) }
        if let limit { query += "&limit=\(limit)" }
        let json = try send("GET", "/classes/\(className)?\(query)", json: nil, action: "Querying \(className)")
        return (json["results"]?.arrayValue ?? []).compactMap { $0.objectValue }
    }

    /// `GET /health`. - Returns: true for `{"status":"ok"}`.
    public func health() throws(ClientError) -> Bool {
        let json = try send("GET", "/health", json: nil, action: "Checking health")
        return json["status"]?.stringValue == "ok"
    }

    /// The Facebook provider the server's browser wall uses, from `GET /config.json` at the server's
    /// origin (the page's runtime config; the Graph base is `facebook.graphURL`, or for servers that
    /// don't send it, the dialog URL without `/dialog/oauth`).
    /// - Returns: the Graph API base and app id, or nil when the server has no Facebook login.
    /// - Throws: `.unreachable`, `.transport`; `.serverError`/`.rejected` for an error status;
    ///   `.protocolError` when the answer is not the config JSON.
    public func facebookProvider() throws(ClientError) -> (graphURL: String, appId: String)? {
        let url = server.baseURL
        let afterScheme = url.range(of: "://").map { $0.upperBound } ?? url.startIndex
        let origin = String(url[..<(url[afterScheme...].firstIndex(of: "/") ?? url.endIndex)])
        let r = try handle.send(HTTPRequest(method: "GET", url: origin + "/config.json"), timeouts: timeouts)
        let action = "Reading the server's /config.json"
        guard (200...299).contains(r.status) else { throw ClientError.from(r, action: action) }
        guard let json = r.json, case .object(let config) = json, let facebook = config["facebook"] else {
            throw ClientError(.protocolError, "\(action): the answer is not the web config.", httpStatus: r.status)
        }
        if case .null = facebook { return nil }
        guard let appId = facebook["appId"]?.stringValue,
              let graph = facebook["graphURL"]?.stringValue
                ?? facebook["dialogURL"]?.stringValue.flatMap({ $0.hasSuffix("/dialog/oauth") ? String($0.dropLast("/dialog/oauth".count)) : nil })
        else {
            throw ClientError(.protocolError, "\(action): its facebook entry has no appId or graphURL.", httpStatus: r.status)
        }
        return (graph, appId)
    }

    // MARK: transport

    func send(_ method: String, _ path: String, json body: JSON?, credential: ParseServer.Credential? = nil,
              action: String) throws(ClientError) -> JSON {
        var headers = (credential.map { server.with($0) } ?? server).authHeaders
        var request = HTTPRequest(method: method, url: server.baseURL + path, headers: [])
        if let body {
            headers.append((name: "Content-Type", value: "application/json"))
            request.body = .bytes(body.serialized)
        }
        request.headers = headers
        let r = try handle.send(request, timeouts: timeouts)
        guard (200...299).contains(r.status) else { throw ClientError.from(r, action: action) }
        guard let json = r.json else { throw ClientError(.protocolError, "\(action): the answer is not JSON.", httpStatus: r.status) }
        return json
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    static func percentEncode(_ s: String) -> String { PhotoWallCore.percentEncode(s, keeping: isUnreservedURIByte) }
}

@available(*, unavailable)
extension ParseClient: Sendable {}
