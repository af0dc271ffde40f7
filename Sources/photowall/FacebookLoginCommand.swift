import Foundation
import PhotoWallClient
import PhotoWallCore
import PhotoWallHTTP

/// `photowall login --facebook [--as USER]`: Facebook login through the provider's OAuth dialog.
///
/// Without `--as`, it prints the dialog URL and waits (up to 5 minutes) for the browser to come
/// back to a one-shot listener on 127.0.0.1 (the loopback redirect of native apps; the page hands
/// the token from the URL fragment to the listener). With `--as USER` (a fixture id or name of the
/// mock provider) it approves the dialog itself, for scripts. Then it asks `/me` for the id and
/// logs in to PhotoWall with `authData.facebook`, storing the session (mode 0600).
enum FacebookLoginCommand {
    static func run(_ o: Options) -> Int32 {
        let target = ClientTarget(o, session: StoredSession.load())
        let state = ParseIdentifier.hex(byteCount: 12)
        // Named in "server unreachable at …": the provider while its dialog and /me are asked.
        var talkingTo = target.server
        do {
            // The provider: the flags (or their variables), else what the server publishes for its web page.
            var base = o.value("facebook-url", env: ["PHOTOWALL_FACEBOOK_URL"])
            var appId = o.value("facebook-app-id", env: ["PHOTOWALL_FACEBOOK_APP_ID"])
            if base == nil || appId == nil {
                guard let published = try ParseClient(server: target.parseServer()).facebookProvider() else {
                    return clientFail("login", "\(target.server) has no Facebook login (its /config.json names no provider); "
                                      + "give --facebook-url and --facebook-app-id", ClientExit.failure)
                }
                base = base ?? published.graphURL
                appId = appId ?? published.appId
            }
            guard let base, let appId else { return ClientExit.failure }
            talkingTo = base
            let token: String
            if let user = o.value("as") {
                let approved = Result { () throws(ClientError) -> String in
                    try FacebookDialog.approve(base: base, appId: appId, user: user, redirectURI: "http://127.0.0.1/callback", state: state)
                }
                if case .failure(let refusal) = approved, refusal.httpStatus == 400 {
                    // The dialog refused the choice (the mock: no such user; or the app id): its page's words, not its HTML.
                    return clientFail("login", "the Facebook dialog refused to log in as \"\(user)\" (\(refusal.message)): "
                                      + "give --as a user id or name the provider knows (the mock's are in Samples/facebook/users.json)",
                                      ClientExit.failure)
                }
                token = try approved.get()
            } else {
                guard let t = try browserLogin(base: base, appId: appId, state: state) else {
                    return clientFail("login", "no answer from the Facebook dialog within 5 minutes", ClientExit.failure)
                }
                token = t
            }
            let me = try FacebookDialog.me(base: base, token: token)
            talkingTo = target.server
            let client = try ParseClient(server: target.parseServer())
            let expires = ParseDate(millisecondsSince1970: ParseDate.now().millisecondsSince1970 + 60 * 86_400_000)
            let session = try client.logIn(authData: ["facebook": ["id": .string(me.id), "access_token": .string(token),
                                                                   "expiration_date": .string(expires.iso)]])
            let stored = StoredSession(server: target.server, appId: target.appId, sessionToken: session.sessionToken,
                                       username: session.username, objectId: session.objectId)
            guard stored.save() else { return clientFail("login", "cannot write \(ClientPaths.sessionFile)", ClientExit.failure) }
            Terminal.write("Logged in to \(target.server) as \(me.name ?? me.id) (Facebook \(me.id)).\n", to: 1)
            return ClientExit.ok
        } catch let error as ClientError {
            var failure = ClientFailure(error, server: talkingTo)
            if failure.exitCode == ClientExit.notLoggedIn { failure.exitCode = ClientExit.failure }
            if error.code == .unreachable, talkingTo != target.server {
                failure.message = "the Facebook provider is unreachable at \(talkingTo): check that it runs "
                    + "(make run starts the mock one; or photowall mock-facebook) and run the command again"
            }
            return clientFail("login", failure)
        } catch {
            return clientFail("login", "\(error)", ClientExit.failure)
        }
    }

    /// Serves `/callback` (a page that forwards the URL fragment) and `/token` on a random loopback
    /// port, prints the dialog URL and waits for the token.
    static func browserLogin(base: String, appId: String, state: String) throws -> String? {
        let box = TokenBox()
        var router = Router()
        router.add("GET", "/callback") { _ in
            var h = HTTPHeaders()
            h.add("Content-Type", "text/html; charset=utf-8")
            let page = """
                <!doctype html><meta charset="utf-8"><title>PhotoWall login</title>
                <p id="m">Finishing the login…</p>
                <script>fetch('/token?' + location.hash.slice(1)).then(r => r.text()).then(t => document.getElementById('m').textContent = t)</script>
                """
            return .immediate(Response(status: 200, headers: h, body: .bytes(Array(page.utf8))))
        }
        router.add("GET", "/token") { head in
            if head.queryValue("state") == state, let t = head.queryValue("access_token"), !t.isEmpty {
                box.set(t)
                return .immediate(.text("Logged in: you can close this window.", status: 200))
            }
            return .immediate(.text("Facebook login was cancelled or failed: \(head.queryValue("error") ?? "no token").", status: 400))
        }
        var config = HTTPServer.Configuration(host: "127.0.0.1", port: 0, logger: Logger(label: "login", level: .warning))
        config.accessLog = false
        let server = HTTPServer(configuration: config, router: router)
        let port = try server.start()
        defer { server.shutdown(gracePeriodSeconds: 1) }
        let url = FacebookDialog.dialogURL(base: base, appId: appId, redirectURI: "http://127.0.0.1:\(port)/callback", state: state)
        Terminal.write("Open this page to log in with Facebook:\n  \(url)\n", to: 1)
        return box.wait(seconds: 300)
    }
}

/// The token handed over by the loopback listener.
final class TokenBox: Sendable {
    private let value = ReadMostly<String?>(nil)
    private let ready = DispatchSemaphore(value: 0)
    func set(_ t: String) {
        value.write { $0 = t }
        ready.signal()
    }
    func wait(seconds: Double) -> String? {
        _ = ready.wait(timeout: .now() + seconds)
        return value.read { $0 }
    }
}
