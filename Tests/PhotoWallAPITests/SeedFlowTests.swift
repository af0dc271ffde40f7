import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// The seed app's upload flow over REST, step by step as the Parse iOS tutorial does it.
@Suite struct SeedFlowTests {
    let s = sharedServer

    @Test(.enabled(if: TestPaths.corpus != nil, "SKIPPED: the shared image corpus (../shared/imagecorpus or PHOTOWALL_CORPUS) is not present"))
    func uploadPhotoThenWallImageThenComment() async throws {
        let photos = try #require(TestPaths.corpus).appendingPathComponent("photos")
        let files = try FileManager.default.contentsOfDirectory(atPath: photos.path).filter { $0.hasSuffix(".jpg") }.sorted()
        let photo = try Data(contentsOf: photos.appendingPathComponent(try #require(files.first)))
        let (uid, token) = try await s.signUp()
        let fbId = uid  // no Facebook account linked: the wall id is the user's objectId
        let me: JSON = ["__type": "Pointer", "className": "_User", "objectId": .string(uid)]

        // 1. POST the photo to /files/img (the tutorial's PFFile name).
        let up = try await s.request("POST", "/files/img", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
        #expect(up.status == 201)
        let fileName = try #require(up.json["name"]?.stringValue)
        #expect(fileName.hasSuffix("_img.jpg"))

        // 2. WallImage {image: File, user, userFBId}
        let wi = try await s.request("POST", "/classes/WallImage", json: [
            "image": ["__type": "File", "name": .string(fileName), "url": "ignored"], "user": me, "userFBId": .string(fbId),
        ], key: .session(token))
        #expect(wi.status == 201)
        let imageId = try #require(wi.json["objectId"]?.stringValue)

        // 3. WallImageComment {comment, user, userFBId, imageObjectId}
        let wc = try await s.request("POST", "/classes/WallImageComment", json: [
            "comment": "First!", "user": me, "userFBId": .string(fbId), "imageObjectId": .string(imageId),
        ], key: .session(token))
        #expect(wc.status == 201)

        // 4. The wall query: userFBId $in [...] ordered by createdAt.
        let wallQuery = enc(["userFBId": ["$in": [.string(fbId), "someFriend"]]])
        let wall = try await s.request("GET", "/classes/WallImage?where=\(wallQuery)&order=-createdAt&include=user&limit=20", key: .session(token))
        let results = try #require(wall.json["results"]?.arrayValue)
        #expect(results.count == 1)
        #expect(results[0]["objectId"]?.stringValue == imageId)
        // A wall file's URL is signed for the viewer (friends-only walls).
        #expect(results[0]["image"]?["url"]?.stringValue?.hasPrefix("\(s.baseURL)/files/\(s.appId)/\(fileName)?exp=") == true)
        #expect(results[0]["user"]?["objectId"]?.stringValue == uid)
        let comments = try await s.request("GET", "/classes/WallImageComment?where=" + enc(["imageObjectId": ["$in": [.string(imageId)]]]) + "&order=createdAt", key: .session(token))
        #expect(comments.json["results"]?.arrayValue?.map { $0["comment"] } == ["First!"])

        // 5. GET the file back, byte-identical.
        let url = try #require(results[0]["image"]?["url"]?.stringValue)
        let back = try await s.request("GET", url, key: .none)
        #expect(back.status == 200)
        #expect(back.body == photo)
    }
}
