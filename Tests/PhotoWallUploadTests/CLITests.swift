import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// `photowall login`, `logout` and `upload` as a user runs them: the real binary, its exit codes
/// and one-line messages, the objects it saves, its JSON events, and resuming an interrupted run.
@Suite struct CLITests {
    /// A fresh user on the shared server and a CLI home that is logged in as them.
    static func loggedIn(_ home: String, server: ParseTestServer = sharedServer) async throws -> (CLIRunner, String, String) {
        let name = "cli_\(UUID().uuidString.prefix(8))"
        let (id, _) = try await server.signUp(name, password: "pw-\(name)")
        let cli = CLIRunner(home: home)
        let r = try await onThread { try cli.login(server, name, password: "pw-\(name)") }
        #expect(r.code == 0, "\(r.stderr)")
        return (cli, name, id)
    }

    @Test func loginStoresTheSessionPrivatelyAndLogoutRemovesIt() async throws {
        try await withTemporaryDirectory { home in
            let name = "cli_\(UUID().uuidString.prefix(8))"
            let (id, _) = try await sharedServer.signUp(name, password: "secret")
            let cli = CLIRunner(home: home)

            let wrong = try await onThread { try cli.run(["login", name, "--password", "nope", "--server", sharedServer.baseURL, "--app-id", sharedServer.appId]) }
            #expect(wrong.code == 1)
            #expect(wrong.stderr == "photowall login: invalid username or password: check them and run photowall login again\n")

            // The password from standard input (not a terminal).
            let r = try await onThread { try cli.run(["login", name, "--server", sharedServer.baseURL, "--app-id", sharedServer.appId], stdin: "secret\n") }
            #expect(r.code == 0)
            #expect(r.stdout == "Logged in to \(sharedServer.baseURL) as \(name).\n")
            let path = cli.configDir + "/session.json"
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let session = try JSON.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(session["server"]?.stringValue == sharedServer.baseURL)
            #expect(session["appId"]?.stringValue == sharedServer.appId)
            #expect(session["objectId"]?.stringValue == id)
            let token = try #require(session["sessionToken"]?.stringValue)
            #expect(try await sharedServer.request("GET", "/users/me", key: .session(token)).status == 200)

            // PHOTOWALL_PASSWORD works too.
            let again = try await onThread { try cli.run(["login", name, "--server", sharedServer.baseURL, "--app-id", sharedServer.appId],
                                                         env: ["PHOTOWALL_PASSWORD": "secret"]) }
            #expect(again.code == 0)
            let token2 = try #require(try JSON.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))["sessionToken"]?.stringValue)
            #expect(token2 != token)

            let out = try await onThread { try cli.run(["logout"]) }
            #expect(out.code == 0)
            #expect(out.stdout == "Logged out of \(sharedServer.baseURL).\n")
            #expect(!FileManager.default.fileExists(atPath: path))
            let me = try await sharedServer.request("GET", "/users/me", key: .session(token2))
            #expect(me.status == 400 && me.text.contains(#""code":209"#), "\(me.status) \(me.text)")
        }
    }

