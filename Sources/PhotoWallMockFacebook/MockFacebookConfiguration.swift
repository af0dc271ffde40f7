import PhotoWallCore

extension MockFacebookServer {
    /// Settings of one mock provider; fixed once it is created.
    public struct Configuration: Sendable {
        /// The only app the mock knows: `client_id` of the dialog and the code exchange, the `id` of `/app`.
        public var appID: String = MockFacebookServer.defaultAppID
        /// When set: `client_secret` is checked at `/oauth/access_token`, app tokens must be
        /// `appID|appSecret`, and `appsecret_proof` is checked (and required, see below) on Graph calls
        /// made with user tokens. When nil none of these are checked.
        public var appSecret: String?
        /// Shown on the dialog and returned by `/app` and `debug_token`.
        public var appName: String = "PhotoWall"
        /// Graph's "Require App Secret" switch: with `appSecret` set, a user-token call without
        /// `appsecret_proof` fails (code 100). A proof that is sent is always checked. Default true.
        public var requireAppSecretProof: Bool = true
        /// IPv4 address to bind (`start()` only).
        public var host: String = "127.0.0.1"
        /// TCP port, 0–65535; 0 lets the kernel choose (`start()` returns it).
        public var port: Int = 0
        /// Base of absolute links the mock hands out (picture redirects, `paging.next`), e.g.
        /// `http://127.0.0.1:1338`. Nil: `http://` + the request's `Host` header.
        public var publicBaseURL: String?
        /// Prefixes a dialog `redirect_uri` must start with (Graph's "Valid OAuth Redirect URIs").
        /// Empty: any absolute URI is accepted.
        public var allowedRedirectURIPrefixes: [String] = []
        /// Lifetime of a dialog code in seconds (Graph's exact value is unpublished; about 10 min).
        public var codeLifetimeSeconds: Int = 600
        /// Lifetime of a user token in seconds; default 5 183 976 s (about 60 days, Graph's `expires_in`).
        public var tokenLifetimeSeconds: Int = 5_183_976
        /// Sent in the `facebook-api-version` header for unversioned calls.
        public var defaultGraphVersion: String = "v19.0"
        /// Serve the test-only `/__control/…` endpoints (see `MockFacebookServer`). Default true.
        public var enableControlEndpoints: Bool = true
        /// Handler threads of the HTTP engine.
        public var workerThreads: Int = 8
        /// Engine and mock messages; access lines are `.info`.
        public var logger: Logger = Logger(label: "mock-facebook")

        public init(appID: String = MockFacebookServer.defaultAppID, appSecret: String? = nil,
                    host: String = "127.0.0.1", port: Int = 0) {
            self.appID = appID
            self.appSecret = appSecret
            self.host = host
            self.port = port
        }
    }

    /// App id used when none is configured.
    public static let defaultAppID = "1234567890123456"
}
