import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// `GET` and queries render objects straight from their stored text (`ObjectService.writeStoredRow`)
/// when only the rules every class has apply. `excludeKeys` of a field nobody has takes the other
/// path (decode, `wireObject`, `JSON.write`) without changing the answer: both must give the same
/// bytes, for every kind of value, for the master key and for a user.
@Suite struct StoredRowRenderingTests {
    let s = sharedServer

    @Test func storedTextRendersAsTheDecodedObject() async throws {
        let (userId, token) = try await s.signUp()
        let upload = try await s.request("POST", "/files/a%20b.txt", body: Data("hello".utf8), key: .session(token),
                                         headers: ["Content-Type": "text/plain"])
        let file = try #require(upload.json["name"]?.stringValue)
        // A name whose URL percent-encodes UTF-8 and reserved bytes (written straight into the answer).
        let odd = try await s.request("POST", "/files/%C3%A9%2B%26(1).txt", body: Data("hi".utf8), key: .session(token),
                                      headers: ["Content-Type": "text/plain"])
        let oddFile = try #require(odd.json["name"]?.stringValue)
        let className = "RenderCheck\(UUID().uuidString.prefix(6))"
        let body: JSON = [
            "Zed": 1, "text": "quote \" backslash \\ tab \t newline \n é ✓ \u{1}", "n": 1.5, "big": 12345678901,
            "yes": true, "nothing": nil, "when": ["__type": "Date", "iso": "2020-01-02T03:04:05.678Z"],
            "image": ["__type": "File", "name": .string(file)], "oddImage": ["__type": "File", "name": .string(oddFile)],
            "nestedOdd": ["k\"ey": ["__type": "File", "name": .string(oddFile)]],
            "files": [["__type": "File", "name": .string(file)], "x", ["nested": ["__type": "File", "name": .string(file)]]],
            "owner": ["__type": "Pointer", "className": "_User", "objectId": .string(userId)],
            "deep": ["a": ["b": [1, 2, ["c": "File"]]]], "list": [], "map": [:],
            // Far more than the room a GET's writer starts with (2 KiB): the row is written across growth.
            "long": .string(String(repeating: "é\"x\\", count: 40_000)),
            "ACL": [userId: ["read": true, "write": true]],
        ]
        let created = try await s.request("POST", "/classes/\(className)", json: body, key: .master(nil))
        #expect(created.json["code"] == nil, "\(created.text)")
        #expect(created.status == 201)
        let id = try #require(created.json["objectId"]?.stringValue)
        _ = try await s.request("POST", "/classes/\(className)", json: ["n": 2], key: .master(nil))

        for key: ParseTestServer.Key in [.session(token), .master(nil)] {
            let get = try await s.request("GET", "/classes/\(className)/\(id)", key: key)
            let decodedGet = try await s.request("GET", "/classes/\(className)/\(id)?excludeKeys=noSuchField", key: key)
            #expect(get.status == 200)
            #expect(get.text == decodedGet.text)
            #expect(get.json["image"]?["url"]?.stringValue == "\(s.baseURL)/files/\(s.appId)/\(file.replacingOccurrences(of: " ", with: "%20"))")
            #expect(get.json["files"]?.arrayValue?.last?["nested"]?["url"] != nil)
            let oddURL = "\(s.baseURL)/files/\(s.appId)/" + (oddFile.addingPercentEncoding(withAllowedCharacters: .init(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")) ?? "")
            #expect(get.json["oddImage"]?["url"]?.stringValue == oddURL)
            #expect(get.json["nestedOdd"]?["k\"ey"]?["url"]?.stringValue == oddURL)
            #expect(get.json["text"]?.stringValue == body["text"]?.stringValue)
            #expect(get.json["long"]?.stringValue == body["long"]?.stringValue)
            #expect(get.json["ACL"] == [userId: ["read": true, "write": true]])

            let query = "/classes/\(className)?order=n&count=1"
            let found = try await s.request("GET", query, key: key)
            let decodedFound = try await s.request("GET", query + "&excludeKeys=noSuchField", key: key)
            #expect(found.text == decodedFound.text)
            #expect(found.json["count"] == 2)
            #expect(found.json["results"]?.arrayValue?.count == 2)
            #expect(found.json["results"]?.arrayValue?.first == get.json)
        }
        // Not readable by the public (ACL): 101 on the stored-text path too.
        let anonymous = try await s.request("GET", "/classes/\(className)/\(id)")
        #expect(anonymous.json == ["code": 101, "error": "Object not found."])
        #expect(try await s.request("GET", "/classes/\(className)").json["results"]?.arrayValue?.count == 1)
    }
}
