import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// Deleting a photo deletes its comments and its three files; deleting a user deletes their
/// sessions, photos, comments and files (issue 11.3). Records and bytes go, on the filesystem and
/// S3 stores alike, and every URL of the files answers 404 from then on, signed ones included.
@Suite struct CascadeDeleteTests {
    let s = sharedServer

    func photo() throws -> Data {
        try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Samples/photos/landscape_o1.jpg"))
    }

    /// A photo of `token`'s user with a comment. - Returns: (objectId, the files' names, their signed URLs, comment id).
    func post(_ marker: String, token: String) async throws -> (String, [String], [String], String) {
        let up = try await s.request("POST", "/files/\(marker).jpg", body: try photo(), key: .session(token), headers: ["Content-Type": "image/jpeg"])
        let name = try #require(up.json["name"]?.stringValue)
        let made = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]], key: .session(token))
        let id = try #require(made.json["objectId"]?.stringValue)
        let got = try await s.request("GET", "/classes/WallImage/\(id)", key: .session(token))
        let fields = ["image", "thumbnail", "display"]
        let names = try fields.map { try #require(got.json[$0]?["name"]?.stringValue) }
        let urls = try fields.map { try #require(got.json[$0]?["url"]?.stringValue) }
        let comment = try await s.request("POST", "/classes/WallImageComment", json: ["comment": "c", "imageObjectId": .string(id)], key: .session(token))
        return (id, names, urls, try #require(comment.json["objectId"]?.stringValue))
    }

    func expectGone(_ names: [String], _ urls: [String], token: String) async throws {
        for url in urls {
            #expect(try await s.request("GET", url, key: .none).status == 404, "signed URL \(url)")
        }
        for name in names {
            let plain = "\(s.baseURL)/files/\(s.appId)/\(name)"
            #expect(try await s.request("GET", plain, key: .master(nil)).status == 404, "plain URL, master key: \(name)")
            #expect(try await s.request("DELETE", "/files/\(name)", key: .master(nil)).json["code"] == 153, "no record left: \(name)")
        }
        let stored = Set(try s.storedFileNames())
        #expect(stored.isDisjoint(with: names), "no bytes left")
    }

    @Test func deletingAPhotoDeletesItsCommentsAndFiles() async throws {
        let (_, token) = try await s.signUp()
        let (id, names, urls, commentId) = try await post("del\(UUID().uuidString.prefix(8).lowercased())", token: token)
        #expect(try await s.request("GET", urls[1], key: .none).status == 200)
        #expect(try await s.request("DELETE", "/classes/WallImage/\(id)", key: .session(token)).status == 200)
        #expect(try await s.request("GET", "/classes/WallImageComment/\(commentId)", key: .master(nil)).status == 404)
        try await expectGone(names, urls, token: token)
    }

    @Test func deletingAUserDeletesSessionsPhotosCommentsAndFiles() async throws {
        let (uid, token) = try await s.signUp()
        let (otherUid, otherToken) = try await s.signUp()
        let (id, names, urls, commentId) = try await post("usr\(UUID().uuidString.prefix(8).lowercased())", token: token)
        // A loose upload of theirs, and a comment of theirs on someone else's (public, master-made) photo.
        let loose = try #require(try await s.request("POST", "/files/loose.txt", body: Data("hello".utf8), key: .session(token),
                                                     headers: ["Content-Type": "text/plain"]).json["name"]?.stringValue)
        let public_ = try #require(try await s.request("POST", "/classes/WallImage", json: ["userFBId": .string(otherUid)], key: .master(nil))
            .json["objectId"]?.stringValue)
        let elsewhere = try await s.request("POST", "/classes/WallImageComment", json: [
            "comment": "x", "imageObjectId": .string(public_), "userFBId": .string(uid), "imageUserFBId": .string(otherUid),
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(uid)],
        ], key: .master(nil))
        let elsewhereId = try #require(elsewhere.json["objectId"]?.stringValue)
        let otherPhoto = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "stays"], key: .session(otherToken))
            .json["objectId"]?.stringValue)

        #expect(try await s.request("DELETE", "/users/\(uid)", key: .session(token)).status == 200)
        #expect(try await s.request("GET", "/users/me", key: .session(token)).json["code"] == 209, "sessions are gone")
        #expect(try await s.request("GET", "/classes/WallImage/\(id)", key: .master(nil)).status == 404)
        #expect(try await s.request("GET", "/classes/WallImageComment/\(commentId)", key: .master(nil)).status == 404)
        #expect(try await s.request("GET", "/classes/WallImageComment/\(elsewhereId)", key: .master(nil)).status == 404)
        try await expectGone(names + [loose], urls, token: token)
        #expect(try await s.request("GET", "/classes/WallImage/\(otherPhoto)", key: .master(nil)).status == 200, "others' photos stay")
    }

    @Test func aPhotoSharedFileStaysWhileAnotherPhotoNamesIt() async throws {
        let (_, token) = try await s.signUp()
        let (id, names, _, _) = try await post("shr\(UUID().uuidString.prefix(8).lowercased())", token: token)
        // Seeded walls share one stored photo among many WallImages (master key).
        let twin = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(names[0])]], key: .master(nil))
        #expect(twin.status == 201)
        #expect(try await s.request("DELETE", "/classes/WallImage/\(id)", key: .session(token)).status == 200)
        let stored = Set(try s.storedFileNames())
        #expect(stored.contains(names[0]), "still named by the twin")
        #expect(!stored.contains(names[1]) && !stored.contains(names[2]), "the thumbnail and display only the deleted photo named are gone")
    }
}
