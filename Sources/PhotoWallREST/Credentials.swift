import Foundation
import PhotoWallCore
import PhotoWallHTTP
import PhotoWallServices

/// The keys a request presents, from `X-Parse-*` headers, HTTP Basic auth, or (when the header
/// application id is missing or unknown) the JS SDK's `_ApplicationId`-style body fields.
/// - Source: parse-rest-api.md §1 ("Request headers", "JS-SDK body overrides").
struct Credentials {
    var appId: String?
    var restAPIKey: String?
    var clientKey: String?
    var javascriptKey: String?
    var masterKey: String?
    var sessionToken: String?
    var installationId: String?

    init(headers: HTTPHeaders) {
        appId = headers["X-Parse-Application-Id"]
        restAPIKey = headers["X-Parse-REST-API-Key"]
        clientKey = headers["X-Parse-Client-Key"] ?? headers["X-Parse-Windows-Key"]
        javascriptKey = headers["X-Parse-Javascript-Key"]
        masterKey = headers["X-Parse-Master-Key"]
        sessionToken = headers["X-Parse-Session-Token"]
        installationId = headers["X-Parse-Installation-Id"]
        if let auth = headers["Authorization"], auth.hasPrefix("Basic "),
           let raw = Base64.decode(auth.dropFirst(6)), let text = String(validating: raw, as: UTF8.self),
           let colon = text.firstIndex(of: ":") {
            let id = String(text[..<colon]), secret = String(text[text.index(after: colon)...])
            if appId == nil { appId = id }
            if secret.hasPrefix("javascript-key=") { javascriptKey = String(secret.dropFirst(15)) } else { masterKey = masterKey ?? secret }
        }
    }

    /// Applies the body overrides when the header app id does not match, removing the `_…` keys
    /// from the body in every case.
    mutating func takeOverrides(from body: inout [String: JSON], config: ServerConfig) {
        guard !body.isEmpty else { return }  // a GET's: no override, nothing to remove (11 hashed keys saved)
        if appId != config.appId, body["_ApplicationId"]?.stringValue == config.appId {
            appId = config.appId
            javascriptKey = body["_JavaScriptKey"]?.stringValue ?? javascriptKey
            clientKey = body["_ClientKey"]?.stringValue ?? clientKey
            masterKey = body["_MasterKey"]?.stringValue ?? masterKey
            sessionToken = body["_SessionToken"]?.stringValue ?? sessionToken
            installationId = body["_InstallationId"]?.stringValue ?? installationId
        }
        for k in ["_ApplicationId", "_JavaScriptKey", "_ClientKey", "_ClientVersion", "_InstallationId", "_SessionToken",
                  "_MasterKey", "_context", "_ContentType", "_RevocableSession", "_noBody"] {
            body[k] = nil
        }
    }

    /// Whether the app id is right and, when the server has client keys configured, one matches.
    func isAuthorized(_ config: ServerConfig) -> Bool {
        guard let appId, appId == config.appId else { return false }
        if isMaster(config) { return true }
        let configured = [config.restAPIKey, config.clientKey, config.javascriptKey].compactMap { $0 }
        if configured.isEmpty { return true }
        let sent = [restAPIKey, clientKey, javascriptKey].compactMap { $0 }
        return sent.contains { configured.contains($0) }
    }

    func isMaster(_ config: ServerConfig) -> Bool { masterKey == config.masterKey && !config.masterKey.isEmpty }
}
