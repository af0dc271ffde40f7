import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// Issue 11 findings 7 and 8: any file name a phone or an operating system makes is accepted on
/// `POST /files/:name` and tus (stored as `<32 hex>_<safe form>`, the original kept for display),
/// dangerous names are still refused with 122, and the stored type comes from the bytes.
@Suite struct FileNameTests {
    let s = sharedServer

    /// Real names (client name, safe form stored after the 32-hex prefix).
    static let realNames: [(String, String)] = [
        ("IMG_1234.HEIC", "IMG_1234.HEIC"),                                        // iPhone
        ("PXL_20240101_123456789.jpg", "PXL_20240101_123456789.jpg"),              // Pixel
        ("Screenshot 2024-01-01 at 10.00.00.png", "Screenshot_2024-01-01_at_10.00.00.png"),  // macOS (English)
        ("Capture d’écran 2024-01-01 à 10.00.00.png", "Capture_d_ecran_2024-01-01_a_10.00.00.png"),  // macOS (French)
        ("Photo (2).jpg", "Photo_2.jpg"),                                          // Windows copy
        ("IMG_0001 (1).jpg", "IMG_0001_1.jpg"),                                    // a second download
        ("WhatsApp Image 2024-01-01 at 10.00.00 (1).jpeg", "WhatsApp_Image_2024-01-01_at_10.00.00_1.jpeg"),
        ("café.jpg", "cafe.jpg"),
        ("灯泡.jpeg", "deng_pao.jpeg"),
        ("🎉 party.jpg", "party.jpg"),
        ("🎉🎂.png", "file.png"),
        (String(repeating: "é", count: 125) + ".jpg", String(repeating: "e", count: 100) + ".jpg"),  // 254 bytes
    ]

