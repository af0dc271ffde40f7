import Foundation
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallTesting
import Testing

/// `POST /functions/duplicates` (issue 15, CLI "Duplicates"): which of the caller's files, by
/// SHA-256, are already posted as the caller's own `WallImage`s. Another user's identical photo
/// and a file uploaded but never posted are not duplicates.
@Suite struct DuplicatesAPITests {
    let s = sharedServer

    func photo(_ name: String) throws -> Data {
        try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Samples/photos/\(name)"))
    }

    func upload(_ bytes: Data, as token: String) async throws -> String {
        let up = try await s.request("POST", "/files/dup.jpg", body: bytes, key: .session(token), headers: ["Content-Type": "image/jpeg"])
        #expect(up.status == 201, "\(up.text)")
        return try #require(up.json["name"]?.stringValue)
    }

    func post(_ fileName: String, as token: String) async throws -> (id: String, createdAt: String) {
        let r = try await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(fileName)]], key: .session(token))
        #expect(r.status == 201, "\(r.text)")
        return (try #require(r.json["objectId"]?.stringValue), try #require(r.json["createdAt"]?.stringValue))
    }

    func duplicates(_ params: JSON, key: ParseTestServer.Key) async throws -> (status: Int, json: JSON) {
        let r = try await s.request("POST", "/functions/duplicates", json: params, key: key)
        return (r.status, r.json)
    }

    @Test func findsOnlyTheCallersOwnPostedPhotos() async throws {
        // A photo no other test posts: a sample with a unique trailer (JPEG decoders stop at EOI).
        let bytes = try photo("landscape_o1.jpg") + Data("dup-\(UUID().uuidString)".utf8)
        let other = try photo("landscape_o2.jpg") + Data("dup-\(UUID().uuidString)".utf8)
        let digest = Digest.hash(.sha256, bytes).hexString
        let otherDigest = Digest.hash(.sha256, other).hexString
        let unknown = String(repeating: "0", count: 64)
        let (_, owner) = try await s.signUp()
        let (_, stranger) = try await s.signUp()

        // Nothing posted yet: no duplicate, also not for a file uploaded but never posted.
        let unposted = try await upload(bytes, as: owner)
        #expect(try await duplicates(["sha256": [.string(digest)]], key: .session(owner)) == (200, ["result": []]))

        // Posted twice (two uploads of the same bytes): the newer photo is the answer, once per digest.
        let first = try await post(unposted, as: owner)
        let again = try await post(try await upload(bytes, as: owner), as: owner)
        #expect(first.id != again.id)
        let expected: JSON = ["result": [["sha256": .string(digest), "objectId": .string(again.id), "createdAt": .string(again.createdAt)]]]
        #expect(try await duplicates(["sha256": [.string(unknown), .string(digest), .string(digest)]], key: .session(owner)) == (200, expected))

        // Another user: the owner's photo is not theirs; their own upload of the same bytes isn't either
        // until they post it, and then it is their photo that they are told about.
        #expect(try await duplicates(["sha256": [.string(digest)]], key: .session(stranger)) == (200, ["result": []]))
        let theirs = try await upload(bytes, as: stranger)
        #expect(try await duplicates(["sha256": [.string(digest)]], key: .session(stranger)) == (200, ["result": []]))
        let theirPhoto = try await post(theirs, as: stranger)
        #expect(try await duplicates(["sha256": [.string(digest)]], key: .session(stranger))
                == (200, ["result": [["sha256": .string(digest), "objectId": .string(theirPhoto.id), "createdAt": .string(theirPhoto.createdAt)]]]))
        // ... and the owner still gets their own, not the stranger's newer one.
        #expect(try await duplicates(["sha256": [.string(digest)]], key: .session(owner)) == (200, expected))

        // A second photo of the owner's, uploaded but not posted, is not reported beside the first.
        _ = try await upload(other, as: owner)
        #expect(try await duplicates(["sha256": [.string(otherDigest), .string(digest)]], key: .session(owner)) == (200, expected))

        // Deleting the photos: no longer a duplicate.
        for id in [first.id, again.id] {
            #expect(try await s.request("DELETE", "/classes/WallImage/\(id)", key: .session(owner)).status == 200)
        }
        #expect(try await duplicates(["sha256": [.string(digest)]], key: .session(owner)) == (200, ["result": []]))
    }

    @Test func badParamsAre142AndNoSessionIs209() async throws {
        let (_, token) = try await s.signUp()
        let hex = String(repeating: "a", count: 64)
        let cases: [(JSON, String)] = [
            ([:], "sha256 must be an array of SHA-256 digests (64 lowercase hex digits)."),
            (["sha256": .string(hex)], "sha256 must be an array of SHA-256 digests (64 lowercase hex digits)."),
            (["sha256": [.string(hex), .string(hex.uppercased())]], "sha256[1] is not a SHA-256 digest (64 lowercase hex digits)."),
            (["sha256": [.string(String(hex.dropLast()))]], "sha256[0] is not a SHA-256 digest (64 lowercase hex digits)."),
            (["sha256": [.string(String(hex.dropLast()) + "g")]], "sha256[0] is not a SHA-256 digest (64 lowercase hex digits)."),
            (["sha256": [1]], "sha256[0] is not a SHA-256 digest (64 lowercase hex digits)."),
            (["sha256": .array(Array(repeating: .string(hex), count: 1001))], "sha256 has 1001 digests; at most 1000 per call."),
        ]
        for (params, message) in cases {
            #expect(try await duplicates(params, key: .session(token)) == (400, ["code": 142, "error": .string(message)]), "\(params.text.prefix(80))")
        }
        #expect(try await duplicates(["sha256": .array(Array(repeating: .string(hex), count: 1000))], key: .session(token)) == (200, ["result": []]))
        #expect(try await duplicates(["sha256": []], key: .session(token)) == (200, ["result": []]))

        // Who asks: a user. Anonymous and the master key alone have no own files.
        let noSession: JSON = ["code": 209, "error": "Session token required."]
        #expect(try await duplicates(["sha256": [.string(hex)]], key: .app) == (400, noSession))
        #expect(try await duplicates(["sha256": [.string(hex)]], key: .master(nil)) == (400, noSession))
    }
}
