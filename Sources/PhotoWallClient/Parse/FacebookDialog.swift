import Foundation
internal import PhotoWallCurl
import PhotoWallCore

/// The client side of Facebook login for native apps: the OAuth dialog with
/// `response_type=token` (implicit flow, redirected to a loopback address), then `/me` for the id.
/// - Source: social-and-uploads.md §2.8 (dialog, token response, `/me`).
public enum FacebookDialog {
    /// The dialog URL a person opens in a browser.
    /// - Parameter base: the provider's root, e.g. `http://127.0.0.1:1338` (a `/vNN.N` suffix is fine).
    public static func dialogURL(base: String, appId: String, redirectURI: String, state: String) -> String {
        "\(versioned(base))/dialog/oauth?client_id=\(ParseClient.percentEncode(appId))&redirect_uri=\(ParseClient.percentEncode(redirectURI))"
            + "&state=\(ParseClient.percentEncode(state))&scope=public_profile,user_friends&response_type=token"
    }

    static func versioned(_ base: String) -> String {
        var b = base
        while b.hasSuffix("/") { b.removeLast() }
        return b.range(of: #"/v\d+\.\d+$"#, options: .regularExpression) == nil ? b + "/v19.0" : b
    }

    /// Approves the dialog as `user` (a fixture id or name) without a browser, as the mock's form
    /// does (`POST /dialog/oauth/confirm`). Scripts and tests only; a real provider shows a page.
    /// - Returns: the access token from the redirect's fragment.
    /// - Throws: `.rejected` when the provider refuses; `.protocolError` for an unexpected answer.
    public static func approve(base: String, appId: String, user: String, redirectURI: String, state: String) throws(ClientError) -> String {
        let handle = try EasyHandle.forClient()
        let who = user.allSatisfy(\.isNumber) ? "user_id=\(ParseClient.percentEncode(user))" : "user=\(ParseClient.percentEncode(user))"
        let form = "client_id=\(ParseClient.percentEncode(appId))&redirect_uri=\(ParseClient.percentEncode(redirectURI))"
            + "&state=\(ParseClient.percentEncode(state))&scope=public_profile%2Cuser_friends&response_type=token&action=approve&\(who)"
        var request = HTTPRequest(method: "POST", url: versioned(base) + "/dialog/oauth/confirm",
                                  headers: [(name: "Content-Type", value: "application/x-www-form-urlencoded")])
        request.body = .bytes(Array(form.utf8))
        let r = try handle.send(request, timeouts: Timeouts(connectMilliseconds: 5000, stallSeconds: 15))
        guard (300...399).contains(r.status), let location = r.header("Location") else {
            throw ClientError(.rejected, pageMessage(r.body) ?? "The Facebook dialog answered HTTP \(r.status) instead of redirecting.", httpStatus: r.status)
        }
        let params = fragmentParameters(location)
        if let error = params["error"] { throw ClientError(.rejected, "Facebook login was refused: \(error)") }
        guard params["state"] == state, let token = params["access_token"] else {
            throw ClientError(.protocolError, "The Facebook redirect has no access token for this request.")
        }
        return token
    }

    /// The message of a dialog's error page, as text: its `class="error"` element, else its `<title>`.
    /// - Returns: nil when the body is not such a page.
    static func pageMessage(_ body: [UInt8]) -> String? {
        let html = String(decoding: body.prefix(65_536), as: UTF8.self)
        for marker in ["class=\"error\"", "<title"] {
            guard let start = html.range(of: marker), let open = html[start.upperBound...].firstIndex(of: ">") else { continue }
            let rest = html[html.index(after: open)...]
            let text = rest[..<(rest.range(of: "</")?.lowerBound ?? rest.endIndex)]
            let decoded = text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
            let line = decoded.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingLineSpace()
            if !line.isEmpty { return String(line.prefix(200)) }
        }
        return nil
    }

    /// `key=value` pairs of a URL's fragment (or query, when there is no fragment).
    public static func fragmentParameters(_ url: String) -> [String: String] {
        let part = url.split(separator: "#", maxSplits: 1).dropFirst().first ?? url.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        var out: [String: String] = [:]
        for pair in part.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if let k = kv.first { out[String(k)] = kv.count > 1 ? PhotoWallCore.percentDecode(kv[1], plusAsSpace: true) : "" }
        }
        return out
    }


    /// `GET /me?fields=id,name` with the user's token. - Returns: the Facebook id and name.
    public static func me(base: String, token: String) throws(ClientError) -> (id: String, name: String?) {
        let handle = try EasyHandle.forClient()
        let r = try handle.send(HTTPRequest(method: "GET", url: versioned(base) + "/me?fields=id,name&access_token=" + ParseClient.percentEncode(token)),
                                   timeouts: Timeouts(connectMilliseconds: 5000, stallSeconds: 15))
        guard let json = r.json, let id = json["id"]?.stringValue else {
            throw ClientError(.rejected, "Facebook did not accept the token: \(r.json?["error"]?["message"]?.stringValue ?? "HTTP \(r.status)")", httpStatus: r.status)
        }
        return (id, json["name"]?.stringValue)
    }
}
