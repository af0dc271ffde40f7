import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

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
          arguments: ["wrong-format/cogs.gif", "wrong-format/1.webp", "wrong-format/logo.svg", "truncated-corrupt/truncated_jpeg.jpg"])
    func refusedImagesLeaveNothing(path: String) async throws {
        let (_, token) = try await s.signUp()
        let up = try await s.request("POST", "/files/photo.jpg", body: try corpusFile(path), key: .session(token), headers: ["Content-Type": "image/jpeg"])
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
