import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// `/batch` runs each sub-request with the batch's credentials, in order.
@Suite struct BatchTests {
    let s = sharedServer

    @Test func mixedBatch() async throws {
        let (_, token) = try await s.signUp()
        let c = try await s.request("POST", "/classes/WallImage", json: ["caption": "batch"], key: .session(token))
        let id = try #require(c.json["objectId"]?.stringValue)
        let b = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/WallImage", "body": ["caption": "b1"]],
            ["method": "PUT", "path": .string("/parse/classes/WallImage/\(id)"), "body": ["caption": "b2"]],
            ["method": "GET", "path": .string("/parse/classes/WallImage/\(id)")],
            ["method": "DELETE", "path": "/parse/classes/WallImage/doesNotExist"],
            ["method": "POST", "path": "/elsewhere/classes/WallImage", "body": [:]],
        ], "transaction": false], key: .session(token))
        #expect(b.status == 200)
        let r = try #require(b.json.arrayValue)
        #expect(r.count == 5)
        #expect(r[0]["success"]?["objectId"]?.stringValue?.count == 10)
        #expect(r[1]["success"]?["updatedAt"] != nil)
        #expect(r[2]["success"]?["caption"] == "b2")
        #expect(r[3] == ["error": ["code": 101, "error": "Object not found."]])
        #expect(r[4]["error"]?["code"] == 107)
    }
}
