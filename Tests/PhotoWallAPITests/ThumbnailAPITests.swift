import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore
import PhotoWallCrypto

/// Saving a `WallImage` with an `image` makes its `thumbnail` and `display` files on the server.
@Suite struct ThumbnailAPITests {
    let s = sharedServer

    func corpusFile(_ path: String) throws -> Data {
        try Data(contentsOf: try #require(TestPaths.corpus).appendingPathComponent(path))
    }

    /// Width and height of a JPEG from its SOF marker.
    func jpegSize(_ d: Data) -> (Int, Int)? {
        let b = [UInt8](d)
        var i = 2
        while i + 9 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            let len = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                return (Int(b[i + 7]) << 8 | Int(b[i + 8]), Int(b[i + 5]) << 8 | Int(b[i + 6]))
            }
            i += 2 + len
        }
        return nil
    }

    @Test(.enabled(if: TestPaths.corpus != nil, "SKIPPED: the shared image corpus is not present"))
    func wallImageGetsThumbnailAndDisplay() async throws {
        let (_, token) = try await s.signUp()
        // Stored 2048x1536 with EXIF orientation 6: upright it is 1536x2048.
        let photo = try corpusFile("exif-orientation/canon_sx60_orientation6_2048x1536.jpg")
        let up = try await s.request("POST", "/files/canon.jpg", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
        let name = try #require(up.json["name"]?.stringValue)
        let c = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]],
                                    key: .session(token))
        #expect(c.status == 201, "\(c.text)")
        #expect(c.json["width"] == 1536)
        #expect(c.json["height"] == 2048)
        let thumbURL = try #require(c.json["thumbnail"]?["url"]?.stringValue)
        #expect(c.json["thumbnail"]?["name"]?.stringValue?.hasSuffix("_canon_thumbnail.jpg") == true)
        let id = try #require(c.json["objectId"]?.stringValue)
        let got = try await s.request("GET", "/classes/WallImage/\(id)", key: .session(token))
        #expect(got.json["thumbnail"]?["name"] == c.json["thumbnail"]?["name"])
        #expect(got.json["display"]?["url"] != nil)
        #expect(got.json["width"] == 1536)

        let thumb = try await s.request("GET", thumbURL, key: .none)
        #expect(thumb.status == 200)
        #expect(thumb.header("Content-Type") == "image/jpeg")
        let t = try #require(jpegSize(thumb.body))
        #expect(t.0 == 192 && t.1 == 256, "upright thumbnail is 192x256, got \(t)")
        let display = try await s.request("GET", try #require(got.json["display"]?["url"]?.stringValue), key: .none)
        let d = try #require(jpegSize(display.body))
        #expect(d.0 == 810 && d.1 == 1080, "display is 810x1080, got \(d)")
    }

    @Test(.enabled(if: TestPaths.corpus != nil, "SKIPPED: the shared image corpus is not present"),
          arguments: ["wrong-format/cogs.gif", "wrong-format/sample.tif", "wrong-format/logo.svg", "truncated-corrupt/truncated_jpeg.jpg"])
    func refusedImagesLeaveNothing(path: String) async throws {
        let (_, token) = try await s.signUp()
        // Sent without claiming an image type: one its bytes contradict is refused before decoding
        // (FileNameTests); here the thumbnailer's own refusal is checked.
        let type = path.hasPrefix("wrong") ? "application/octet-stream" : "image/jpeg"
        let up = try await s.request("POST", "/files/photo.jpg", body: try corpusFile(path), key: .session(token), headers: ["Content-Type": type])
        let name = try #require(up.json["name"]?.stringValue)
        let fb = "refused-\(UUID().uuidString.prefix(8))"
        let c = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)], "caption": .string(fb)],
                                    key: .session(token))
        #expect(c.status == 400)
        #expect(c.json["code"] == 111, "\(c.text)")
        let message = c.json["error"]?.stringValue ?? ""
        #expect(message.hasPrefix(path.hasPrefix("wrong") ? "Unsupported image type: " : "Truncated JPEG image: "), "\(message)")
        #expect(!message.dropFirst().contains(message.prefix(12)), "the reason is said once: \(message)")
        let q = try await s.request("GET", "/classes/WallImage?count=1&limit=0&where=" + enc(["caption": .string(fb)]), key: .master(nil))
        #expect(q.json["count"] == 0)
        #expect(try s.storedFileNames().filter { $0.contains("_photo_") }.isEmpty, "no thumbnail file was left behind")
    }

    /// `photowall samples --help` prints the usage and its options and succeeds; no OUTDIR is a usage error.
    @Test func samplesHelp() throws {
        let help = try runProcess(TestPaths.binary, ["samples", "--help"])
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("usage: photowall samples OUTDIR [--width W] [--height H] [--scenes N]\n"))
        #expect(help.output.contains("--scenes N "))
        let bare = try runProcess(TestPaths.binary, ["samples"])
        #expect(bare.status == 64)
    }

    /// The project's own samples (rendered by `photowall samples`): every EXIF orientation comes out
    /// upright, 1200x800, with a 256x171 thumbnail. Needs no shared corpus.
    @Test func generatedSamplesComeOutUpright() async throws {
        let dir = s.dataDir.appendingPathComponent("samples-\(UUID().uuidString.prefix(6))")
        #expect(try runProcess(TestPaths.binary, ["samples", dir.path, "--width", "600", "--height", "400"]).status == 0)
        let (_, token) = try await s.signUp()
        for o in 1...8 {
            let photo = try Data(contentsOf: dir.appendingPathComponent("landscape_o\(o).jpg"))
            let up = try await s.request("POST", "/files/o\(o).jpg", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
            let name = try #require(up.json["name"]?.stringValue)
            let c = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]], key: .session(token))
            #expect(c.json["width"] == 600 && c.json["height"] == 400, "orientation \(o): \(c.text)")
            let thumb = try await s.request("GET", try #require(c.json["thumbnail"]?["url"]?.stringValue), key: .none)
            let size = try #require(jpegSize(thumb.body))
            #expect(size.0 == 256 && size.1 == 171, "orientation \(o): \(size)")
        }
    }

    /// A photo that already fits both sizes, upright and coded no finer than the thumbnail quality, is
    /// its own thumbnail and display copy: its coded data as sent (no second lossy encode), and none
    /// of its metadata (an EXIF block with a GPS position, a comment, a second image after its end).
    @Test func aSmallPlainPhotoIsItsOwnCopyWithoutItsMetadata() async throws {
        let dir = s.dataDir.appendingPathComponent("samples-\(UUID().uuidString.prefix(6))")
        #expect(try runProcess(TestPaths.binary, ["samples", dir.path, "--width", "600", "--height", "400"]).status == 0)
        let (_, token) = try await s.signUp()
        func wallImage(_ bytes: [UInt8], _ name: String) async throws -> ParseTestServer.Reply {
            let up = try await s.request("POST", "/files/\(name)", body: Data(bytes), key: .session(token), headers: ["Content-Type": "image/jpeg"])
            let file = try #require(up.json["name"]?.stringValue)
            return try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(file)]], key: .session(token))
        }
        func fetch(_ made: ParseTestServer.Reply, _ field: String) async throws -> [UInt8] {
            [UInt8](try await s.request("GET", try #require(made.json[field]?["url"]?.stringValue), key: .none).body)
        }
        // A plain 256x171 JPEG: the server's own thumbnail of a sample photo.
        let first = try await wallImage([UInt8](try Data(contentsOf: dir.appendingPathComponent("landscape_o1.jpg"))), "o1.jpg")
        let plain = try await fetch(first, "thumbnail")
        #expect(jpegSize(Data(plain)).map { [$0.0, $0.1] } == [256, 171])
        // The same with metadata a phone or an editor adds.
        let gps = Array("GPSLatitude 52.5200 N GPSLongitude 13.4050 E".utf8)
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]  // an empty IFD0
        let tagged = JPEGSegments.inserting([JPEGSegments.segment(0xE1, Array("Exif\0\0".utf8) + tiff + gps), JPEGSegments.segment(0xFE, gps)],
                                            into: plain, trailing: [0xFF, 0xD8] + gps + [0xFF, 0xD9])
        let made = try await wallImage(tagged, "tagged.jpg")
        #expect(made.status == 201, "\(made.text)")
        #expect(made.json["width"] == 256 && made.json["height"] == 171)
        for field in ["display", "thumbnail"] {
            let served = try await fetch(made, field)
            #expect(served == plain, "\(field): the photo's own coded data, without its metadata")
            #expect(!String(decoding: served, as: UTF8.self).contains("GPSLatitude"), "\(field)")
        }
    }

    /// A photo is rendered as soon as it is uploaded: the `WallImage` save that names it (Parse's
    /// second step) takes the display and thumbnail made meanwhile instead of rendering then (the
    /// server's debug log says which), and they are the bytes a render at the save makes (a second
    /// save of the same file, whose prerender the first took, renders). A photo uploaded and never
    /// saved leaves no file behind once its prerender is done.
    @Test func anUploadedPhotoIsRenderedBeforeItsSave() async throws {
        let server = try ParseTestServer(extraArgs: ["--log-level", "debug"])
        defer { server.stop() }
        let dir = server.dataDir.appendingPathComponent("samples")
        #expect(try runProcess(TestPaths.binary, ["samples", dir.path, "--width", "900", "--height", "600"]).status == 0)
        let (_, token) = try await server.signUp()
        func upload(_ sample: String, as name: String) async throws -> String {
            let photo = try Data(contentsOf: dir.appendingPathComponent(sample))
            let up = try await server.request("POST", "/files/\(name)", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
            return try #require(up.json["name"]?.stringValue)
        }
        /// Waits for the log line saying `file`'s prerender ended without an error.
        func waitForPrerender(_ file: String) async throws {
            #expect(try await server.waitForLog("prerendered file=\(file)\n"), "the prerender of \(file) ended without an error")
        }
        let name = try await upload("landscape_o6.jpg", as: "first.jpg")
        try await waitForPrerender(name)
        var thumbnails: [[UInt8]] = []
        for _ in 0..<2 {
            let c = try await server.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]], key: .session(token))
            #expect(c.status == 201, "\(c.text)")
            #expect(c.json["width"] == 900 && c.json["height"] == 600, "\(c.text)")
            let thumb = try await server.request("GET", try #require(c.json["thumbnail"]?["url"]?.stringValue), key: .none)
            #expect(jpegSize(thumb.body).map { [$0.0, $0.1] } == [256, 171])
            thumbnails.append([UInt8](thumb.body))
        }
        #expect(server.serverLog().components(separatedBy: "thumbnails from the upload's prerender file=\(name)\n").count == 2,
                "the first save took the prerender, the second rendered")
        #expect(thumbnails[0] == thumbnails[1], "a prerender makes the bytes a render at the save makes")

        let unsaved = try await upload("landscape_o1.jpg", as: "unsaved.jpg")
        try await waitForPrerender(unsaved)
        #expect(try server.storedFileNames().filter { $0.contains("_unsaved") } == [unsaved], "only the upload itself is stored")
    }

    /// A request whose render waits for a render thread holds no worker slot. With two slots and one
    /// render thread kept busy by the prerenders of twelve uploads of 6000x4500 pixels (seconds of work),
    /// three saves of a photo whose prerender an earlier save took wait for the thread; a `GET /users/me`
    /// sent once two of them wait (the server's debug log says so: two waiting saves would hold both
    /// slots if a queued render kept its request's slot) is answered before any of them. A queued render
    /// used to keep its request's slot: the `GET` then waited, first in first out, behind the saves.
    /// (The renders must be long: since imaging is optimised in debug builds too, a 3000x2000 JPEG
    /// rendered before a `GET` sent 300 ms after it could arrive. And the third save is not waited for:
    /// in the full parallel run its task may start late, after the backlog, and then render at once.)
    @Test func aRequestIsNotQueuedBehindOtherRequestsThumbnails() async throws {
        let server = try ParseTestServer(extraArgs: ["--active-workers", "2", "--thumbnail-threads", "1", "--log-level", "debug"])
        defer { server.stop() }
        let (_, token) = try await server.signUp()
        // 27 megapixels (3.4 MB): twelve prerenders of it are less work than eight of 8000x6000. The last
        // save waits for all of them, and the client gives up on a request after 60 s.
        let png = Data(PNGFile.stripes(width: 6000, height: 4500))
        @Sendable func upload() async throws -> String {
            let up = try await server.request("POST", "/files/big.png", body: png, key: .session(token), headers: ["Content-Type": "image/png"])
            guard up.status == 201, let name = up.json["name"]?.stringValue else { throw TestServerError(description: "upload: \(up.status) \(up.text)") }
            return name
        }
        let name = try await upload()
        // The upload's prerender (`ThumbnailService.prerender`) goes to a first save, alone: the three
        // below each render anew, on the one thread, behind the prerenders of the twelve uploads after it.
        let first = try await server.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]],
                                             key: .session(token))
        #expect(first.status == 201, "\(first.text)")
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<12 { group.addTask { try await upload() } }
            for try await _ in group {}
        }
        let waiting = "a save waits for a render thread"
        func waitingSaves() -> Int { server.serverLog().components(separatedBy: waiting).count - 1 }
        let before = waitingSaves()
        actor Order { var finished: [String] = []; func add(_ what: String) { finished.append(what) } }
        let order = Order()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<3 {
                group.addTask {
                    let r = try await server.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]],
                                                     key: .session(token))
                    #expect(r.status == 201, "\(r.text)")
                    await order.add("save \(i)")
                }
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while waitingSaves() < before + 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(waitingSaves() >= before + 2, "two saves wait for the render thread")
            let me = try await server.request("GET", "/users/me", key: .session(token))
            #expect(me.status == 200)
            await order.add("get")
            try await group.waitForAll()
        }
        let finished = await order.finished
        #expect(finished.count == 4 && finished.first == "get", "finished in this order: \(finished)")
    }

    /// A save waits for its render to start for at most `--render-wait-limit`. A small photo is saved
    /// once (taking its upload's prerender). Then three 60-megapixel photos are uploaded, whose
    /// prerenders keep the one render thread busy for seconds, and the small photo is saved again: that
    /// save's render, queued by the save itself behind them, cannot start within the 1 ms limit. The save is
    /// refused at once with 124, HTTP 503 and `Retry-After`, and stores nothing. Its render stays
    /// queued, and a retry once the backlog is gone takes it (the server's log names the prerender a
    /// second time) and answers 201 with the thumbnails. When the save comes, the last large photo's
    /// render (a second of CPU or more) has at most just started; should a loaded run still slow the
    /// save past it, three more large photos go before another try. Without the limit the save waited
    /// silently for the whole backlog, longer than clients wait for an answer (curl's 30 s in the CLI).
    @Test func aSaveWhoseRenderCannotStartInTimeIsRefusedAndItsRetryTakesTheRender() async throws {
        let server = try ParseTestServer(extraArgs: ["--thumbnail-threads", "1", "--render-wait-limit", "0.001", "--log-level", "debug"])
        defer { server.stop() }
        let (_, token) = try await server.signUp()
        let up = try await server.request("POST", "/files/small.png", body: Data(PNGFile.stripes(width: 320, height: 200)),
                                          key: .session(token), headers: ["Content-Type": "image/png"])
        let name = try #require(up.json["name"]?.stringValue, "\(up.text)")
        let save: JSON = ["image": ["__type": "File", "name": .string(name)]]
        #expect(try await server.waitForLog("prerendered file=\(name)\n"), "the upload's prerender ended")
        let first = try await server.request("POST", "/classes/WallImage", json: save, key: .session(token))
        #expect(first.status == 201, "\(first.text)")
        func derivedFiles() throws -> Int { try server.storedFileNames().filter { $0.contains("_display") || $0.contains("_thumbnail") }.count }
        func wallImages() async throws -> Int? {
            try await server.request("GET", "/classes/WallImage", key: .session(token)).json["results"]?.arrayValue?.count
        }
        let big = Data(PNGFile.stripes(width: 8000, height: 7500))
        // Refused while its render was still queued (a render that started is waited for). A loaded run
        // can slow the save's request past the large photos' renders: then the save succeeds, and three
        // more large photos go before the next try (at most five tries). No timing is asserted.
        var refusal: ParseTestServer.Reply?
        for _ in 0..<5 where refusal == nil {
            for _ in 0..<3 {
                let up = try await server.request("POST", "/files/big.png", body: big, key: .session(token), headers: ["Content-Type": "image/png"])
                #expect(up.status == 201, "\(up.text)")
            }
            let (derivedBefore, imagesBefore) = (try derivedFiles(), try await wallImages())
            let r = try await server.request("POST", "/classes/WallImage", json: save, key: .session(token))
            guard r.status == 503 else {
                #expect(r.status == 201, "\(r.text)")
                continue
            }
            refusal = r
            #expect(try derivedFiles() == derivedBefore, "nothing stored for the refused save")
            #expect(try await wallImages() == imagesBefore)
        }
        let refused = try #require(refusal, "a save while three large photos' renders were queued was refused")
        #expect(refused.json["code"]?.intValue == 124, "\(refused.text)")
        #expect(refused.header("Retry-After") == "1")
        // The retries: refused while the backlog lasts, then the queued render is taken.
        var saved = refused
        let deadline = ContinuousClock.now + .seconds(120)
        while saved.status == 503, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(500))
            saved = try await server.request("POST", "/classes/WallImage", json: save, key: .session(token))
        }
        #expect(saved.status == 201, "\(saved.status) \(saved.text)")
        #expect(saved.json["width"]?.intValue == 320 && saved.json["height"]?.intValue == 200, "\(saved.text)")
        #expect(saved.json["thumbnail"]?["name"]?.stringValue != nil)
        let taken = server.serverLog().components(separatedBy: "thumbnails from the upload's prerender file=\(name)\n").count - 1
        #expect(taken == 2, "the first save took the upload's prerender, the retry the render the refused save queued")
    }

    /// `photowall samples --scenes N` (the demo wall's photos): different subjects, times of day and
    /// seasons, in landscape, portrait and square frames, stored under every EXIF orientation, each
    /// coming out upright at its frame's size.
    @Test func generatedScenesVaryAndComeOutUpright() async throws {
        let dir = s.dataDir.appendingPathComponent("scenes-\(UUID().uuidString.prefix(6))")
        #expect(try runProcess(TestPaths.binary, ["samples", dir.path, "--width", "300", "--height", "200", "--scenes", "12"]).status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("scene_") }.sorted()
        #expect(names.count == 12)
        let parts = names.map { $0.dropLast(4).split(separator: "_").map(String.init) }  // scene NNN subject time season frame oK
        #expect(Set(parts.map { $0[2] }) == ["mountains", "sea", "city", "forest", "meadow", "lake"])
        #expect(Set(parts.map { $0[3] }) == ["dawn", "noon", "sunset", "night"])
        #expect(Set(parts.map { $0[4] }) == ["spring", "summer", "autumn", "winter"])
        #expect(Set(parts.map { $0[5] }) == ["landscape", "portrait", "square"])
        #expect(Set(parts.map { $0[6] }) == Set((1...8).map { "o\($0)" }))
        let (_, token) = try await s.signUp()
        var digests: Set<String> = []
        for (name, p) in zip(names, parts) {
            let photo = try Data(contentsOf: dir.appendingPathComponent(name))
            digests.insert(Digest.hash(.sha256, [UInt8](photo)).hexString)
            let up = try await s.request("POST", "/files/scene.jpg", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
            let file = try #require(up.json["name"]?.stringValue)
            let c = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(file)]], key: .session(token))
            let expected: (Int, Int) = p[5] == "landscape" ? (300, 200) : p[5] == "portrait" ? (200, 300) : (300, 300)
            #expect(c.json["width"]?.intValue == expected.0 && c.json["height"]?.intValue == expected.1, "\(name): \(c.text)")
        }
        #expect(digests.count == 12, "twelve different pictures")
    }

    /// An iPhone HEIC (2566x3313 upright, 512x512 grid, Display P3) and a WebP (550x368): the original
    /// is stored and served with its own type; thumbnail and display are JPEGs of the upright size.
    @Test(.enabled(if: TestPaths.corpus != nil, "SKIPPED: the shared image corpus is not present"),
          arguments: [("wrong-format/iphone_IMG_5195.HEIC", "iphone.heic", "image/heic", 2566, 3313, [198, 256], [836, 1080]),
                      ("wrong-format/1.webp", "web.webp", "image/webp", 550, 368, [256, 171], [550, 368])])
    func heicAndWebPGetThumbnails(_ c: (String, String, String, Int, Int, [Int], [Int])) async throws {
        let (path, fileName, type, width, height, thumbSize, displaySize) = c
        let (_, token) = try await s.signUp()
        let bytes = try corpusFile(path)
        let up = try await s.request("POST", "/files/\(fileName)", body: bytes, key: .session(token), headers: ["Content-Type": type])
        let name = try #require(up.json["name"]?.stringValue, "\(up.text)")
        let created = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]],
                                          key: .session(token))
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json["width"] == .number(Double(width)) && created.json["height"] == .number(Double(height)), "\(created.text)")
        let original = try await s.request("GET", try #require(up.json["url"]?.stringValue), key: .session(token))
        #expect(original.status == 200 && original.header("Content-Type") == type && original.body == bytes,
                "\(original.status) \(original.header("Content-Type") ?? "-") \(original.body.count)")
        for (field, size) in [("thumbnail", thumbSize), ("display", displaySize)] {
            let file = try await s.request("GET", try #require(created.json[field]?["url"]?.stringValue), key: .none)
            #expect(file.header("Content-Type") == "image/jpeg")
            let got = try #require(jpegSize(file.body))
            #expect([got.0, got.1] == size, "\(field) of \(path): \(got)")
        }
    }

    /// A missing file is answered as another user's file is (101), so names don't leak; with the
    /// master key (no ownership check) the thumbnailer reports it (130).
    @Test func missingImageFileIsRefused() async throws {
        let (_, token) = try await s.signUp()
        let missing: JSON = ["image": ["__type": "File", "name": "00000000000000000000000000000000_nope.jpg"]]
        let c = try await s.request("POST", "/classes/WallImage", json: missing, key: .session(token))
        #expect(c.status == 404)
        #expect(c.json == ["code": 101, "error": "File not found: 00000000000000000000000000000000_nope.jpg."])
        let m = try await s.request("POST", "/classes/WallImage", json: missing, key: .master(nil))
        #expect(m.status == 400)
        #expect(m.json["code"] == 130)
    }
}
