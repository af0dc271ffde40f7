import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PhotoWallCore
import PhotoWallCrypto

/// Facebook login through the Graph API, validating as parse-server's `facebook.js` does: when app
/// ids are configured, `GET /app` must name one of them; then `GET /me?fields=id,name` must return
/// the `authData.id`. Every call carries `appsecret_proof` (hex HMAC-SHA256 of the token keyed by the
/// app secret) when a secret is configured.
/// - Source: parse-rest-api.md §6 ("parse-server facebook.js adapter"); social-and-uploads.md §2.8.
public final class FacebookGraphProvider: IdentityProvider {
    public let name = "facebook"
    /// Graph base URL without a trailing slash, e.g. `https://graph.facebook.com/v19.0` or the mock's.
    public let baseURL: String
    public let appIds: [String]
    public let appSecret: String?
    /// Per request, in seconds.
    public let timeoutSeconds: Double
    let session: URLSession

    public init(baseURL: String, appIds: [String], appSecret: String?, timeoutSeconds: Double = 10) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.appIds = appIds
        self.appSecret = appSecret
        self.timeoutSeconds = timeoutSeconds
        let c = URLSessionConfiguration.ephemeral
        c.timeoutIntervalForRequest = timeoutSeconds
        c.timeoutIntervalForResource = timeoutSeconds * 3
        c.urlCache = nil
        session = URLSession(configuration: c)
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
        var items = query.map { URLQueryItem(name: $0.key, value: $0.value) }
        items.append(URLQueryItem(name: "access_token", value: token))
        if let appSecret { items.append(URLQueryItem(name: "appsecret_proof", value: Self.appSecretProof(token: token, secret: appSecret))) }
        guard var c = URLComponents(string: baseURL + path) else { throw ParseError(.scriptFailed, "Facebook Graph URL is invalid.") }
        c.queryItems = items
        guard let url = c.url?.absoluteString else { throw ParseError(.scriptFailed, "Facebook Graph URL is invalid.") }
        return try fetch(url)
    }

    /// One GET, waited for on the calling (worker) thread. Graph errors come back as JSON bodies
    /// with `error`, which callers treat as a rejection; transport failures are 141.
    func fetch(_ url: String) throws(ParseError) -> JSON {
        guard let u = URL(string: url) else { throw ParseError(.scriptFailed, "Facebook Graph URL is invalid.") }
        let box = FetchBox()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: u) { data, _, error in
            box.set(data, error)
            done.signal()
        }
        task.resume()
        done.wait()
        let (data, error) = box.get()
        if let error {
            throw ParseError(.scriptFailed, "Facebook Graph is unreachable: \(error.localizedDescription)", cause: error)
        }
        guard let data, let json = try? JSON.parse([UInt8](data)) else {
            throw ParseError(.scriptFailed, "Facebook Graph answered something that is not JSON.")
        }
        return json
    }
}

/// Carries a URLSession completion to the waiting thread.
/// `@unchecked Sendable`: written once in the completion handler before the semaphore is signalled,
/// read once after the wait; never concurrently.
final class FetchBox: @unchecked Sendable {
    private var data: Data?
    private var error: (any Error)?
    func set(_ d: Data?, _ e: (any Error)?) { data = d; error = e }
    func get() -> (Data?, (any Error)?) { (data, error) }
}
