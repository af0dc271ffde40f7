import PhotoWallClient
#if canImport(Glibc)
import Glibc
#endif

/// `photowall logout`: ends the stored session on the server (best effort) and deletes it locally.
enum LogoutCommand {
    static let help = """
        usage: photowall logout

        Ends the session stored by `photowall login` on its server and removes the local copy.
        The local copy is removed even when the server can't be reached (a warning says so).
        Exit codes: 0 logged out (or no session), 1 the session file could not be removed, 64 usage.

        """

    static func run(_ args: [String]) -> Int32 {
        let o: Options
        do {
            o = try Options(args, known: [], flags: ["help"])
        } catch {
            return clientFail("logout", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        guard o.positional.isEmpty else { return clientFail("logout", "takes no arguments", ClientExit.usage) }
        guard let session = StoredSession.load() else {
            Terminal.write("Not logged in.\n", to: 1)
            return ClientExit.ok
        }
        let server = ParseServer(baseURL: session.server, applicationId: session.appId, credential: .sessionToken(session.sessionToken))
        do {
            try ParseClient(server: server, connectTimeoutSeconds: 5, stallTimeoutSeconds: 10).logOut()
        } catch {
            // An already invalid token is as good as logged out; anything else only warns.
            if error.code != .unauthorized {
                Terminal.write("photowall logout: warning: the server was not told (\(error.message))\n", to: 2)
            }
        }
        guard StoredSession.remove() else {
            return clientFail("logout", "cannot remove \(ClientPaths.sessionFile): \(String(cString: strerror(errno)))", ClientExit.failure)
        }
        Terminal.write("Logged out of \(session.server).\n", to: 1)
        return ClientExit.ok
    }
}
