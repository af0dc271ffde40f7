import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// `photowall serve` keeps rows read by objectId in memory (SQLite: `CachedRow`). Through HTTP, a row
/// read again and again is never served past a write that changed it, whichever route or service
/// wrote it: a route, `/batch`, `_method`, an ACL change, the wall's cascade.
@Suite struct RowCacheAPITests {
    let s = sharedServer

    /// Two reads each, so that the second is served from memory (on SQLite).
    func get(_ path: String, key: ParseTestServer.Key) async throws -> ParseTestServer.Reply {
        _ = try await s.request("GET", path, key: key)
        return try await s.request("GET", path, key: key)
    }

    @Test func aKeptRowNeverOutlivesAWrite() async throws {
        let (uid, token) = try await s.signUp()
        let (_, strangerToken) = try await s.signUp()
        // A class of the app's own (made by the master key), readable by everyone and writable by the user:
        // no read scope and no field rules, so anonymous reads are kept too.
        let made = try await s.request("POST", "/classes/RowCacheNote", json: [
            "text": "first", "ACL": .object(["*": ["read": true], uid: ["read": true, "write": true]]),
        ], key: .master(nil))
        let id = try #require(made.json["objectId"]?.stringValue)
        let path = "/classes/RowCacheNote/\(id)"
        #expect(try await get(path, key: .app).json["text"] == "first")

        let put = try await s.request("PUT", path, json: ["text": "second"], key: .session(token))
        #expect(put.status == 200)
        #expect(try await get(path, key: .app).json["text"] == "second")

        let batch = try await s.request("POST", "/batch", json: ["requests": [
            ["method": "PUT", "path": .string("/parse\(path)"), "body": ["text": "third"]],
        ]], key: .session(token))
        #expect(batch.json.arrayValue?.first?["success"] != nil)
        #expect(try await get(path, key: .app).json["text"] == "third")

        let viaMethod = try await s.request("POST", path, json: ["_method": "PUT", "text": "fourth"], key: .session(token))
        #expect(viaMethod.status == 200)
        #expect(try await get(path, key: .app).json["text"] == "fourth")

        // Readable by its owner alone: at once, nobody else reads it. The master key's and the owner's reads
        // come first, so that the others find the row kept: its ACL is checked on every read.
        let hide = try await s.request("PUT", path, json: ["ACL": .object([uid: ["read": true, "write": true]])], key: .session(token))
        #expect(hide.status == 200)
        #expect(try await get(path, key: .master(nil)).json["text"] == "fourth")
        #expect(try await get(path, key: .session(token)).json["text"] == "fourth")
        let anonymous = try await s.request("GET", path, key: .app)
        #expect(anonymous.status == 404)
        #expect(anonymous.json["code"] == 101)
        #expect(try await s.request("GET", path, key: .session(strangerToken)).status == 404)

        // The wall deletes a user's photos through its own handle on the database: gone at once too.
        let photo = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "mine"], key: .session(token))
            .json["objectId"]?.stringValue)
        #expect(try await get("/classes/WallImage/\(photo)", key: .master(nil)).json["caption"] == "mine")
        #expect(try await s.request("DELETE", "/users/\(uid)", key: .session(token)).status == 200)
        #expect(try await s.request("GET", "/classes/WallImage/\(photo)", key: .master(nil)).status == 404)
    }
}
