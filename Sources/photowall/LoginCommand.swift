import PhotoWallClient
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// `photowall login [USERNAME] [--password P] [--server URL] [--app-id ID]`: logs in with a
/// username and password and stores the session token (mode 0600) for `upload`.
///
/// The password comes from `--password`, else `PHOTOWALL_PASSWORD`, else a prompt on the
/// terminal (not echoed), else the first line of standard input.
enum LoginCommand {
    static let help = """
        usage: photowall login [USERNAME] [--username U] [--password P] [--server URL] [--app-id ID]
               photowall login --facebook [--as USER] [--facebook-url URL] [--facebook-app-id ID] [--server URL]

          USERNAME, --username   the account (prompted for on a terminal when missing)
          --password P           the password (else PHOTOWALL_PASSWORD, else a prompt, else stdin's first line)
          --server URL           API root (PHOTOWALL_SERVER; default \(ClientTarget.defaultServer))
          --app-id ID            application id (PARSE_SERVER_APPLICATION_ID; default \(ClientTarget.defaultAppId))
          --facebook             log in with Facebook: prints the login dialog's URL and waits for the browser
          --as USER              with --facebook: approve the (mock) dialog as this fixture user, for scripts
          --facebook-url URL     the provider's Graph API base (PHOTOWALL_FACEBOOK_URL; default: the one the server
                                 publishes in its /config.json)
          --facebook-app-id ID   the app id (PHOTOWALL_FACEBOOK_APP_ID; default: the server's, from /config.json)

        Stores {server, appId, sessionToken} in $XDG_CONFIG_HOME/photowall/session.json
        (default ~/.config/photowall/session.json) with mode 0600.
        Exit codes: 0 logged in, 1 refused (wrong username or password), 5 server unreachable, 64 usage.

        """

    static func run(_ args: [String]) -> Int32 {
        let o: Options
        do {
            o = try Options(args, known: ClientTarget.optionNames.union(["username", "password", "as", "facebook-url", "facebook-app-id"]),
                            flags: ["help", "facebook"])
        } catch {
            return clientFail("login", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        if o.flag("facebook") { return FacebookLoginCommand.run(o) }
        guard o.positional.count <= 1 else { return clientFail("login", "expected one USERNAME", ClientExit.usage) }
        let target = ClientTarget(o, session: nil)
        guard var username = o.positional.first ?? o.value("username") ?? o.value("", env: ["PHOTOWALL_USERNAME"]) ?? prompt("Username: ", echo: true),
              !username.isEmpty else {
            return clientFail("login", "a USERNAME is required", ClientExit.usage)
        }
        username = username.trimmingWhitespace()
        guard let password = o.value("password", env: ["PHOTOWALL_PASSWORD"]) ?? prompt("Password: ", echo: false) else {
            return clientFail("login", "a password is required (--password, PHOTOWALL_PASSWORD or standard input)", ClientExit.usage)
        }
        do {
            let client = try ParseClient(server: target.parseServer())
            let session = try client.logIn(username: username, password: password)
            let stored = StoredSession(server: target.server, appId: target.appId, sessionToken: session.sessionToken,
                                       username: session.username, objectId: session.objectId)
            guard stored.save() else {
                return clientFail("login", "cannot write \(ClientPaths.sessionFile): \(String(cString: strerror(errno)))", ClientExit.failure)
            }
            Terminal.write("Logged in to \(target.server) as \(session.username).\n", to: 1)
            return ClientExit.ok
        } catch {
            if error.parseCode == 101 {
                return clientFail("login", "invalid username or password: check them and run photowall login again", ClientExit.failure)
            }
            var failure = ClientFailure(error, server: target.server)
            if failure.exitCode == ClientExit.notLoggedIn { failure.exitCode = ClientExit.failure }
            return clientFail("login", failure)
        }
    }

    /// Reads one line: from the terminal (`/dev/tty`, echo off for passwords) when there is one,
    /// else from standard input. - Returns: nil at end of input.
    static func prompt(_ text: String, echo: Bool) -> String? {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        if tty >= 0, isatty(0) == 1 {
            defer { close(tty) }
            Terminal.write(text, to: tty)
            var saved = termios()
            let hasTermios = tcgetattr(tty, &saved) == 0
            if !echo && hasTermios {
                var quiet = saved
                quiet.c_lflag &= ~tcflag_t(ECHO)
                tcsetattr(tty, TCSAFLUSH, &quiet)
            }
            let line = readLine(fd: tty)
            if !echo && hasTermios {
                tcsetattr(tty, TCSAFLUSH, &saved)
                Terminal.write("\n", to: tty)
            }
            return line
        }
        if tty >= 0 { close(tty) }
        return readLine(fd: 0)
    }

    /// One line from `fd` without its newline, read byte by byte (so nothing after it is consumed).
    static func readLine(fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var c: UInt8 = 0
        while true {
            let n = read(fd, &c, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if c == 10 { break }
            bytes.append(c)
        }
        if bytes.last == 13 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
