import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// Create, get, update, delete with Parse's exact shapes, field operators and `__type` values.
@Suite struct ObjectTests {
    let s = sharedServer

    @Test func createGetUpdateDeleteShapes() async throws {
        let (uid, token) = try await s.signUp()
        // WallImage's schema is declared: the generic fields used here are added with the master key (parse-server's CLP addField).
        let fields = try await s.request("POST", "/classes/WallImage", json: [
            "taken": ["__type": "Date", "iso": "2016-03-11T23:51:48.050Z"], "likes": 0, "tags": [], "more": [],
        ], key: .master(nil))
        #expect(try await s.request("DELETE", "/classes/WallImage/\(try #require(fields.json["objectId"]?.stringValue))", key: .master(nil)).status == 200)
        let create = try await s.request("POST", "/classes/WallImage", json: [
            "userFBId": .string(uid), "user": ["__type": "Pointer", "className": "_User", "objectId": .string(uid)],
            "taken": ["__type": "Date", "iso": "2016-03-11T23:51:48.050Z"], "likes": 3,
        ], key: .session(token))
        #expect(create.status == 201)
        let id = try #require(create.json["objectId"]?.stringValue)
        #expect(id.count == 10)
        #expect(id.allSatisfy { $0.isLetter || $0.isNumber })
        let createdAt = try #require(create.json["createdAt"]?.stringValue)
        #expect(createdAt.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
        #expect(create.header("Location") == "\(s.baseURL)/classes/WallImage/\(id)")
        #expect(create.header("Cache-Control") == "no-store")
        #expect(create.header("Content-Type") == "application/json; charset=utf-8")
        // The server-set owner fields are echoed, as parse-server echoes fields set by beforeSave.
        #expect(create.json.objectValue?.keys.sorted() == ["createdAt", "objectId", "user", "userFBId"])

        let got = try await s.request("GET", "/classes/WallImage/\(id)", key: .session(token))
        #expect(got.status == 200)
        #expect(got.json["objectId"]?.stringValue == id)
        #expect(got.json["createdAt"]?.stringValue == createdAt)
        #expect(got.json["updatedAt"]?.stringValue == createdAt)
        #expect(got.json["userFBId"] == .string(uid), "without a linked Facebook account the wall id is the objectId")
        #expect(got.json["likes"] == 3)
        #expect(got.json["taken"] == ["__type": "Date", "iso": "2016-03-11T23:51:48.050Z"])
        #expect(got.json["user"] == ["__type": "Pointer", "className": "_User", "objectId": .string(uid)])

        let upd = try await s.request("PUT", "/classes/WallImage/\(id)", json: [
            "likes": ["__op": "Increment", "amount": 2], "tags": ["__op": "AddUnique", "objects": ["a", "b", "a"]],
        ], key: .session(token))
        #expect(upd.status == 200)
        #expect(upd.json["likes"] == 5)
        #expect(upd.json["tags"] == ["a", "b"])
        let updatedAt = try #require(upd.json["updatedAt"]?.stringValue)
        #expect(updatedAt >= createdAt)

        let ops = try await s.request("PUT", "/classes/WallImage/\(id)", json: [
            "tags": ["__op": "Remove", "objects": ["a"]], "likes": ["__op": "Delete"],
            "more": ["__op": "Add", "objects": [1, 1]],
        ], key: .session(token))
        #expect(ops.status == 200)
        let after = try await s.request("GET", "/classes/WallImage/\(id)", key: .session(token))
        #expect(after.json["tags"] == ["b"])
        #expect(after.json["likes"] == nil)
        #expect(after.json["more"] == [1, 1])
        #expect(after.json["updatedAt"]?.stringValue != createdAt)

        let del = try await s.request("DELETE", "/classes/WallImage/\(id)", key: .session(token))
        #expect(del.status == 200)
        #expect(del.json == [:])
        let gone = try await s.request("GET", "/classes/WallImage/\(id)", key: .session(token))
        #expect(gone.status == 404)
        #expect(gone.json == ["code": 101, "error": "Object not found."])
    }

    @Test func patchAndMethodOverride() async throws {
        let c = try await s.request("POST", "/classes/WallImage", json: ["userFBId": "p1"], key: .master(nil))
        let id = try #require(c.json["objectId"]?.stringValue)
        let p = try await s.request("PATCH", "/classes/WallImage/\(id)", json: ["userFBId": "p2"], key: .master(nil))
        #expect(p.status == 200)
        // Parse-Swift's usingPostForQuery: POST with _method GET runs a query.
        let q = try await s.request("POST", "/classes/WallImage", json: [
            "_method": "GET", "where": ["userFBId": ["$eq": "p2"]], "limit": 5, "count": true,
        ], key: .master(nil))
        #expect(q.status == 200)
        #expect(q.json["count"] == 1)
        #expect(q.json["results"]?.arrayValue?.first?["objectId"]?.stringValue == id)
        let d = try await s.request("POST", "/classes/WallImage/\(id)", json: ["_method": "DELETE"], key: .master(nil))
        #expect(d.status == 200)
        let gone = try await s.request("GET", "/classes/WallImage/\(id)", key: .master(nil))
        #expect(gone.status == 404)
    }

