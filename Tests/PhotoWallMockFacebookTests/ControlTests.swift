import PhotoWallCore
import PhotoWallMockFacebook
import PhotoWallTesting
import Testing

/// The test-only `/__control` endpoints.
@Suite struct ControlTests {
    @Test func loginByIdOrNameMintsAWorkingToken() throws {
        try withMock { _, client in
            let byID = try client.json("/__control/login", method: "POST", form: [("user_id", Small.alice)])
            #expect(byID.status == 200)
            #expect(byID.json["user_id"] == .string(Small.alice))
            #expect(byID.json["name"] == "Alice Archer")
            #expect(byID.json["token_type"] == "bearer")
            #expect(byID.json["expires_in"] == 5_183_976)
            #expect(byID.json["scopes"] == ["public_profile", "user_friends"])
            let token = try #require(byID.json["access_token"]?.stringValue)
            #expect(try client.json("/me?" + auth(token)).json["id"] == .string(Small.alice))

            let r = try client.request("POST", "/__control/login", headers: [("Content-Type", "application/json")],
                                       body: Array(#"{"name":"bob brown","scope":["email"],"expires_in":60}"#.utf8))
            let json = try JSON.parse(r.body)
            #expect(json["user_id"] == "100000000000002")
            #expect(json["expires_in"] == 60)
            #expect(json["scopes"] == ["public_profile", "email"])

            let userIdKey = try client.json("/__control/login", method: "POST", form: [("userId", Small.stranger)])
            #expect(userIdKey.json["user_id"] == .string(Small.stranger))

            let unknown = try client.json("/__control/login", method: "POST", form: [("user_id", "42")])
            #expect(unknown.status == 404)
            #expect(unknown.json["error"]?["type"] == "MockControlException")
        }
    }

    @Test func removedFriendshipDisappearsFromFriendsAndResetRestoresIt() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let bob = "100000000000002"
            let removed = try client.json("/__control/friendships/\(Small.alice)/\(bob)", method: "DELETE")
            #expect(removed.json == ["success": true, "changed": true])
            let after = try client.json("/me/friends?" + auth(token))
            #expect(after.json["data"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == Array(Small.visibleFriends.dropFirst()))
            #expect(after.json["summary"]?["total_count"] == 9)
            #expect(server.friendIDs(of: bob) == ["100000000000003"]) // both directions
            let again = try client.json("/__control/friendships/\(Small.alice)/\(bob)", method: "DELETE")
            #expect(again.json["changed"] == false)

            let added = try client.json("/__control/friendships/\(Small.alice)/\(Small.stranger)", method: "PUT")
            #expect(added.json["changed"] == true)
            #expect(try client.json("/me/friends/\(Small.stranger)?" + auth(token)).json["data"]?.arrayValue?.count == 1)

            #expect(try client.json("/__control/reset", method: "POST").json == ["success": true])
            #expect(server.friendIDs(of: Small.alice) == Small.friends)
            #expect(graphError(try client.json("/me?" + auth(token)).json).code == 190) // tokens forgotten
        }
    }

    @Test func usersListingAndAppUserSwitches() throws {
        try withMock { _, client in
            let list = try client.json("/__control/users")
            #expect(list.json["data"]?.arrayValue?.count == 12)
            #expect(list.json["data"]?.arrayValue?.first == ["id": .string(Small.alice), "name": "Alice Archer", "app_user": true, "friend_count": 10])
            let one = try client.json("/__control/users/100000000000004")
            #expect(one.json["app_user"] == false)
            #expect(one.json["friends"] == [.string(Small.alice)])
            #expect(try client.json("/__control/users/100000000000004/app-user", method: "POST", form: [("app_user", "true")]).status == 200)
            #expect(try client.json("/__control/users/100000000000004").json["app_user"] == true)
            #expect(try client.json("/__control/users/100000000000004/remove-app", method: "POST").status == 200)
            #expect(try client.json("/__control/users/100000000000004").json["app_user"] == false)
            let index = try client.json("/__control")
            #expect(index.json["endpoints"]?.arrayValue?.count == 13)
        }
    }

    @Test func controlCanBeTurnedOff() throws {
        try withMock(configure: { $0.enableControlEndpoints = false }) { _, client in
            let r = try client.json("/__control/login", method: "POST", form: [("user_id", Small.alice)])
            #expect(r.status == 400)
            #expect(graphError(r.json).code == 2500)
        }
    }
}
