/// Where a PhotoWall (Parse-compatible) server is and how to authenticate to it.
public struct ParseServer: Sendable, Hashable {
    /// The API root including the mount path, without a trailing slash, e.g. `http://127.0.0.1:1337/parse`.
    public var baseURL: String
    /// Sent as `X-Parse-Application-Id` on every request.
    public var applicationId: String
    public var credential: Credential

    /// How requests authenticate: `X-Parse-Session-Token` or `X-Parse-Master-Key`.
    public enum Credential: Sendable, Hashable {
        case anonymous
        case sessionToken(String)
        case masterKey(String)
    }

    /// - Parameter baseURL: a trailing `/` is removed.
    public init(baseURL: String, applicationId: String, credential: Credential = .anonymous) {
        var url = baseURL
        while url.hasSuffix("/") { url.removeLast() }
        self.baseURL = url; self.applicationId = applicationId; self.credential = credential
    }

    /// The server with another credential.
    public func with(_ credential: Credential) -> ParseServer {
        var s = self
        s.credential = credential
        return s
    }

    /// The Parse headers for this server's credential.
    var authHeaders: [(name: String, value: String)] {
        var h: [(name: String, value: String)] = [(name: "X-Parse-Application-Id", value: applicationId)]
        switch credential {
        case .anonymous: break
        case .sessionToken(let t): h.append((name: "X-Parse-Session-Token", value: t))
        case .masterKey(let k): h.append((name: "X-Parse-Master-Key", value: k))
        }
        return h
    }
}
