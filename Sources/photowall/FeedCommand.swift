import PhotoWallClient
import PhotoWallCore

/// `photowall feed [--limit N] [--cursor C] [--urls] [--json]`: the wall of the logged-in user (their
/// photos and their friends'), newest first, for people: author, relative time, caption, comment count
/// and the photo's id (for `photowall comment`), then the latest comments. `--urls` adds the signed image
/// URLs; `--json` prints the feed function's answer as it came.
enum FeedCommand {
    static let help = """
        usage: photowall feed [--limit N] [--cursor C] [--urls] [--json] [--server URL] [--app-id ID]

        Prints your wall: your photos and your friends', newest first. Each photo is one line —
        author, when ("3 min ago"), caption, comment count and its id — then its latest comments:

          Ann Lee · 3 min ago · "Sunset at the beach" · 2 comments · id 8fK2a9QxZp
              you: what a sky!

          --limit N    photos per page (default 20)
          --cursor C   the next page (the last line names it)
          --urls       also print each photo's signed image URL
          --json       the feed function's answer as JSON (URLs included)

        Comment on a photo with `photowall comment ID TEXT`. Needs `photowall login` first.
        Exit codes: 0 ok, 2 not logged in, 5 server unreachable, 1 other failures, 64 usage.

        """

    static func run(_ args: [String]) -> Int32 {
        let o: Options
        do { o = try Options(args, known: ["limit", "cursor"].reduce(into: ClientTarget.optionNames) { $0.insert($1) }, flags: ["json", "urls", "help"]) } catch {
            return clientFail("feed", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        guard let session = StoredSession.load() else { return clientFail("feed", .notLoggedIn()) }
        let target = ClientTarget(o, session: session)
        var params: [String: JSON] = [:]
        if let l = o.value("limit") {
            guard let n = Int(l), n > 0 else { return clientFail("feed", "--limit needs a positive number", ClientExit.usage) }
            params["limit"] = .number(Double(n))
        }
        if let c = o.value("cursor") { params["cursor"] = .string(c) }
        do {
            let client = try ParseClient(server: target.parseServer(.sessionToken(session.sessionToken)))
            let result = try client.callFunction("feed", params: .object(params))
            if o.flag("json") {
                Terminal.write(result.text + "\n", to: 1)
                return ClientExit.ok
            }
            let images = result["images"]?.arrayValue ?? []
            if images.isEmpty { Terminal.write("Your wall is empty: upload a photo with `photowall upload FILE`.\n", to: 1) }
            let now = ParseDate.now()
            for img in images { Terminal.write(render(img, now: now, me: session.objectId, urls: o.flag("urls")), to: 1) }
            if let next = result["nextCursor"]?.stringValue { Terminal.write("more: photowall feed --cursor \(next)\n", to: 1) }
            return ClientExit.ok
        } catch {
            return clientFail("feed", ClientFailure(error, server: target.server))
        }
    }

    /// One photo of the feed: `Ann Lee · 3 min ago · "caption" · 2 comments · id 8fK2a9QxZp`, then the
    /// latest comments indented (and the signed image URL with `urls`). The user `me` is "you".
    static func render(_ img: JSON, now: ParseDate, me: String, urls: Bool) -> String {
        var parts = [author(img["user"], me: me)]
        if let iso = img["createdAt"]?.stringValue, let date = ParseDate(iso: iso) { parts.append(relativeTime(date, now: now)) }
        if let caption = img["caption"]?.stringValue, !caption.isEmpty { parts.append("\"\(oneLine(caption))\"") }
        let count = img["commentCount"]?.intValue ?? 0
        parts.append(count == 1 ? "1 comment" : "\(count) comments")
        parts.append("id \(img["objectId"]?.stringValue ?? "?")")
        var out = parts.joined(separator: " · ") + "\n"
        for c in img["comments"]?.arrayValue ?? [] {
            out += "    \(author(c["user"], me: me)): \(oneLine(c["comment"]?.stringValue ?? ""))\n"
        }
        if urls, let url = img["image"]?["url"]?.stringValue { out += "    \(url)\n" }
        return out
    }

    /// The user's name, else their Facebook id or objectId; "you" for `me`.
    static func author(_ user: JSON?, me: String) -> String {
        if let id = user?["objectId"]?.stringValue, id == me { return "you" }
        return user?["name"]?.stringValue ?? user?["fbId"]?.stringValue ?? user?["objectId"]?.stringValue ?? "someone"
    }

    /// `text` on one line (newlines and tabs become spaces).
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }

    /// "just now", "3 min ago", "5 h ago", "yesterday", "4 days ago", then the date (`2026-03-01`).
    static func relativeTime(_ date: ParseDate, now: ParseDate) -> String {
        let seconds = max(0, (now.millisecondsSince1970 - date.millisecondsSince1970) / 1000)
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86_400: return "\(seconds / 3600) h ago"
        case ..<172_800: return "yesterday"
        case ..<(7 * 86_400): return "\(seconds / 86_400) days ago"
        default: return String(date.iso.prefix(10))
        }
    }
}

/// `photowall comment IMAGE_ID TEXT`: adds a comment to a photo you can see.
enum CommentCommand {
    static let help = """
        usage: photowall comment IMAGE_ID TEXT [--server URL] [--app-id ID]

        Adds a comment to a photo on your wall (see `photowall feed` for ids). Prints the comment's id.
        Exit codes: 0 ok, 2 not logged in, 5 server unreachable, 1 other failures (e.g. no such photo), 64 usage.

        """

    static func run(_ args: [String]) -> Int32 {
        let o: Options
        do { o = try Options(args, known: ClientTarget.optionNames, flags: ["help"]) } catch {
            return clientFail("comment", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        guard o.positional.count == 2, !o.positional[1].isEmpty else { return clientFail("comment", "needs IMAGE_ID and TEXT", ClientExit.usage) }
        guard let session = StoredSession.load() else { return clientFail("comment", .notLoggedIn()) }
        let target = ClientTarget(o, session: session)
        do {
            let client = try ParseClient(server: target.parseServer(.sessionToken(session.sessionToken)))
            let id = try client.createObject(className: "WallImageComment", fields: [
                "comment": .string(o.positional[1]), "imageObjectId": .string(o.positional[0]),
            ])
            Terminal.write("\(id)\n", to: 1)
            return ClientExit.ok
        } catch {
            return clientFail("comment", ClientFailure(error, server: target.server))
        }
    }
}
