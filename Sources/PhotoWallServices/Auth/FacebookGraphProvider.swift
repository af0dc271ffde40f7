import PhotoWallCore
import PhotoWallCrypto
internal import PhotoWallCurl
import Synchronization

/// Facebook login through the Graph API, validating as parse-server's `facebook.js` does: when app
/// ids are configured, `GET /app` must name one of them; then `GET /me?fields=id,name` must return
/// the `authData.id`. Every call carries `appsecret_proof` (hex HMAC-SHA256 of the token keyed by the
/// app secret) when a secret is configured. Calls go through libcurl (`PhotoWallCurl`) on the
/// calling worker thread, on kept-alive connections.
/// - Source: parse-rest-api.md §6 ("parse-server facebook.js adapter"); social-and-uploads.md §2.8.
public final class FacebookGraphProvider: IdentityProvider {
    public let name = "facebook"
    /// Graph base URL without a trailing slash, e.g. `https://graph.facebook.com/v19.0` or the mock's.
    public let baseURL: String
    public let appIds: [String]
    public let appSecret: String?
    /// Per request, in seconds: the connect timeout and the longest stall; a whole request may take
    /// three times as long.
    public let timeoutSeconds: Double
    /// Idle libcurl handles (kept-alive connections to Graph), at most `maxIdleHandles`.
    let idle = Mutex<[GraphHandle]>([])
    static let maxIdleHandles = 4

    public init(baseURL: String, appIds: [String], appSecret: String?, timeoutSeconds: Double = 10) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.appIds = appIds
        self.appSecret = appSecret
        self.timeoutSeconds = timeoutSeconds
    }

    static let invalid = ParseError(.objectNotFound, "Facebook auth is invalid for this user.")

    public func validate(_ authData: [String: JSON]) throws(ParseError) -> ProviderProfile {
        guard let id = authData["id"]?.stringValue, !id.isEmpty else {
            throw ParseError(.unsupportedService, "This authentication method is unsupported.")
        }
        guard let token = authData["access_token"]?.stringValue, !token.isEmpty else { throw Self.invalid }
        if !appIds.isEmpty {
            let app = try get("/app", token: token, query: [:])
            guard let appId = app["id"]?.stringValue, appIds.contains(appId) else { throw Self.invalid }
        }
        let me = try get("/me", token: token, query: ["fields": "id,name"])
        guard me["id"]?.stringValue == id else { throw Self.invalid }
        return ProviderProfile(id: id, name: me["name"]?.stringValue)
    }

    public func friendIDs(_ authData: [String: JSON]) throws(ParseError) -> [String] {
        guard let token = authData["access_token"]?.stringValue else { throw Self.invalid }
        var ids: [String] = []
        var seen = Set<String>()
        var page = try get("/me/friends", token: token, query: ["limit": "500", "fields": "id"])
        for _ in 0..<10_000 {
            guard page["error"] == nil else { throw Self.invalid }
            for f in page["data"]?.arrayValue ?? [] {
                if let id = f["id"]?.stringValue, seen.insert(id).inserted { ids.append(id) }
            }
            guard let next = page["paging"]?["next"]?.stringValue, !(page["data"]?.arrayValue ?? []).isEmpty else { break }
            page = try fetch(next)
        }
        return ids
    }

    /// `appsecret_proof` for a token. - Source: Graph API "Securing requests".
    public static func appSecretProof(token: String, secret: String) -> String {
        Crypto.hmacSHA256(key: Array(secret.utf8), message: Array(token.utf8)).hexString
    }

    func get(_ path: String, token: String, query: [String: String]) throws(ParseError) -> JSON {
        var items = query.map { ($0.key, $0.value) }
        items.append(("access_token", token))
        if let appSecret { items.append(("appsecret_proof", Self.appSecretProof(token: token, secret: appSecret))) }
        return try fetch(baseURL + path + "?" + percentEncodedQuery(items))
    }

    /// One GET, waited for on the calling (worker) thread. Graph errors come back as JSON bodies
    /// with `error` (whatever the status), which callers treat as a rejection.
    /// - Throws: 141 `Facebook Graph is unreachable: <reason>` for a malformed URL, a connection
    ///   that can't be made or breaks, or a timeout; 141 when the answer is not JSON.
    func fetch(_ url: String) throws(ParseError) -> JSON {
        let ms = Int(timeoutSeconds * 1000)
        let timeouts = Timeouts(connectMilliseconds: ms, stallSeconds: max(1, Int(timeoutSeconds.rounded(.up))), totalMilliseconds: ms * 3)
        let response: HTTPResponse
        do throws(CurlError) {
            var handle: GraphHandle
            if let pooled = idle.withLock({ $0.popLast() }) { handle = pooled } else { handle = GraphHandle(try EasyHandle()) }
            response = try handle.easy.perform(HTTPRequest(method: "GET", url: url), timeouts: timeouts)
            idle.withLock { if $0.count < Self.maxIdleHandles { $0.append(handle) } }
        } catch {
            // The URL carries the token and proof: keep only libcurl's reason, in the answer and in logs.
            var reason = error
            let prefix = "GET \(url): "
            if reason.message.hasPrefix(prefix) { reason.message = String(reason.message.dropFirst(prefix.count)) }
            if reason.code == .badURL { throw ParseError(.scriptFailed, "Facebook Graph URL is invalid.", cause: reason) }
            throw ParseError(.scriptFailed, "Facebook Graph is unreachable: \(reason.message)", cause: reason)
        }
        guard let json = try? JSON.parse(response.body) else {
            throw ParseError(.scriptFailed, "Facebook Graph answered something that is not JSON.")
        }
        return json
    }
}

/// A libcurl handle in `FacebookGraphProvider.idle`.
/// `@unchecked Sendable`: a handle is used by the one thread that took it out of the Mutex-guarded
/// pool until it puts it back; the pool never hands one out twice.
final class GraphHandle: @unchecked Sendable {
    let easy: EasyHandle
    init(_ easy: EasyHandle) { self.easy = easy }
}
