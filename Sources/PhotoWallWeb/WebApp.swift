import Foundation
import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// The browser wall at `/`: static files, `GET /config.json`, and `POST /auth/facebook/exchange`.
///
/// Register it after the Parse API so that `/parse/…` keeps its own routes; every other `GET` is
/// looked up among the shipped files (404 `text/plain` when it isn't one).
///
/// ```swift
/// var router = Router()
/// api.register(on: &router)
/// WebApp(assets: try WebAssets(root: dir), config: webConfig, facebook: provider).register(on: &router)
/// ```
public struct WebApp: Sendable {
    public let assets: WebAssets
    public let config: WebConfig
    /// Exchanges dialog codes; nil answers the exchange with 252.
    public let facebook: FacebookGraphProvider?
    /// Origins besides the page's own that serve images and API answers (the public server URL's), for the CSP.
    public let extraOrigins: [String]

    public init(assets: WebAssets, config: WebConfig, facebook: FacebookGraphProvider?, extraOrigins: [String] = []) {
        self.assets = assets; self.config = config; self.facebook = facebook; self.extraOrigins = extraOrigins
    }

    /// Adds `GET /config.json`, `POST /auth/facebook/exchange` and `GET /*path` (the files; `/` is `index.html`).
    public func register(on router: inout Router) {
        router.add("GET", "/config.json") { [config] _ in
            var h = HTTPHeaders()
            h.add("X-Content-Type-Options", "nosniff")
            return .immediate(.json(config.json, headers: h))
        }
        router.add("POST", "/auth/facebook/exchange") { [self] _ in
            .buffered(maxBodyBytes: 16 << 10) { request in try self.exchange(request) }
        }
        router.add("GET", "/*path") { [self] head in .immediate(self.file(head)) }
    }

    /// The security headers every page response carries.
    var contentSecurityPolicy: String {
        let extra = extraOrigins.isEmpty ? "" : " " + extraOrigins.joined(separator: " ")
        return "default-src 'self'; img-src 'self' data: blob:\(extra); connect-src 'self'\(extra); style-src 'self'; "
            + "script-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    /// `GET /<path>`: a shipped file with its type and ETag (304 on a matching `If-None-Match`), else 404.
    /// `Cache-Control: no-cache`: browsers keep the files but revalidate, so a new build shows at once.
    func file(_ head: RequestHead) -> Response {
        var path = head.pathParameters["path"] ?? ""
        if path.isEmpty { path = "index.html" }
        // Exact names only: the router ignores empty segments, but `/app.js/` or `//app.js` would break
        // the page's relative links, so they are not the file.
        let exact = !head.path.contains("//") && (head.path == "/" || !head.path.hasSuffix("/"))
        guard exact, let asset = assets.files[path] else {
            var r = Response.text("Not found.\n", status: 404)
            r.headers.set("Cache-Control", "no-store")
            r.headers.set("X-Content-Type-Options", "nosniff")
            return r
        }
        var h = HTTPHeaders()
        h.add("Content-Type", asset.contentType)
        h.add("ETag", asset.etag)
        h.add("Cache-Control", "no-cache")
        h.add("X-Content-Type-Options", "nosniff")
        h.add("Referrer-Policy", "same-origin")
        if asset.contentType.hasPrefix("text/html") {
            h.add("Content-Security-Policy", contentSecurityPolicy)
            h.add("X-Frame-Options", "DENY")
        }
        if let inm = head.headers["If-None-Match"],
           inm.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag || $0.trimmingCharacters(in: .whitespaces) == "*" }) {
            return Response(status: 304, headers: h)
        }
        return Response(status: 200, headers: h, body: .bytes(asset.bytes))
    }

    /// `POST /auth/facebook/exchange {"code","redirectUri"}` → `{"id","name","access_token","expiration_date"}`: the
    /// browser's half of the authorization-code flow. The page then signs in with `POST /parse/users`
    /// `{"authData":{"facebook":{…}}}` as any Parse client does, and the server checks the token again there.
    /// - Throws: 107 for a bad body, 252 without Facebook login, 101 for a refused code, 141 when Graph is
    ///   down; rendered by the server's `errorRenderer` (`{"code","error"}`, no CORS headers on the page's routes).
    func exchange(_ request: Request) throws(ParseError) -> Response {
        guard let facebook else { throw ParseError(.unsupportedService, "Facebook login is not configured on this server.") }
        guard case .object(let body)? = try? JSON.parse(request.body),
              let code = body["code"]?.stringValue, !code.isEmpty, code.utf8.count < 2048,
              let redirect = body["redirectUri"]?.stringValue, !redirect.isEmpty, redirect.utf8.count < 2048 else {
            throw ParseError(.invalidJSON, "Send {\"code\": …, \"redirectUri\": …}.")
        }
        let result = try facebook.exchange(code: code, redirectURI: redirect)
        let expires = ParseDate(millisecondsSince1970: ParseDate.now().millisecondsSince1970
                                + Int64(result.expiresInSeconds ?? 60 * 86_400) * 1000)
        var out: [String: JSON] = ["id": .string(result.id), "access_token": .string(result.accessToken),
                                   "expiration_date": .string(expires.iso)]
        if let name = result.name { out["name"] = .string(name) }
        return .json(.object(out))
    }
}
