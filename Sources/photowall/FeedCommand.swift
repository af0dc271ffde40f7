import PhotoWallClient
import PhotoWallCore

/// `photowall feed [--limit N] [--cursor C] [--json]`: the wall of the logged-in user (their photos
/// and their friends'), newest first, with the latest comments; `--json` prints the feed function's
/// answer as it came.
enum FeedCommand {
    static let help = """
        usage: photowall feed [--limit N] [--cursor C] [--json] [--server URL] [--app-id ID]

        Prints your wall: your photos and your friends', newest first, with the latest comments.
        The last line gives the cursor for the next page (--cursor). Needs `photowall login` first.
        Exit codes: 0 ok, 2 not logged in, 5 server unreachable, 1 other failures, 64 usage.

        """

    static func run(_ args: [String]) -> Int32 {
        let o: Options
        do { o = try Options(args, known: ["limit", "cursor"].reduce(into: ClientTarget.optionNames) { $0.insert($1) }, flags: ["json", "help"]) } catch {
            return clientFail("feed", "\(error)", ClientExit.usage)
        }
        if o.flag("help") { Terminal.write(help, to: 1); return 0 }
        guard let session = StoredSession.load() else { return clientFail("feed", "not logged in: run `photowall login` first", ClientExit.notLoggedIn) }
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
            for img in images {
                let who = img["user"]?["name"]?.stringValue ?? img["user"]?["fbId"]?.stringValue ?? "someone"
                let caption = img["caption"]?.stringValue.map { " — \($0)" } ?? ""
                Terminal.write("\(img["objectId"]?.stringValue ?? "?")  \(img["createdAt"]?.stringValue ?? "")  \(who)\(caption)\n", to: 1)
                if let url = img["thumbnail"]?["url"]?.stringValue ?? img["image"]?["url"]?.stringValue { Terminal.write("    \(url)\n", to: 1) }
                let count = img["commentCount"]?.intValue ?? 0
                for c in img["comments"]?.arrayValue ?? [] {
                    Terminal.write("    \(c["user"]?["name"]?.stringValue ?? "someone"): \(c["comment"]?.stringValue ?? "")\n", to: 1)
                }
                let shown = img["comments"]?.arrayValue?.count ?? 0
                if count > shown { Terminal.write("    (\(count - shown) earlier comment\(count - shown == 1 ? "" : "s"))\n", to: 1) }
            }
            if let next = result["nextCursor"]?.stringValue { Terminal.write("more: photowall feed --cursor \(next)\n", to: 1) }
            return ClientExit.ok
        } catch {
            return clientFail("feed", error.message, ClientExit.code(for: error))
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
        guard let session = StoredSession.load() else { return clientFail("comment", "not logged in: run `photowall login` first", ClientExit.notLoggedIn) }
        let target = ClientTarget(o, session: session)
        do {
            let client = try ParseClient(server: target.parseServer(.sessionToken(session.sessionToken)))
            let id = try client.createObject(className: "WallImageComment", fields: [
                "comment": .string(o.positional[1]), "imageObjectId": .string(o.positional[0]),
            ])
            Terminal.write("\(id)\n", to: 1)
            return ClientExit.ok
        } catch {
            return clientFail("comment", error.message, ClientExit.code(for: error))
        }
    }
}
