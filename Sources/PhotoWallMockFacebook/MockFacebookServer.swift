import PhotoWallCore
import PhotoWallCrypto
import PhotoWallHTTP
import Synchronization

/// A mock of the Facebook Login dialog and Graph API for tests, demos and scripts, served by
/// PhotoWall's HTTP engine from a fixture of fake people and their friendships.
///
/// Graph surface (notes social-and-uploads.md §2.8; every path also under `/v{N}.{M}/`):
/// - `GET /dialog/oauth?client_id&redirect_uri&state&scope[&response_type=code|token]`: HTML page to
///   pick a fixture user and approve or cancel; `POST|GET /dialog/oauth/confirm` then redirects 302 to
///   `redirect_uri?code=…&state=…`, or `?error_reason=user_denied&error=access_denied&error_description=Permissions+error&state=…`.
/// - `GET|POST /oauth/access_token?client_id&redirect_uri&client_secret&code` →
///   `{"access_token","token_type":"bearer","expires_in"}`; a code works once. Also
///   `grant_type=client_credentials` (app token `id|secret`) and `grant_type=fb_exchange_token`.
/// - `GET /debug_token?input_token=…&access_token=APP_ID|APP_SECRET` → `{"data":{…,"is_valid",…}}`.
/// - `GET /me`, `GET /{id}` with `fields=` (`id,name,first_name,last_name,short_name,email,picture,installed,friends`).
/// - `GET /{id}/picture[?type=|width=|height=|redirect=false]`: 302 to a PNG, or JSON.
/// - `GET /me/friends`, `/{id}/friends[/{other}]`: app-user friends only, cursor paging
///   (`limit` ≤ 5000, default 25; `after`, `before`; `paging.next`), `summary.total_count` = all friends.
/// - `GET /me/permissions`, `DELETE /me/permissions` (the user removes the app).
/// - `GET /app` → `{"id","name"}`.
///
/// Errors are Graph's: HTTP 400 `{"error":{"message","type","code","error_subcode","fbtrace_id"}}`;
/// tokens: 190 (unknown), 190/463 (expired), 190/460 (revoked), 190/467 (logged out), 190/458
/// (app removed); `appsecret_proof` missing or wrong: 100 `GraphMethodException`.
///
/// Test-only control endpoints (no authentication; disable with `enableControlEndpoints = false`):
/// see `MockFacebookServer+Control.swift` or `GET /__control`.
///
/// State (codes, tokens, edited friendships) lives in memory behind a `Mutex`; a restart forgets it.
///
/// ```swift
/// let server = MockFacebookServer(fixture: try .load(path: "Samples/facebook/users.json"),
///                                 appID: "1234567890123456", appSecret: "s3cret")
/// let port = try server.start()                      // 127.0.0.1, kernel-chosen port
/// let token = try server.issueToken(forUser: "100001027476117").token
/// defer { server.shutdown() }
/// ```
public final class MockFacebookServer: Sendable {
    public let configuration: Configuration
    /// The fixture as loaded; friendship edits live in the server state, not here.
    public let fixture: FacebookFixture
    let state: ProviderState
    private let http = Mutex<HTTPServer?>(nil)

    /// - Parameters:
    ///   - fixture: the people and friendships to serve.
    ///   - configuration: app id and secret, host and port, lifetimes, switches.
    public init(fixture: FacebookFixture, configuration: Configuration = Configuration()) {
        self.fixture = fixture
        self.configuration = configuration
        state = ProviderState(fixture: fixture)
    }

    /// Shorthand for `init(fixture:configuration:)` with the usual four settings.
    public convenience init(fixture: FacebookFixture, appID: String = MockFacebookServer.defaultAppID,
                            appSecret: String? = nil, host: String = "127.0.0.1", port: Int = 0) {
        self.init(fixture: fixture, configuration: Configuration(appID: appID, appSecret: appSecret, host: host, port: port))
    }

    /// Binds `configuration.host:port` and starts answering, on the engine's threads; returns at once.
    ///
    /// - Returns: the bound port (the kernel's choice when `configuration.port` is 0).
    /// - Throws: `HTTPServerError` when called twice or the port cannot be bound.
    @discardableResult
    public func start() throws -> Int {
        var router = Router()
        register(on: &router)
        var http = HTTPServer.Configuration(host: configuration.host, port: configuration.port, logger: configuration.logger)
        http.workerThreads = configuration.workerThreads
        http.eventThreads = min(2, HTTPServer.Configuration.processorCount)
        let server = HTTPServer(configuration: http, router: router)
        try self.http.withLock { current in
            guard current == nil else {
                throw HTTPServerError(code: .alreadyStarted, message: "mock Facebook server was already started")
            }
            current = server
        }
        return try server.start()
    }

