import PhotoWallCore

/// What the browser wall needs to know at run time, served as `GET /config.json`.
///
/// Built by `photowall serve` from its options; nothing secret goes in here (no keys, no app secret).
public struct WebConfig: Sendable {
    /// `X-Parse-Application-Id` the page sends.
    public var appId: String
    /// The API's mount path on this origin, e.g. `/parse`.
    public var serverPath: String
    /// The OAuth dialog, e.g. `http://127.0.0.1:1338/v19.0/dialog/oauth`; nil when Facebook login is off.
    public var facebookDialogURL: String?
    /// The Facebook app id the dialog is opened for (`client_id`).
    public var facebookAppId: String?
    /// Largest upload the server accepts, in bytes (the page refuses bigger files before sending).
    public var maxUploadBytes: Int
    /// The Graph API base the server checks tokens with (`--facebook-url`, e.g.
    /// `http://127.0.0.1:1338/v19.0`), for native clients such as `photowall login --facebook`.
    public var facebookGraphURL: String?

    public init(appId: String, serverPath: String, facebookDialogURL: String?, facebookAppId: String?, maxUploadBytes: Int,
                facebookGraphURL: String? = nil) {
        self.appId = appId; self.serverPath = serverPath; self.facebookDialogURL = facebookDialogURL
        self.facebookAppId = facebookAppId; self.maxUploadBytes = maxUploadBytes; self.facebookGraphURL = facebookGraphURL
    }

    /// The dialog URL for a Graph API base: `https://graph.facebook.com/v19.0` → `https://www.facebook.com/v19.0/dialog/oauth`;
    /// any other base (the mock's) → `<base>/dialog/oauth`.
    public static func dialogURL(forGraphBase base: String) -> String {
        var b = base.hasSuffix("/") ? String(base.dropLast()) : base
        if let r = b.range(of: "://graph.facebook.com") { b.replaceSubrange(r, with: "://www.facebook.com") }
        return b + "/dialog/oauth"
    }

    /// The JSON the page (and `photowall login --facebook`) reads: `{appId, serverPath, maxUploadBytes,
    /// facebook: {dialogURL, appId, scope, graphURL?} | null}`.
    public var json: JSON {
        var o: [String: JSON] = ["appId": .string(appId), "serverPath": .string(serverPath), "maxUploadBytes": .number(Double(maxUploadBytes))]
        if let facebookDialogURL, let facebookAppId {
            var facebook: [String: JSON] = ["dialogURL": .string(facebookDialogURL), "appId": .string(facebookAppId), "scope": "public_profile,user_friends"]
            if let facebookGraphURL { facebook["graphURL"] = .string(facebookGraphURL) }
            o["facebook"] = .object(facebook)
        } else {
            o["facebook"] = .null
        }
        return .object(o)
    }
}
