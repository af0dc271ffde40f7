import PhotoWallCore
import PhotoWallWebSocket
#if canImport(Glibc)
import Glibc
#endif

/// `photowall watch [--json]`: follows the live wall (Parse LiveQuery at the server's `ws://…/parse`):
/// one line per new photo and per new comment that the logged-in user may see, as they happen;
/// reconnects by itself with backoff.
enum WatchCommand {
    static let help = """
        usage: photowall watch [--json] [--server URL] [--app-id ID]

        Follows your wall live: a line for each new photo and each new comment you may see (yours and
        your friends'), as they are posted, until Ctrl-C. It reconnects by itself when the connection drops.

          new photo · Ann Lee · "Sunset at the beach" · id 8fK2a9QxZp
          comment · you on 8fK2a9QxZp: what a sky!

          --json   one JSON object per line (NDJSON): {"type":"photo"|"comment","op":"create"|"enter","object":{…}};
                   notices go to stderr

        Needs `photowall login` first. Speaks ws:// (behind a TLS proxy, watch the plain port).
        Exit codes: 2 not logged in (or the session ended), 64 usage; otherwise it runs until interrupted.

        """

    static func run(_ args: [String]) -> Int32 {
        let o: Options
        do { o = try Options(args, known: ClientTarget.optionNames, flags: ["json", "help"]) } catch {
            return clientFail("watch", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        guard let session = StoredSession.load() else { return clientFail("watch", .notLoggedIn()) }
        let target = ClientTarget(o, session: session)
        guard target.server.hasPrefix("http://") else {
            return clientFail("watch", "only http:// servers can be watched (got \(target.server)); use the plain port behind your TLS proxy",
                              ClientExit.usage)
        }
        let url = "ws://" + target.server.dropFirst("http://".count)
        var backoff = 1
        while true {
            switch follow(url: url, appId: target.appId, session: session, json: o.flag("json")) {
            case .sessionEnded:
                return clientFail("watch", .notLoggedIn(server: target.server, appId: target.appId))
            case .connected:
                backoff = 1
            case .failed(let why):
                Terminal.write("photowall watch: \(why); reconnecting in \(backoff) s\n", to: 2)
                sleep(UInt32(backoff))
                backoff = min(backoff * 2, 30)
            }
        }
    }

    enum Outcome { case connected, sessionEnded, failed(String) }

    /// One connection: connect, subscribe to `WallImage` and `WallImageComment` (the server filters by
    /// viewer, so `where: {}` is exactly the wall), print until it ends.
    static func follow(url: String, appId: String, session: StoredSession, json: Bool) -> Outcome {
        let ws: WebSocketClient
        do {
            ws = try WebSocketClient(url: url)
            try ws.send(text: JSON.object(["op": "connect", "applicationId": .string(appId),
                                           "sessionToken": .string(session.sessionToken)]).text)
            for (id, className) in [(1, "WallImage"), (2, "WallImageComment")] {
                try ws.send(text: JSON.object(["op": "subscribe", "requestId": .number(Double(id)),
                                               "query": ["className": .string(className), "where": [:]]]).text)
            }
        } catch {
            return .failed("\(error)")
        }
        var subscribed = 0
        // The server pings every 10 s (by default): a minute of silence means the connection is gone.
        while let text = ws.receive(idleSeconds: 60) {
            guard let m = try? JSON.parse(text), let op = m["op"]?.stringValue else { continue }
            switch op {
            case "subscribed":
                subscribed += 1
                if subscribed == 2 { Terminal.write("photowall watch: following \(url)\n", to: 2) }
            case "error":
                if m["code"]?.intValue == 209 { return .sessionEnded }
                return .failed("server error \(m["code"]?.intValue ?? 0): \(m["error"]?.stringValue ?? "")")
            case "create", "enter":
                guard let object = m["object"], let className = object["className"]?.stringValue else { continue }
                let type = className == "WallImage" ? "photo" : "comment"
                if json {
                    Terminal.write(JSON.object(["type": .string(type), "op": .string(op), "object": object]).text + "\n", to: 1)
                } else {
                    Terminal.write(line(type: type, object, me: session.objectId), to: 1)
                }
            default:
                continue
            }
        }
        return subscribed == 2 ? .failed("connection lost") : .failed("no answer from the server")
    }

    /// `new photo · Ann Lee · "caption" · id X` or `comment · Ann Lee on X: text`.
    static func line(type: String, _ object: JSON, me: String) -> String {
        let who = FeedCommand.author(object["user"], me: me)
        let id = object["objectId"]?.stringValue ?? "?"
        if type == "photo" {
            var parts = ["new photo", who]
            if let caption = object["caption"]?.stringValue, !caption.isEmpty { parts.append("\"\(FeedCommand.oneLine(caption))\"") }
            parts.append("id \(id)")
            return parts.joined(separator: " · ") + "\n"
        }
        let image = object["imageObjectId"]?.stringValue ?? "?"
        return "comment · \(who) on \(image): \(FeedCommand.oneLine(object["comment"]?.stringValue ?? ""))\n"
    }
}