    @Test func javascriptSDKBodyCredentials() async throws {
        // text/plain body with _ApplicationId, as the JS SDK sends it.
        let body = Data(#"{"_ApplicationId":"testapp","_MasterKey":"test-master-key","_method":"GET","where":{"userFBId":"none-such"}}"#.utf8)
        let r = try await s.request("POST", "/classes/WallImage", body: body, key: .none, headers: ["Content-Type": "text/plain"])
        #expect(r.status == 200)
        #expect(r.json == ["results": []])
    }

    @Test func aclIsEnforcedAndMasterBypasses() async throws {
        // A class of its own (the wall classes add friend-only visibility on top of ACLs).
        #expect(try await s.request("POST", "/classes/AclNote", json: ["caption": "seed"], key: .master(nil)).status == 201)
        let (aliceId, alice) = try await s.signUp()
        let (_, bob) = try await s.signUp()
        let c = try await s.request("POST", "/classes/AclNote", json: [
            "caption": "acl", "ACL": [aliceId: ["read": true, "write": true]],
        ], key: .session(alice))
        #expect(c.status == 201)
        let id = try #require(c.json["objectId"]?.stringValue)
        #expect(try await s.request("GET", "/classes/AclNote/\(id)", key: .session(alice)).status == 200)
        let bobGet = try await s.request("GET", "/classes/AclNote/\(id)", key: .session(bob))
        #expect(bobGet.status == 404)
        #expect(bobGet.json["code"] == 101)
        let bobPut = try await s.request("PUT", "/classes/AclNote/\(id)", json: ["caption": "x"], key: .session(bob))
        #expect(bobPut.json["code"] == 101)
        let bobDel = try await s.request("DELETE", "/classes/AclNote/\(id)", key: .session(bob))
        #expect(bobDel.json["code"] == 101)
        let anon = try await s.request("GET", "/classes/AclNote", key: .app)
        #expect(anon.json["results"]?.arrayValue?.contains { $0["objectId"]?.stringValue == id } == false)
        let bobQuery = try await s.request("GET", "/classes/AclNote?where=" + enc(["caption": "acl"]), key: .session(bob))
        #expect(bobQuery.json["results"] == [])
        let master = try await s.request("GET", "/classes/AclNote/\(id)", key: .master(nil))
        #expect(master.status == 200)
        #expect(master.json["ACL"] == [aliceId: ["read": true, "write": true]])
        // Public-read ACL: bob can read but not write.
        let pub = try await s.request("POST", "/classes/AclNote", json: [
            "caption": "acl2", "ACL": ["*": ["read": true], aliceId: ["read": true, "write": true]],
        ], key: .session(alice))
        let pid = try #require(pub.json["objectId"]?.stringValue)
        #expect(try await s.request("GET", "/classes/AclNote/\(pid)", key: .session(bob)).status == 200)
        #expect(try await s.request("PUT", "/classes/AclNote/\(pid)", json: ["caption": "z"], key: .session(bob)).json["code"] == 101)
        #expect(try await s.request("PUT", "/classes/AclNote/\(pid)", json: ["caption": "z"], key: .master(nil)).status == 200)
    }

    @Test func includeKeysAndExcludeKeys() async throws {
        let (uid, token) = try await s.signUp("incl_\(UUID().uuidString.prefix(6))")
        let img = try await s.request("POST", "/classes/WallImage", json: [
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(uid)], "caption": "hi",
        ], key: .session(token))
        let imgId = try #require(img.json["objectId"]?.stringValue)
        let com = try await s.request("POST", "/classes/WallImageComment", json: [
            "comment": "nice", "imageObjectId": .string(imgId),
            "image": ["__type": "Pointer", "className": "WallImage", "objectId": .string(imgId)],
        ], key: .session(token))
        let comId = try #require(com.json["objectId"]?.stringValue)
        // Parse-Swift sends include as a JSON array.
        let got = try await s.request("GET", "/classes/WallImage/\(imgId)?include=%5B%22user%22%5D", key: .session(token))
        #expect(got.json["user"]?["__type"] == "Object")
        #expect(got.json["user"]?["className"] == "_User")
        #expect(got.json["user"]?["username"]?.stringValue?.hasPrefix("incl_") == true)
        #expect(got.json["user"]?["sessionToken"] == nil)
        // Two levels, comma string form.
        let two = try await s.request("GET", "/classes/WallImageComment?include=image.user&where=" + enc(["objectId": .string(comId)]), key: .session(token))
        let first = two.json["results"]?.arrayValue?.first
        #expect(first?["image"]?["caption"] == "hi")
        #expect(first?["image"]?["user"]?["objectId"]?.stringValue == uid)
        #expect(first?["image"]?["user"]?["__type"] == "Object")
        let keys = try await s.request("GET", "/classes/WallImage/\(imgId)?keys=caption", key: .session(token))
        #expect(keys.json.objectValue?.keys.sorted() == ["ACL", "caption", "createdAt", "objectId", "updatedAt"])
        let ex = try await s.request("GET", "/classes/WallImage/\(imgId)?excludeKeys=caption,userFBId", key: .session(token))
        #expect(keys.json["userFBId"] == nil)
        #expect(ex.json["caption"] == nil)
        #expect(ex.json["userFBId"] == nil)
        #expect(ex.json["user"] != nil)
    }

    @Test func clientCannotCreateClasses() async throws {
        let (_, token) = try await s.signUp()
        let r = try await s.request("POST", "/classes/NoSuchClass", json: ["a": 1], key: .session(token))
        #expect(r.status == 400)
        #expect(r.json == ["code": 119, "error": "This user is not allowed to access non-existent class: NoSuchClass"])
        let m = try await s.request("POST", "/classes/MasterMade", json: ["a": 1], key: .master(nil))
        #expect(m.status == 201)
        let q = try await s.request("GET", "/classes/NeverSeen", key: .app)
        #expect(q.json == ["results": []])
    }

    @Test func healthNeedsNoKeys() async throws {
        let g = try await s.request("GET", "/health", key: .none)
        #expect(g.status == 200)
        #expect(g.json == ["status": "ok"])
        let p = try await s.request("POST", "/health", key: .none)
        #expect(p.json == ["status": "ok"])
    }
}

/// Percent-encodes a JSON value for a query string.
func enc(_ j: JSON) -> String {
    j.text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
}