    static let asciiAlphanumerics = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    static func pathSegment(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: asciiAlphanumerics)!
    }

    /// `filename*=UTF-8''…` as RFC 8187 encodes it.
    static func dispositionName(_ name: String) -> String {
        var allowed = asciiAlphanumerics
        allowed.insert(charactersIn: "!#$&+-.^_`|~")
        return "inline; filename*=UTF-8''" + name.addingPercentEncoding(withAllowedCharacters: allowed)!
    }

    @Test(arguments: realNames)
    func realNamesAreAcceptedOnPostFiles(name: String, safe: String) async throws {
        let (_, token) = try await s.signUp()
        let bytes = Data("some bytes of \(name)".utf8)
        let up = try await s.request("POST", "/files/" + Self.pathSegment(name), body: bytes, key: .session(token),
                                     headers: ["Content-Type": "application/octet-stream"])
        #expect(up.status == 201, "\(name): \(up.text)")
        let stored = try #require(up.json["name"]?.stringValue)
        #expect(stored.count == 33 + safe.count && stored.hasSuffix("_" + safe), "\(name) → \(stored)")
        #expect(stored.prefix(32).allSatisfy { $0.isHexDigit && !$0.isUppercase })
        let url = try #require(up.json["url"]?.stringValue)
        #expect(url == "\(s.baseURL)/files/\(s.appId)/\(stored)")
        let get = try await s.request("GET", url, key: .none)
        #expect(get.status == 200)
        #expect(get.body == bytes)
        #expect(get.header("Content-Disposition") == Self.dispositionName(name))
    }

    @Test(arguments: realNames.prefix(10))
    func realNamesAreAcceptedOnTus(name: String, safe: String) async throws {
        let (_, token) = try await s.signUp()
        let client = try TestHTTPClient(port: s.port)
        let bytes = Array("tus bytes of \(name)".utf8)
        let r = try client.request("POST", "/parse/uploads", headers: [
            ("X-Parse-Application-Id", s.appId), ("X-Parse-Session-Token", token), ("Tus-Resumable", "1.0.0"),
            ("Upload-Length", "\(bytes.count)"), ("Content-Type", "application/offset+octet-stream"),
            ("Upload-Metadata", "filename \(Data(name.utf8).base64EncodedString()),filetype \(Data("application/octet-stream".utf8).base64EncodedString())"),
        ], body: bytes)
        #expect(r.status == 201, "\(name): \(r.text)")
        let stored = try #require(r.header("X-Parse-File-Name"))
        #expect(stored.count == 33 + safe.count && stored.hasSuffix("_" + safe), "\(name) → \(stored)")
        #expect(r.header("X-Parse-File-URL") == "\(s.baseURL)/files/\(s.appId)/\(stored)")
        let get = try await s.request("GET", try #require(r.header("X-Parse-File-URL")), key: .none)
        #expect(get.status == 200 && [UInt8](get.body) == bytes)
        #expect(get.header("Content-Disposition") == Self.dispositionName(name))
    }

    @Test func dangerousNamesAreStillRefused() async throws {
        let (_, token) = try await s.signUp()
        let invalid = "Filename contains invalid characters."
        for (segment, message) in [("%2E%2E", invalid), ("..%2Fetc%2Fpasswd", invalid), ("a%2Fb.jpg", invalid), ("a%5Cb.jpg", invalid),
                                   (".hidden", invalid), ("bad%00name.jpg", invalid), ("tab%09.jpg", invalid), ("del%7F.jpg", invalid),
                                   ("c1%C2%85.jpg", invalid), ("gpj.%E2%80%AEexe", invalid), ("bad%FFutf8.jpg", invalid),
                                   (String(repeating: "%C3%A9", count: 126) + ".jpg", "Filename too long."),  // 256 bytes
                                   (String(repeating: "x", count: 256), "Filename too long.")] {
            let r = try await s.request("POST", "/files/\(segment)", body: Data([1]), key: .session(token))
            #expect(r.status == 400, "\(segment)")
            #expect(r.json == ["code": 122, "error": .string(message)], "\(segment)")
        }
        // 255 bytes is the limit, not over it.
        let longest = try await s.request("POST", "/files/" + String(repeating: "x", count: 251) + ".jpg", body: Data([1]), key: .session(token))
        #expect(longest.status == 201)
        // tus refuses the same names from Upload-Metadata.
        let client = try TestHTTPClient(port: s.port)
        let r = try client.request("POST", "/parse/uploads", headers: [
            ("X-Parse-Application-Id", s.appId), ("X-Parse-Session-Token", token), ("Tus-Resumable", "1.0.0"), ("Upload-Length", "3"),
            ("Upload-Metadata", "filename \(Data("../x.jpg".utf8).base64EncodedString())"),
        ])
        #expect(r.status == 400)
        #expect(r.text == #"{"code":122,"error":"Filename contains invalid characters."}"#)
    }

    // MARK: stored type from the bytes

    static let gif = Data(base64Encoded: "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")!
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!

    @Test func aGIFPostedAsJPEGIsStoredAndServedAsGIF() async throws {
        let (_, token) = try await s.signUp()
        let up = try await s.request("POST", "/files/anim.jpg", body: Self.gif, key: .session(token), headers: ["Content-Type": "image/jpeg"])
        #expect(up.status == 201)
        let get = try await s.request("GET", try #require(up.json["url"]?.stringValue), key: .none)
        #expect(get.header("Content-Type") == "image/gif")
        #expect(get.body == Self.gif)
        // A JPEG type for JPEG bytes, and alias names of the type, agree; unknown bytes keep the sent type.
        let text = try await s.request("POST", "/files/notes.txt", body: Data("hello".utf8), key: .session(token), headers: ["Content-Type": "text/plain"])
        #expect(try await s.request("GET", try #require(text.json["url"]?.stringValue), key: .none).header("Content-Type") == "text/plain")
    }

    @Test func aWallImageWhoseDeclaredTypeTheBytesContradictIsRefused() async throws {
        let (_, token) = try await s.signUp()
        let lying = try await s.request("POST", "/files/shot.jpg", body: Self.png, key: .session(token), headers: ["Content-Type": "image/jpeg"])
        let lyingName = try #require(lying.json["name"]?.stringValue)
        let refused = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(lyingName)]],
                                          key: .session(token))
        #expect(refused.status == 400)
        #expect(refused.json == ["code": 111, "error": "The image was sent as image/jpeg but its bytes are image/png."])
        // The same bytes sent as what they are make a wall image.
        let honest = try await s.request("POST", "/files/shot.png", body: Self.png, key: .session(token), headers: ["Content-Type": "image/png"])
        let honestName = try #require(honest.json["name"]?.stringValue)
        let made = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(honestName)]],
                                       key: .session(token))
        #expect(made.status == 201, "\(made.text)")
    }

    @Test func tusSniffsTheFirstBytesToo() async throws {
        let (_, token) = try await s.signUp()
        let client = try TestHTTPClient(port: s.port)
        func upload(_ bytes: Data, declared: String) throws -> String? {
            let auth = [("X-Parse-Application-Id", s.appId), ("X-Parse-Session-Token", token), ("Tus-Resumable", "1.0.0")]
            let created = try client.request("POST", "/parse/uploads", headers: auth + [
                ("Upload-Length", "\(bytes.count)"),
                ("Upload-Metadata", "filename \(Data("pic.jpg".utf8).base64EncodedString()),filetype \(Data(declared.utf8).base64EncodedString())"),
            ])
            let path = try #require(created.header("Location").map { String($0[$0.range(of: "/parse/")!.lowerBound...]) })
            // Two PATCHes: the type comes from the first one's bytes.
            let half = bytes.count / 2
            _ = try client.request("PATCH", path, headers: auth + [("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream")],
                                   body: [UInt8](bytes.prefix(half)))
            let last = try client.request("PATCH", path, headers: auth + [("Upload-Offset", "\(half)"), ("Content-Type", "application/offset+octet-stream")],
                                          body: [UInt8](bytes.dropFirst(half)))
            return last.header("X-Parse-File-URL")
        }
        let gifURL = try #require(try upload(Self.gif, declared: "image/jpeg"))
        #expect(try await s.request("GET", gifURL, key: .none).header("Content-Type") == "image/gif")
        let pngURL = try #require(try upload(Self.png, declared: "image/jpeg"))
        let name = String(pngURL.split(separator: "/").last!)
        let refused = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]], key: .session(token))
        #expect(refused.json == ["code": 111, "error": "The image was sent as image/jpeg but its bytes are image/png."])
    }
}
