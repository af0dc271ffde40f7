/// The HTML of the mock login dialog: pick a fixture user, tick permissions, Continue or Cancel.
///
/// The form carries `client_id`, `redirect_uri`, `state`, `scope` and `response_type` as hidden
/// fields, so the confirm step sees exactly what the dialog was given. Scripts can skip the page and
/// call the confirm URL directly (see `MockFacebookServer.confirm`).
enum DialogPage {
    private static let style = """
        body{font-family:system-ui,sans-serif;background:#f0f2f5;margin:0;padding:2rem;color:#1c1e21}
        @media (max-width:30rem){body{padding:.5rem}main{padding:1rem}}
        main{max-width:34rem;margin:auto;background:#fff;border-radius:8px;padding:1.5rem;box-shadow:0 2px 8px #0002}
        h1{font-size:1.3rem;margin-top:0}h2{font-size:1.1rem}.mock{color:#8a8d91;font-size:.85rem}
        .users{max-height:22rem;overflow:auto;border:1px solid #dddfe2;border-radius:6px;padding:.25rem}
        label.user{display:flex;flex-wrap:wrap;align-items:center;gap:.2rem .6rem;padding:.35rem .5rem;border-radius:4px;cursor:pointer}
        label.user:hover{background:#f2f3f5}.dot{flex:none;width:1.6rem;height:1.6rem;border-radius:50%;display:inline-block}
        label.user small{flex-basis:100%;padding-left:3.6rem;overflow-wrap:anywhere}
        small{color:#8a8d91}.buttons{display:flex;gap:.75rem;margin-top:1rem}
        button{font-size:1rem;padding:.55rem 1.4rem;border-radius:6px;border:0;cursor:pointer}
        button.approve{background:#1877f2;color:#fff}button.cancel{background:#e4e6eb}
        """

    static func render(_ request: DialogRequest, appName: String, users: [FixtureUser], totalUsers: Int, action: String) -> String {
        let e = Encoding.html
        var out = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
            <title>Log in to \(e(appName)) with Facebook (mock)</title><style>\(style)</style></head>
            <body><main>
            <h1>Log in to \(e(appName))</h1>
            <p class="mock">Mock Facebook for development and tests: choose a fixture person. No password, no real account.</p>
            <form method="post" action="\(e(action))">
            <input type="hidden" name="client_id" value="\(e(request.clientID))">
            <input type="hidden" name="redirect_uri" value="\(e(request.redirectURI))">
            <input type="hidden" name="response_type" value="\(e(request.responseType))">
            <input type="hidden" name="scope" value="\(e(request.scopes.joined(separator: ",")))">
            <input type="hidden" name="grants_listed" value="1">

            """
        if let state = request.state { out += "<input type=\"hidden\" name=\"state\" value=\"\(e(state))\">\n" }
        out += "<h2>Continue as</h2>\n<div class=\"users\">\n"
        for (i, user) in users.enumerated() {
            out += "<label class=\"user\"><input type=\"radio\" name=\"user_id\" value=\"\(e(user.id))\"\(i == 0 ? " checked" : "")>"
                + "<span class=\"dot\" style=\"background:\(e(user.color))\"></span>\(e(user.name)) "
                + "<small>\(e(user.id))\(user.appUser ? "" : " · not using the app yet")</small></label>\n"
        }
        out += "</div>\n"
        if totalUsers > users.count {
            out += "<p><small>\(totalUsers - users.count) more people: type an id or name</small> <input name=\"user\"></p>\n"
        }
        out += "<h2>\(e(appName)) will receive</h2>\n"
        for scope in request.scopes {
            if scope == "public_profile" {
                out += "<p><input type=\"checkbox\" checked disabled> public_profile (name and profile picture, always)"
                    + "<input type=\"hidden\" name=\"grant\" value=\"public_profile\"></p>\n"
            } else {
                out += "<p><label><input type=\"checkbox\" name=\"grant\" value=\"\(e(scope))\" checked> \(e(scope))</label></p>\n"
            }
        }
        out += """
            <div class="buttons"><button class="approve" type="submit" name="action" value="approve">Continue</button>
            <button class="cancel" type="submit" name="action" value="cancel">Cancel</button></div>
            </form></main></body></html>

            """
        return out
    }

    static func error(_ message: String, appName: String) -> String {
        let e = Encoding.html
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Error (mock Facebook)</title><style>\(style)</style></head>
            <body><main><h1>Sorry, something went wrong</h1><p class="error">\(e(message))</p>
            <p class="mock">Mock Facebook login for \(e(appName)).</p></main></body></html>

            """
    }
}