    /// The bound port after `start()`, else 0.
    public var port: Int { http.withLock { $0?.port ?? 0 } }

    /// `http://HOST:PORT` of the running server (`publicBaseURL` when configured).
    public var baseURL: String {
        configuration.publicBaseURL ?? "http://\(configuration.host == "0.0.0.0" ? "127.0.0.1" : configuration.host):\(port)"
    }

    /// Stops gracefully (see `HTTPServer.shutdown`); safe to call more than once.
    public func shutdown(gracePeriodSeconds: Double = 2) {
        http.withLock { $0 }?.shutdown(gracePeriodSeconds: gracePeriodSeconds)
    }

    /// Blocks until SIGINT/SIGTERM or `shutdown()`, for the CLI.
    public func runUntilSignal() {
        http.withLock { $0 }?.runUntilSignal()
    }

    /// Adds the mock's routes to `router`: one catch-all `*` route for `/*path`, since Graph ids and
    /// version prefixes make every path a candidate. Add it last when sharing a router.
    ///
    /// The route holds the mock weakly (no cycle through `start()`'s own server): keep the
    /// `MockFacebookServer` alive while the router is in use; afterwards the route answers 503.
    /// Bodies are buffered up to 256 KiB.
    public func register(on router: inout Router) {
        router.add("*", "/*path") { [weak self] _ in
            .buffered(maxBodyBytes: 256 * 1024) { [weak self] request in
                self?.respond(to: request) ?? .json(["error": "mock Facebook server is gone"], status: 503)
            }
        }
    }

    /// Answers one request in-process (what the routes call): Graph JSON, the dialog's HTML, a
    /// redirect or a PNG. Never throws: failures are Graph error responses.
    public func respond(to request: Request) -> Response {
        let base = configuration.publicBaseURL ?? request.head.headers["Host"].map { "http://" + $0 } ?? baseURL
        let call = GraphCall(request: request, baseURL: base)
        var response: Response
        do {
            response = try route(call)
        } catch {
            response = error.response()
        }
        response.headers.set("facebook-api-version", call.version ?? configuration.defaultGraphVersion)
        return response
    }

    /// `hex(HMAC-SHA256(key: appSecret, message: accessToken))`, the `appsecret_proof` Graph expects
    /// (notes §2.5; Graph "Securing requests" docs).
    public static func appSecretProof(accessToken: String, appSecret: String) -> String {
        Crypto.hmacSHA256(key: Array(appSecret.utf8), message: Array(accessToken.utf8)).hexString
    }

    private func route(_ call: GraphCall) throws(GraphError) -> Response {
        let s = call.segments
        if s.first == "__control" {
            guard configuration.enableControlEndpoints else { throw GraphError.unknownPath("/" + s.joined(separator: "/")) }
            return try control(call, Array(s.dropFirst()))
        }
        switch s.count {
        case 0:
            return indexPage(call)
        case 1:
            switch s[0] {
            case "debug_token": return try debugToken(call)
            case "app": return try app(call)
            // Browsers ask for it on the dialog page; a plain 404 keeps their consoles quiet.
            case "favicon.ico": return .text("Not found.\n", status: 404)
            default: return try node(call, s[0])
            }
        case 2:
            switch (s[0], s[1]) {
            case ("dialog", "oauth"): return try dialog(call)
            case ("oauth", "access_token"): return try exchange(call)
            case (_, "picture"): return try picture(call, s[0])
            case (_, "friends"): return try friends(call, s[0], other: nil)
            case (_, "permissions"): return try permissions(call, s[0])
            default: break
            }
        case 3:
            if s[0] == "dialog", s[1] == "oauth", s[2] == "confirm" { return try confirm(call) }
            if s[0] == "platform", s[1] == "profilepic" { return try profilePicture(call, s[2]) }
            if s[1] == "friends" { return try friends(call, s[0], other: s[2]) }
        default:
            break
        }
        throw GraphError.unknownPath("/" + s.dropFirst().joined(separator: "/"))
    }
}
