import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// Files have owners (issue 11.4): only the uploader (or the master key) may put a file into an
/// object; someone else's file is answered as a missing one (101), before any imaging work.
@Suite struct FileOwnershipTests {
    let s = sharedServer

    func photo() throws -> Data {
        try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Samples/photos/landscape_o1.jpg"))
    }

    @Test func borrowingAnotherUsersFileIsRefused() async throws {
        let (_, owner) = try await s.signUp()
        let (_, stranger) = try await s.signUp()
        let marker = "own\(UUID().uuidString.prefix(8).lowercased())"
        let up = try await s.request("POST", "/files/\(marker).jpg", body: try photo(), key: .session(owner), headers: ["Content-Type": "image/jpeg"])
        let name = try #require(up.json["name"]?.stringValue)
        let file: JSON = ["__type": "File", "name": .string(name), "url": .string("\(s.baseURL)/files/\(s.appId)/\(name)")]

        // POST with the other user's file: refused as if it didn't exist, and no thumbnail was made.
        let borrowed = try await s.request("POST", "/classes/WallImage", json: ["image": file], key: .session(stranger))
        #expect(borrowed.status == 404)
        #expect(borrowed.json == ["code": 101, "error": .string("File not found: \(name).")])
        // PUT on the stranger's own photo: `image` likewise, `thumbnail` is the server's.
        let own = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "mine"], key: .session(stranger)).json["objectId"]?.stringValue)
        let put = try await s.request("PUT", "/classes/WallImage/\(own)", json: ["image": file], key: .session(stranger))
        #expect(put.json == ["code": 101, "error": .string("File not found: \(name).")])
        let thumb = try await s.request("PUT", "/classes/WallImage/\(own)", json: ["thumbnail": file], key: .session(stranger))
        #expect(thumb.json["code"] == 119)
        // Through batch too, and inside an array of another field of a class that takes new fields.
        let batch = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/WallImage", "body": ["image": file]],
        ]], key: .session(stranger))
        #expect(batch.json == [["error": ["code": 101, "error": .string("File not found: \(name).")]]])
        #expect(try s.storedFileNames().filter { $0.contains(marker) } == [name], "no thumbnail run was spent")

        // The owner may use it; the master key may use anyone's.
        let mine = try await s.request("POST", "/classes/WallImage", json: ["image": file], key: .session(owner))
        #expect(mine.status == 201, "\(mine.text)")
        #expect(try await s.request("POST", "/classes/WallImage", json: ["image": file], key: .master(nil)).status == 201)
        // A file already in the object may be sent back by anyone allowed to write it (unchanged).
        let mineId = try #require(mine.json["objectId"]?.stringValue)
        #expect(try await s.request("PUT", "/classes/WallImage/\(mineId)", json: ["image": file, "caption": "same"], key: .session(owner)).status == 200)
    }

    @Test func resumableUploadsRecordTheirOwner() async throws {
        let (_, owner) = try await s.signUp()
        let (_, stranger) = try await s.signUp()
        let bytes = try photo()
        let created = try await s.request("POST", "/uploads", body: bytes, key: .session(owner), headers: [
            "Tus-Resumable": "1.0.0", "Upload-Length": "\(bytes.count)", "Content-Type": "application/offset+octet-stream",
            "Upload-Metadata": "filename \(Data("tus.jpg".utf8).base64EncodedString()),filetype \(Data("image/jpeg".utf8).base64EncodedString())",
        ])
        #expect(created.status == 201)
        let name = try #require(created.header("X-Parse-File-Name"))
        let file: JSON = ["__type": "File", "name": .string(name)]
        #expect(try await s.request("POST", "/classes/WallImage", json: ["image": file], key: .session(stranger)).json["code"] == 101)
        #expect(try await s.request("POST", "/classes/WallImage", json: ["image": file], key: .session(owner)).status == 201)
    }
}
