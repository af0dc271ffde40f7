import PhotoWallCore
import PhotoWallMockFacebook
import PhotoWallTesting
import Testing

/// `/me`, `/{id}`, fields, pictures, `/app`, versioned paths (notes §2.3, §2.4, §2.8 items 4, 5, 7, 10).
@Suite struct GraphNodeTests {
    @Test func meWithFieldsIdAndName() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let r = try client.json("/me?fields=id,name&" + auth(token))
            #expect(r.status == 200)
            #expect(r.json == ["id": .string(Small.alice), "name": "Alice Archer"])
            let defaults = try client.json("/me?" + auth(token))
            #expect(defaults.json == ["id": .string(Small.alice), "name": "Alice Archer"])
        }
    }

    @Test func versionedAndUnversionedPathsAnswerAlike() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            for prefix in ["", "/v19.0", "/v2.12", "/v21.0"] {
                let r = try client.request("GET", prefix + "/me?fields=id&" + auth(token))
                #expect(r.status == 200)
                #expect(try JSON.parse(r.body) == ["id": .string(Small.alice)])
                #expect(r.header("facebook-api-version") == (prefix.isEmpty ? "v19.0" : String(prefix.dropFirst())))
            }
            let notAVersion = try client.json("/vX.1/me?" + auth(token))
            #expect(notAVersion.status == 400)
        }
    }

    @Test func moreFieldsAndEmailNeedsPermission() throws {
        try withMock { server, client in
            let plain = try server.issueToken(forUser: Small.alice).token
            let r = try client.json("/me?fields=first_name,last_name,short_name,email,installed&" + auth(plain))
            #expect(r.json == ["id": .string(Small.alice), "first_name": "Alice", "last_name": "Archer", "short_name": "Alice", "installed": true])
            let withEmail = try server.issueToken(forUser: Small.alice, scopes: ["email"]).token
            let e = try client.json("/me?fields=id,email&" + auth(withEmail))
            #expect(e.json == ["id": .string(Small.alice), "email": "alice@example.com"])
            let bad = try client.json("/me?fields=id,birthday_wish&" + auth(plain))
            #expect(bad.status == 400)
            #expect(graphError(bad.json).code == 100)
            #expect(graphError(bad.json).message == "(#100) Tried accessing nonexisting field (birthday_wish) on node type (User)")
        }
    }

    @Test func otherUserByIdAndUnknownId() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let bob = try client.json("/v19.0/100000000000002?fields=id,name,email&" + auth(token))
            #expect(bob.json == ["id": "100000000000002", "name": "Bob Brown"]) // never someone else's e-mail
            let missing = try client.json("/v19.0/100000000000999?" + auth(token))
            #expect(missing.status == 400)
            #expect(graphError(missing.json).code == 100)
            #expect(graphError(missing.json).subcode == 33)
            #expect(graphError(missing.json).type == "GraphMethodException")
            let unknownEdge = try client.json("/me/feed/x?" + auth(token))
            #expect(graphError(unknownEdge.json).code == 2500)
        }
    }

    @Test func pictureFieldRedirectAndImage() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let base = "http://127.0.0.1:\(server.port)"
            let field = try client.json("/me?fields=picture.type(large)&" + auth(token))
            #expect(field.json["picture"]?["data"] == ["height": 200, "width": 200, "is_silhouette": false,
                                                      "url": .string(base + "/platform/profilepic/\(Small.alice).png?width=200&height=200")])

            let redirect = try client.request("GET", "/\(Small.alice)/picture")
            #expect(redirect.status == 302)
            let location = try #require(redirect.header("Location"))
            #expect(location == base + "/platform/profilepic/\(Small.alice).png?width=50&height=50")

            let image = try client.request("GET", pathOf(location))
            #expect(image.status == 200)
            #expect(image.header("Content-Type") == "image/png")
            #expect(Array(image.body.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            #expect(Array(image.body[16..<24]) == [0, 0, 0, 50, 0, 0, 0, 50]) // IHDR width, height
            #expect(image.body.count == 8 + 25 + (12 + 2 + 5 + 50 * 151 + 4) + 12)

            let json = try client.json("/v19.0/\(Small.alice)/picture?redirect=false&width=120&height=80")
            #expect(json.json == ["data": ["height": 80, "width": 120, "is_silhouette": false,
                                           "url": .string(base + "/platform/profilepic/\(Small.alice).png?width=120&height=80")]])
            let normal = try client.request("GET", "/me/picture?type=normal&" + auth(token))
            #expect(normal.header("Location")?.hasSuffix("width=100&height=100") == true)
        }
    }

    @Test func appReturnsTheAppID() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let r = try client.json("/app?" + auth(token))
            #expect(r.json == ["id": .string(testAppID), "name": "PhotoWall"])
            let appToken = try client.json("/v19.0/app?access_token=\(escape(testAppID + "|" + testSecret))")
            #expect(appToken.json["id"] == .string(testAppID))
            let none = try client.json("/app")
            #expect(graphError(none.json).code == 104)
        }
    }

    @Test func meNeedsAUserToken() throws {
        try withMock { _, client in
            let none = try client.json("/me")
            #expect(none.status == 400)
            #expect(graphError(none.json).code == 2500)
            #expect(graphError(none.json).message == "An active access token must be used to query information about the current user.")
            let app = try client.json("/me?access_token=\(escape(testAppID + "|" + testSecret))")
            #expect(graphError(app.json).code == 2500)
        }
    }

    @Test func bearerHeaderIsAcceptedWithoutSecret() throws {
        try withMock(secret: nil) { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let r = try client.request("GET", "/me?fields=id", headers: [("Authorization", "Bearer " + token)])
            #expect(r.status == 200)
            #expect(try JSON.parse(r.body) == ["id": .string(Small.alice)])
        }
    }

    @Test func permissionsListAndRemoveApp() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let list = try client.json("/me/permissions?" + auth(token))
            #expect(list.json == ["data": [["permission": "public_profile", "status": "granted"],
                                           ["permission": "user_friends", "status": "granted"]]])
            let removed = try client.json("/me/permissions?" + auth(token), method: "DELETE")
            #expect(removed.json == ["success": true])
            let after = try client.json("/me?" + auth(token))
            #expect(graphError(after.json).code == 190)
            #expect(graphError(after.json).subcode == 458)
            #expect(server.isAppUser(Small.alice) == false)
        }
    }
}
