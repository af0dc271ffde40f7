import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// Server-owned fields (issue 11.2, "server-owned fields"; issue 12.1, 12.3), driven as a Parse SDK
/// that saves whole objects does (`WholeObjectClient`): every field the server set comes back on
/// each save, unchanged, through PUT, `/batch` and `_method`; only a change is refused.
@Suite struct ServerOwnedFieldTests {
    let s = sharedServer

    /// Uploads the project's sample photo as `name` with `token`. - Returns: the stored file name.
    func uploadPhoto(_ name: String, token: String) async throws -> String {
        let photo = try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Samples/photos/landscape_o1.jpg"))
        let up = try await s.request("POST", "/files/\(name)", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
        return try #require(up.json["name"]?.stringValue, "\(up.text)")
    }

    /// The stored files whose name contains `marker` (the upload's base name marks a photo's three files).
    func files(marked marker: String) throws -> [String] { try s.storedFileNames().filter { $0.contains(marker) }.sorted() }

    /// For a failure's message: the server's log lines (warnings and worse) that name `marker`, or
    /// nothing when `passed`.
    func serverLines(marked marker: String, unless passed: Bool) -> String {
        passed ? "" : "server log: " + s.serverLog().split(separator: "\n").filter { $0.contains(marker) }.joined(separator: " | ")
    }

    @Test func wholeObjectCommentSavesKeepImageAndOwner() async throws {
        let (_, token) = try await s.signUp()
        let image = try await s.request("POST", "/classes/WallImage", json: ["caption": "c"], key: .session(token))
        let imageId = try #require(image.json["objectId"]?.stringValue)
        let comment = WholeObjectClient(server: s, className: "WallImageComment", key: .session(token),
                                        fields: ["comment": "first", "imageObjectId": .string(imageId)])
        #expect(try await comment.save().status == 201)
        #expect(comment["imageUserFBId"] != nil && comment["userFBId"] != nil && comment["user"] != nil, "merged from the 201")
        for (i, route) in WholeObjectClient.Route.allCases.enumerated() {
            comment["comment"] = .string("edited \(i)")
            let r = try await comment.save(via: route)
            #expect(r.status == 200, "\(route): \(r.text)")
        }
        let stored = try await s.request("GET", "/classes/WallImageComment/\(try #require(comment.objectId))", key: .master(nil))
        #expect(stored.json["comment"] == "edited 2")
        #expect(stored.json["imageObjectId"] == .string(imageId))

        // A change is refused, on every route.
        let other = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "d"], key: .session(token)).json["objectId"]?.stringValue)
        for route in WholeObjectClient.Route.allCases {
            let moved = WholeObjectClient(server: s, className: "WallImageComment", key: .session(token), fields: comment.fields)
            moved["imageObjectId"] = .string(other)
            let r = try await moved.save(via: route)
            #expect(r.status == 400 && r.json == ["code": 119, "error": "WallImageComment.imageObjectId can't be changed."], "\(route): \(r.text)")
            let owner = WholeObjectClient(server: s, className: "WallImageComment", key: .session(token), fields: comment.fields)
            owner["imageUserFBId"] = "someone-else"
            let o = try await owner.save(via: route)
            #expect(o.json == ["code": 119, "error": "WallImageComment.imageUserFBId is set by the server and can't be changed."], "\(route): \(o.text)")
        }
    }

    @Test func wholeObjectWallImageSavesDoNoImagingWork() async throws {
        let (uid, token) = try await s.signUp()
        let marker = "noop\(UUID().uuidString.prefix(8).lowercased())"
        let name = try await uploadPhoto("\(marker).jpg", token: token)
        let image = WholeObjectClient(server: s, className: "WallImage", key: .session(token),
                                      fields: ["image": ["__type": "File", "name": .string(name)], "caption": "one"])
        #expect(try await image.save().status == 201)
        #expect(try await image.fetch().status == 200)
        // The local copy now has everything the server set, files with signed URLs.
        #expect(image["image"]?["url"]?.stringValue?.contains("?exp=") == true)
        #expect(image["width"] != nil && image["thumbnail"] != nil && image["user"] == ["__type": "Pointer", "className": "_User", "objectId": .string(uid)])
        let made = try files(marked: marker)
        #expect(made.count == 3, "image, thumbnail and display: \(made)")
        for (i, route) in WholeObjectClient.Route.allCases.enumerated() {
            image["caption"] = .string("edit \(i)")
            let r = try await image.save(via: route)
            #expect(r.status == 200, "\(route): \(r.text)")
            #expect(r.json["thumbnail"] == nil, "no new thumbnail: \(r.text)")
        }
        let afterNoOps = try files(marked: marker)
        #expect(afterNoOps == made, "3 files stay 3 after no-op saves: \(afterNoOps), before \(made); \(serverLines(marked: marker, unless: afterNoOps == made))")
        let got = try await s.request("GET", "/classes/WallImage/\(try #require(image.objectId))", key: .master(nil))
        #expect(got.json["caption"] == "edit 2")
        #expect(got.json["thumbnail"]?["name"] == image["thumbnail"]?["name"])

        // Changes of server-owned fields are refused.
        let changes: [(String, JSON)] = [
            ("width", 1), ("height", 1), ("userFBId", "someone"),
            ("user", ["__type": "Pointer", "className": "_User", "objectId": "someoneElse"]),
            ("thumbnail", ["__type": "File", "name": .string(name)]),
            ("display", ["__op": "Delete"]),
        ]
        for (field, value) in changes {
            for route in WholeObjectClient.Route.allCases {
                let copy = WholeObjectClient(server: s, className: "WallImage", key: .session(token), fields: image.fields)
                copy[field] = value
                let r = try await copy.save(via: route)
                #expect(r.status == 400 && r.json == ["code": 119, "error": .string("WallImage.\(field) is set by the server and can't be changed.")],
                        "\(field) via \(route): \(r.text)")
            }
        }
        let after = try files(marked: marker)
        #expect(after == made, "no refused save made or removed files: \(after), before \(made); \(serverLines(marked: marker, unless: after == made))")
    }

    @Test func realImageChangeRemovesTheOldDerivedFiles() async throws {
        let (_, token) = try await s.signUp()
        let first = "chg\(UUID().uuidString.prefix(8).lowercased())", second = "chg\(UUID().uuidString.prefix(8).lowercased())"
        let a = try await uploadPhoto("\(first).jpg", token: token)
        let image = WholeObjectClient(server: s, className: "WallImage", key: .session(token), fields: ["image": ["__type": "File", "name": .string(a)]])
        #expect(try await image.save().status == 201)
        let oldThumb = try #require(image["thumbnail"]?["url"]?.stringValue)
        let b = try await uploadPhoto("\(second).jpg", token: token)
        image["image"] = ["__type": "File", "name": .string(b)]
        let r = try await image.save()
        #expect(r.status == 200, "\(r.text)")
        #expect(r.json["thumbnail"]?["name"]?.stringValue?.contains(second) == true)
        #expect(try files(marked: first) == [a], "the old thumbnail and display are gone, the old upload stays")
        #expect(try files(marked: second).count == 3)
        #expect(try await s.request("GET", oldThumb, key: .none).status == 404)
    }

    @Test func userFieldsFromTheProviderAreTheServers() async throws {
        // Sign-up can't claim someone's Facebook id (the finding: fbId kept at sign-up).
        let forged = try await s.request("POST", "/users", json: ["username": .string("fb_\(UUID().uuidString.prefix(8))"), "password": "pw",
                                                                  "fbId": "100000000000001"])
        #expect(forged.status == 400)
        #expect(forged.json == ["code": 119, "error": "_User.fbId is set by the server."])
        for field in ["name", "emailVerified", "authData", "sessionToken"] {
            let value: JSON = field == "emailVerified" ? true : field == "authData" ? ["anonymous": ["id": "x"]] : "x"
            let r = try await s.request("POST", "/users", json: ["username": .string("u_\(UUID().uuidString.prefix(8))"), "password": "pw",
                                                                 .init(field): value])
            #expect(r.json["code"] == (field == "authData" ? 252 : 119), "\(field): \(r.text)")
        }

        // A user whose fbId and name the server set (here the master key) saves their whole object back.
        let (uid, token) = try await s.signUp()
        #expect(try await s.request("PUT", "/users/\(uid)", json: ["fbId": .string("fb-\(uid)"), "name": "Server Name"], key: .master(nil)).status == 200)
        let me = WholeObjectClient(server: s, className: "_User", key: .session(token), fields: ["objectId": .string(uid)])
        #expect(try await me.fetch().status == 200)
        #expect(me["fbId"] == .string("fb-\(uid)"))
        for (i, route) in WholeObjectClient.Route.allCases.enumerated() {
            me["email"] = .string("u\(i)-\(uid.lowercased())@example.com")
            me["sessionToken"] = .string(token)
            let r = try await me.save(via: route)
            #expect(r.status == 200, "\(route): \(r.text)")
        }
        for route in WholeObjectClient.Route.allCases {
            for (field, value) in [("fbId", JSON.string("100000000000001")), ("name", "Someone Else"), ("emailVerified", true)] {
                let copy = WholeObjectClient(server: s, className: "_User", key: .session(token), fields: me.fields)
                copy[field] = value
                let r = try await copy.save(via: route)
                #expect(r.status == 400 && r.json["code"] == 119, "\(field) via \(route): \(r.text)")
            }
        }
        let stored = try await s.request("GET", "/users/\(uid)", key: .master(nil))
        #expect(stored.json["fbId"] == .string("fb-\(uid)") && stored.json["name"] == "Server Name")
        #expect(stored.json["email"] == .string("u2-\(uid.lowercased())@example.com"))
    }

    @Test func declaredWallSchema() async throws {
        let (_, token) = try await s.signUp()
        // A stranger can't fix a field's type for everyone: caption is a declared String.
        let typed = try await s.request("POST", "/classes/WallImage", json: ["caption": 12345], key: .session(token))
        #expect(typed.status == 400 && typed.json["code"] == 111, "\(typed.text)")
        #expect(try await s.request("POST", "/classes/WallImage", json: ["caption": "a string"], key: .session(token)).status == 201)
        // New fields need the master key (CLP addField), on create and update, on both wall classes.
        let field = "extra\(UUID().uuidString.prefix(6))"
        let added = try await s.request("POST", "/classes/WallImage", json: [.init(field): 1], key: .session(token))
        #expect(added.status == 400)
        #expect(added.json == ["code": 119, "error": "Permission denied for action addField on class WallImage."])
        let mine = try #require(try await s.request("POST", "/classes/WallImage", json: ["caption": "x"], key: .session(token)).json["objectId"]?.stringValue)
        #expect(try await s.request("PUT", "/classes/WallImage/\(mine)", json: [.init(field): 1], key: .session(token)).json["code"] == 119)
        let comment = try await s.request("POST", "/classes/WallImageComment", json: ["comment": "c", "imageObjectId": .string(mine), .init(field): true],
                                          key: .session(token))
        #expect(comment.json == ["code": 119, "error": "Permission denied for action addField on class WallImageComment."])
        let schema = try await s.request("GET", "/classes/WallImage?where=" + enc([.init(field): ["$exists": true]]), key: .master(nil))
        #expect(schema.json["results"] == [], "nothing was stored")
        // The master key adds it; then clients may write it.
        #expect(try await s.request("POST", "/classes/WallImage", json: [.init(field): 1], key: .master(nil)).status == 201)
        #expect(try await s.request("PUT", "/classes/WallImage/\(mine)", json: [.init(field): 2], key: .session(token)).status == 200)
    }
}