    /// A save refused because the server's renders are too far behind (124, HTTP 503, `Retry-After`) is
    /// tried again by the CLI, which shows why ("server busy making thumbnails") and posts the photo
    /// once the backlog is gone, with its thumbnail. The server has one render thread and a 1 ms wait
    /// limit, and 60-megapixel photos are uploaded while the CLI runs, until the server logs that a save
    /// gave up waiting. Should a loaded test run pace the uploads so that the CLI's save still finds the
    /// render thread idle (no refusal: the run posts its photo at once), another photo is uploaded the
    /// same way, up to three. Every run must succeed; without the retry a refused run exits 1 with its
    /// photo unposted.
    @Test func uploadRetriesASaveRefusedWhileRendersAreBehind() async throws {
        let server = try ParseTestServer(extraArgs: ["--thumbnail-threads", "1", "--render-wait-limit", "0.001"])
        defer { server.stop() }
        try await withTemporaryDirectory { home in
            let (cli, _, userId) = try await Self.loggedIn(home, server: server)
            let (_, token) = try await server.signUp()
            let big = Data(PNGFile.stripes(width: 8000, height: 7500))
            @Sendable func uploadBig() async throws {
                let up = try await server.request("POST", "/files/big.png", body: big, key: .session(token), headers: ["Content-Type": "image/png"])
                #expect(up.status == 201, "\(up.text)")
            }
            let refusal = "a save gave up waiting for its render to start"
            var retried: [[String: Any]] = []
            for attempt in 0..<3 where retried.isEmpty {
                for _ in 0..<2 { try await uploadBig() }
                // A photo of its own per attempt: the CLI skips one it posted already.
                let photo = try TestFiles.write(PNGFile.stripes(width: 320 + 8 * attempt, height: 200), named: "small\(attempt).png", in: home)
                let refusalsBefore = server.serverLog().components(separatedBy: refusal).count
                let ended = Flag()
                async let run = onThread { () throws -> CLIRunner.Outcome in
                    defer { _ = ended.setOnce() }
                    return try cli.run(["upload", photo, "--json"])
                }
                var fed = 0
                while server.serverLog().components(separatedBy: refusal).count == refusalsBefore,
                      !ended.isSet, fed < 10 {
                    try await uploadBig()
                    fed += 1
                }
                let r = try await run
                #expect(r.code == 0, "\(r.stderr)")
                retried = r.events.filter { $0["event"] as? String == "retry" }
                let done = try #require(r.events.last { $0["event"] as? String == "done" })
                let id = try #require(done["wallImageId"] as? String)
                let saved = try await server.request("GET", "/classes/WallImage/\(id)", key: .master(nil))
                #expect(saved.json["user"]?["objectId"]?.stringValue == userId)
                #expect(saved.json["width"]?.intValue == 320 + 8 * attempt && saved.json["thumbnail"]?["name"]?.stringValue != nil, "\(saved.text)")
            }
            #expect(!retried.isEmpty && retried.allSatisfy { ($0["message"] as? String)?.hasPrefix("server busy making thumbnails, retrying in ") == true },
                    "\(retried)")
        }
    }

    @Test func uploadPostsAWallImageWithItsComment() async throws {
        try await withTemporaryDirectory { home in
            let (cli, _, userId) = try await Self.loggedIn(home)
            let photo = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 3 << 20), named: "sunset at sea.png", in: home)
            let r = try await onThread { try cli.run(["upload", photo, "--comment", "What a view", "--chunk-size", "256k", "--json"]) }
            #expect(r.code == 0, "\(r.stderr)")
            #expect(r.stderr == "")
            let events = r.events
            let kinds = events.compactMap { $0["event"] as? String }
            #expect(kinds.first == "start" && kinds.dropFirst().first == "created")
            #expect(Array(kinds.suffix(3)) == ["uploaded", "done", "summary"])
            // The file's plain URL answers 404 once it is on the wall: `uploaded` names the file only.
            let uploaded = try #require(events.first { $0["event"] as? String == "uploaded" })
            #expect(uploaded["url"] == nil && uploaded["fileName"] is String)
            let summary = try #require(events.last)
            #expect(summary["uploaded"] as? Int == 1 && summary["refused"] as? Int == 0 && summary["failed"] as? Int == 0)
            #expect(summary["totalBytes"] as? Int == 3 << 20)
            let progress = events.filter { $0["event"] as? String == "progress" }.compactMap { $0["sentBytes"] as? Int }
            #expect(progress == progress.sorted() && Set(progress).count == progress.count, "monotonic")
            #expect(progress.last == 3 << 20 && progress.filter { $0 == 3 << 20 }.count == 1)
            let done = try #require(events.last { $0["event"] as? String == "done" })
            #expect(done["totalBytes"] as? Int == 3 << 20)
            let imageId = try #require(done["wallImageId"] as? String)
            let commentId = try #require(done["commentId"] as? String)
            let fileName = try #require(done["fileName"] as? String)
            #expect(fileName.hasSuffix("_sunset_at_sea.png"))  // the safe form of "sunset at sea.png"

            // What the seed app's Comms.uploadImage saves, checked over REST.
            let image = try await sharedServer.request("GET", "/classes/WallImage/\(imageId)", key: .master(nil)).json
            #expect(image["image"]?["name"]?.stringValue == fileName)
            #expect(image["user"] == ["__type": "Pointer", "className": "_User", "objectId": .string(userId)])
            #expect(image["userFBId"]?.stringValue == userId)  // no fbId: the objectId stands in
            #expect(image["thumbnail"]?.parseType == "File" && image["width"]?.intValue == 16)
            let comment = try await sharedServer.request("GET", "/classes/WallImageComment/\(commentId)", key: .master(nil)).json
            #expect(comment["comment"]?.stringValue == "What a view")
            #expect(comment["imageObjectId"]?.stringValue == imageId)
            #expect(comment["user"]?["objectId"]?.stringValue == userId)
            #expect(comment["userFBId"]?.stringValue == userId)
            // The bytes arrived whole; nothing is left to resume.
            let file = try await sharedServer.request("GET", image["image"]?["url"]?.stringValue ?? "", key: .none)
            #expect(TestFiles.sha256(file.body) == (try TestFiles.sha256(ofFile: photo)))
            #expect(cli.resumeStates.isEmpty)
            // The done event carries the signed URLs that work once the file is on the wall.
            let signed = try await sharedServer.request("GET", try #require(done["imageURL"] as? String), key: .none)
            #expect(TestFiles.sha256(signed.body) == (try TestFiles.sha256(ofFile: photo)))
            let thumb = try await sharedServer.request("GET", try #require(done["thumbnailURL"] as? String), key: .none)
            #expect(thumb.status == 200 && thumb.body.count > 0)
        }
    }

    @Test func plainOutputAndParallelFiles() async throws {
        try await withTemporaryDirectory { home in
            let (cli, _, _) = try await Self.loggedIn(home)
            let files = try (0..<3).map { try TestFiles.write(TestFiles.paddedPNG(totalBytes: 1 << 20), named: "p\($0).png", in: home) }
            let r = try await onThread { try cli.run(["upload"] + files + ["--parallel", "3", "--chunk-size", "128k"]) }
            #expect(r.code == 0, "\(r.stderr)")
            let lines = r.stdout.split(separator: "\n")
            for i in 0..<3 {
                let mine = lines.filter { $0.hasPrefix("p\(i).png: ") }
                #expect(mine.contains { $0.hasPrefix("p\(i).png: 1.0 MiB / 1.0 MiB  100%") }, "\(mine)")
                #expect(mine.last?.hasPrefix("p\(i).png: done: WallImage ") == true, "\(mine)")
            }
            #expect(lines.last?.range(of: #"^3 uploaded; 3\.0 MiB in \d+\.\d s$"#, options: .regularExpression) != nil, "\(lines.last ?? "")")
        }
    }

    @Test func notLoggedInExitsWith2() async throws {
        try await withTemporaryDirectory { home in
            let photo = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 10_000), named: "a.png", in: home)
            let cli = CLIRunner(home: home)
            let r = try await onThread { try cli.run(["upload", photo, "--server", sharedServer.baseURL]) }
            #expect(r.code == 2)
            #expect(r.stderr == "photowall upload: not logged in: log in with `photowall login USERNAME` or `photowall login --facebook` "
                    + "(--as NAME with the mock provider)\n")
            let json = try await onThread { try cli.run(["upload", photo, "--json"]) }
            #expect(json.code == 2)
            #expect(json.events.first?["code"] as? String == "not-logged-in")
            #expect(json.events.first?["exitCode"] as? Int == 2)
        }
    }

    @Test func unreachableServerExitsWith5() async throws {
        try await withTemporaryDirectory { home in
            let cli = CLIRunner(home: home)
            let dead = "http://127.0.0.1:\(freePort())/parse"
            try FileManager.default.createDirectory(atPath: cli.configDir, withIntermediateDirectories: true)
            let session: JSON = ["server": .string(dead), "appId": "photowall", "sessionToken": "r:0123456789abcdef0123456789abcdef",
                                 "username": "x", "objectId": "abcdefghij"]
            try Data(session.serialized).write(to: URL(fileURLWithPath: cli.configDir + "/session.json"))
            let photo = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 10_000), named: "a.png", in: home)
            let r = try await onThread { try cli.run(["upload", photo]) }
            #expect(r.code == 5)
            #expect(r.stderr == "photowall upload: server unreachable at \(dead): check that it runs (photowall serve) and run the command again\n")
            let login = try await onThread { try cli.run(["login", "x", "--password", "y", "--server", dead]) }
            #expect(login.code == 5)
            #expect(login.stderr == "photowall login: server unreachable at \(dead): check that it runs (photowall serve) and run the command again\n")
            // An unreachable Facebook provider is named as such.
            let fbDead = "http://127.0.0.1:\(freePort())"
            let fb = try await onThread { try cli.run(["login", "--facebook", "--as", "x", "--facebook-url", fbDead, "--facebook-app-id", "1", "--server", dead]) }
            #expect(fb.code == 5)
            #expect(fb.stderr == "photowall login: the Facebook provider is unreachable at \(fbDead): check that it runs "
                    + "(make run starts the mock one; or photowall mock-facebook) and run the command again\n")
            // feed and comment say the same, not libcurl's words.
            let feed = try await onThread { try cli.run(["feed"]) }
            #expect(feed.code == 5)
            #expect(feed.stderr == "photowall feed: server unreachable at \(dead): check that it runs (photowall serve) and run the command again\n")
        }
    }

    @Test func unsupportedTypeExitsWith3BeforeUploading() async throws {
        try await withTemporaryDirectory { home in
            let (cli, _, _) = try await Self.loggedIn(home)
            let gif = try TestFiles.write(Array("GIF89a".utf8) + TestFiles.randomBytes(2000), named: "anim.gif", in: home)
            let text = try TestFiles.write(Array("hello, world\n".utf8), named: "notes.png", in: home)
            let r = try await onThread { try cli.run(["upload", gif]) }
            #expect(r.code == 3)
            #expect(r.stderr == "photowall upload: \(gif): unsupported type (GIF); only JPEG, PNG, WebP, HEIC and AVIF can be posted\n")
            #expect(r.stdout.range(of: #"^0 uploaded, 1 refused \(unsupported type\); 0 B in \d+\.\d s\n$"#, options: .regularExpression) != nil, "\(r.stdout)")
            let r2 = try await onThread { try cli.run(["upload", text]) }
            #expect(r2.code == 3)
            #expect(r2.stderr == "photowall upload: \(text): unsupported type (not an image); only JPEG, PNG, WebP, HEIC and AVIF can be posted\n")
            #expect(cli.resumeStates.isEmpty, "nothing was started")
            let missing = try await onThread { try cli.run(["upload", home + "/nope.png"]) }
            #expect(missing.code == 66)
            #expect(missing.stderr == "photowall upload: \(home)/nope.png: No such file or directory: check the path and that the file is readable\n")
        }
    }

    @Test func tooLargeExitsWith4() async throws {
        try await withTemporaryDirectory { home in
            let (cli, _, _) = try await Self.loggedIn(home)
            let big = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 1000), named: "huge.png", in: home)
            #expect(truncate(big, (20 << 20) + (1 << 20)) == 0)  // sparse: 21 MiB, starts like a PNG
            let r = try await onThread { try cli.run(["upload", big]) }
            #expect(r.code == 4)
            #expect(r.stderr == "photowall upload: \(big): too large (21.0 MiB; the server accepts at most 20.0 MiB): choose a smaller file\n")
        }
    }

    @Test func anInterruptedRunResumesWhenRunAgain() async throws {
        try await withTemporaryDirectory { home in
            let (cli, _, _) = try await Self.loggedIn(home)
            let total = 16 << 20
            let photo = try TestFiles.write(TestFiles.paddedPNG(totalBytes: total), named: "long.png", in: home)
            let args = ["upload", photo, "--comment", "resumed", "--chunk-size", "64k", "--json"]

            // Ctrl-C once a chunk is surely stored. `sentBytes` counts bytes handed to the connection, not
            // confirmed ones, and a cut PATCH with a checksum (the CLI's default) keeps nothing. At most four
            // PATCHes are in flight (`UploadRun.pipelineDepth`), so a fifth chunk's bytes go out only after the
            // first one was answered: past four chunks, the server has committed at least one.
            let confirmedAfter = 4 * 64 * 1024
            let out = Pipe()
            let p = try cli.start(args, stdout: .pipe(out), stderr: .null)
            let firstRun = await onThread { () -> String in
                var text = ""
                let handle = out.fileHandleForReading
                var interrupted = false
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                    let sent = text.matches(of: /"sentBytes":(\d+)/).compactMap { Int($0.1) }.max() ?? 0
                    if !interrupted, sent > confirmedAfter {
                        p.signal(SIGINT)
                        interrupted = true
                    }
                }
                p.waitUntilExit()
                return text
            }
            #expect(p.terminationStatus == 130, "\(firstRun.suffix(500))")
            #expect(!firstRun.contains(#""event":"done""#))
            #expect(cli.resumeStates.count == 1)

            // The same command again picks up where the server's offset is.
            let r = try await onThread { try cli.run(args) }
            #expect(r.code == 0, "\(r.stderr)")
            let resumed = try #require(r.events.first { $0["event"] as? String == "resumed" })
            let offset = try #require(resumed["offset"] as? Int)
            #expect(offset > 0 && offset < total)
            #expect(!r.events.contains { $0["event"] as? String == "created" })
            let done = try #require(r.events.last { $0["event"] as? String == "done" })
            #expect(r.events.last?["event"] as? String == "summary")
            #expect(r.events.filter { $0["event"] as? String == "progress" }.last?["sentBytes"] as? Int == total)
            let image = try await sharedServer.request("GET", "/classes/WallImage/\(done["wallImageId"] as? String ?? "")", key: .master(nil)).json
            let file = try await sharedServer.request("GET", image["image"]?["url"]?.stringValue ?? "", key: .none)
            #expect(TestFiles.sha256(file.body) == (try TestFiles.sha256(ofFile: photo)))
            #expect(cli.resumeStates.isEmpty)
        }
    }

    @Test func oneBadFileDoesNotStopTheBatch() async throws {
        try await withTemporaryDirectory { home in
            let (cli, _, _) = try await Self.loggedIn(home)
            let good = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 100_000), named: "good.png", in: home)
            let gif = try TestFiles.write(Array("GIF89a".utf8) + TestFiles.randomBytes(2000), named: "anim.gif", in: home)
            let big = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 1000), named: "huge.png", in: home)
            #expect(truncate(big, 21 << 20) == 0)
            let other = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 50_000), named: "other.png", in: home)
            let r = try await onThread { try cli.run(["upload", gif, good, home + "/nope.png", big, other]) }
            #expect(r.code == 3, "the first refused file's code")
            let lines = r.stdout.split(separator: "\n")
            #expect(lines.contains { $0.hasPrefix("good.png: done: WallImage ") }, "\(r.stdout)")
            #expect(lines.contains { $0.hasPrefix("other.png: done: WallImage ") }, "\(r.stdout)")
            #expect(lines.last?.range(of: #"^2 uploaded, 3 refused \(unsupported type, unreadable, too large\); 146\.5 KiB in \d+\.\d s$"#,
                                      options: .regularExpression) != nil, "\(lines.last ?? "")")
            #expect(r.stderr == """
                photowall upload: \(gif): unsupported type (GIF); only JPEG, PNG, WebP, HEIC and AVIF can be posted
                photowall upload: \(home)/nope.png: No such file or directory: check the path and that the file is readable
                photowall upload: \(big): too large (21.0 MiB; the server accepts at most 20.0 MiB): choose a smaller file

                """)
            // --json: an error event per refused file, and the summary last (`other` is posted already: skipped).
            let json = try await onThread { try cli.run(["upload", gif, other, "--json"]) }
            #expect(json.code == 3)
            #expect(json.events.first?["event"] as? String == "error" && json.events.first?["file"] as? String == gif)
            #expect(json.events.first?["code"] as? String == "unsupported-type")
            #expect(json.events.dropFirst().first?["event"] as? String == "skipped" && json.events.dropFirst().first?["file"] as? String == other)
            let summary = try #require(json.events.last)
            #expect(summary["event"] as? String == "summary" && summary["uploaded"] as? Int == 0 && summary["skipped"] as? Int == 1
                    && summary["refused"] as? Int == 1)
        }
    }

    @Test func versionAndHelp() async throws {
        try await withTemporaryDirectory { home in
            let cli = CLIRunner(home: home)
            let version = try await onThread { try cli.run(["--version"]) }
            #expect(version.code == 0)
            #expect(version.stdout.range(of: #"^photowall \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(version.stdout)")
            let help = try await onThread { try cli.run(["--help"]) }
            #expect(help.code == 0)
            for heading in ["Run a wall:", "Use a wall from the command line:", "Tools:", "Examples:"] {
                #expect(help.stdout.contains("\n\(heading)\n"), "\(heading)")
            }
            #expect(help.stdout.contains("photowall login --facebook [--as USER]"))
            let serve = try await onThread { try cli.run(["serve", "--help"]) }
            #expect(serve.code == 0)
            let serveLines = serve.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(serveLines.prefix(3) == ["usage: photowall serve [options]", "", "  photowall serve                          # the wall on http://127.0.0.1:1337/, the API under /parse,"])
            for heading in ["Network:", "Data:", "Facebook login:", "Resumable uploads (tus):"] { #expect(serveLines.contains(Substring(heading)), "\(heading)") }
            let unknown = try await onThread { try cli.run(["nope"]) }
            #expect(unknown.code == 64)
            #expect(unknown.stderr.hasPrefix("photowall: unknown command 'nope'\n"))
            let feed = try await onThread { try cli.run(["feed"]) }
            #expect(feed.code == 2)
            #expect(feed.stderr == "photowall feed: not logged in: log in with `photowall login USERNAME` or `photowall login --facebook` "
                    + "(--as NAME with the mock provider)\n")
        }
    }

    @Test func feedForPeople() async throws {
        try await withTemporaryDirectory { home in
            let (cli, _, _) = try await Self.loggedIn(home)
            let photo = try TestFiles.write(TestFiles.paddedPNG(totalBytes: 20_000), named: "beach.png", in: home)
            let up = try await onThread { try cli.run(["upload", photo, "--comment", "first!", "--json"]) }
            #expect(up.code == 0, "\(up.stderr)")
            let imageId = try #require(up.events.last { $0["event"] as? String == "done" }?["wallImageId"] as? String)
            let caption = try await sharedServer.request("PUT", "/classes/WallImage/\(imageId)", json: ["caption": "Sunset\nat the beach"], key: .master(nil))
            #expect(caption.status == 200, "\(caption.text)")
            let feed = try await onThread { try cli.run(["feed", "--limit", "1"]) }
            #expect(feed.code == 0, "\(feed.stderr)")
            let lines = feed.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "you · just now · \"Sunset at the beach\" · 1 comment · id \(imageId)", "\(feed.stdout)")
            #expect(lines.dropFirst().first == "    you: first!")
            #expect(!feed.stdout.contains("http"), "URLs only with --urls")
            let urls = try await onThread { try cli.run(["feed", "--limit", "1", "--urls"]) }
            #expect(urls.stdout.split(separator: "\n").contains { $0.hasPrefix("    http://127.0.0.1:") && $0.contains("sig=") }, "\(urls.stdout)")

            // A session the server no longer accepts reads as in upload.
            let path = cli.configDir + "/session.json"
            let stored = try JSON.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
            let session: JSON = ["server": stored["server"] ?? .null, "appId": stored["appId"] ?? .null,
                                 "sessionToken": "r:00000000000000000000000000000000", "username": "x", "objectId": "abcdefghij"]
            try Data(session.serialized).write(to: URL(fileURLWithPath: path))
            let stale = try await onThread { try cli.run(["feed"]) }
            #expect(stale.code == 2)
            #expect(stale.stderr == "photowall feed: the session is no longer valid: log in with `photowall login USERNAME` or "
                    + "`photowall login --facebook` (--as NAME with the mock provider)\n")
        }
    }
}

