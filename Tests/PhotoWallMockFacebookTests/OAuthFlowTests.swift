import PhotoWallCore
import PhotoWallMockFacebook
import PhotoWallTesting
import Testing

/// The login dialog and the code exchange (notes §2.1, §2.8 items 1–2).
@Suite struct OAuthFlowTests {
    static let dialogQuery = "client_id=\(testAppID)&redirect_uri=\(escape(testRedirect))&state=\(escape("st&te 42"))&scope=public_profile,user_friends,email"

    /// Approves as `user` through the confirm step; returns the `Location` header.
    static func approve(_ client: TestHTTPClient, user: String, extra: [(String, String)] = [], version: String = "/v19.0") throws -> String {
        let form = [("client_id", testAppID), ("redirect_uri", testRedirect), ("state", "st&te 42"),
                    ("scope", "public_profile,user_friends"), ("user_id", user), ("action", "approve")] + extra
        let r = try client.request("POST", version + "/dialog/oauth/confirm",
                                   headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(formEncode(form).utf8))
        #expect(r.status == 302)
        return r.header("Location") ?? ""
    }

    static func exchange(_ client: TestHTTPClient, code: String, secret: String = testSecret, redirect: String = testRedirect) throws -> (status: Int, json: JSON) {
        try client.json("/v19.0/oauth/access_token?client_id=\(testAppID)&redirect_uri=\(escape(redirect))&client_secret=\(escape(secret))&code=\(escape(code))")
    }

    @Test func dialogPageListsUsersAndCarriesStateAndScope() throws {
        try withMock { _, client in
            let r = try client.request("GET", "/v19.0/dialog/oauth?" + OAuthFlowTests.dialogQuery)
            #expect(r.status == 200)
            #expect(r.header("Content-Type") == "text/html; charset=utf-8")
            let page = r.text
            for user in smallFixture.users {
                #expect(page.contains("value=\"\(user.id)\""))
                #expect(page.contains(user.name))
            }
            #expect(page.contains("<input type=\"hidden\" name=\"state\" value=\"st&amp;te 42\">"))
            #expect(page.contains("<input type=\"hidden\" name=\"redirect_uri\" value=\"\(testRedirect)\">"))
            #expect(page.contains("<input type=\"hidden\" name=\"scope\" value=\"public_profile,user_friends,email\">"))
            #expect(page.contains("name=\"grant\" value=\"user_friends\" checked"))
            #expect(page.contains("action=\"/v19.0/dialog/oauth/confirm\""))
            #expect(page.contains("value=\"approve\"") && page.contains("value=\"cancel\""))
        }
    }

    @Test func dialogRejectsWrongAppAndMissingRedirect() throws {
        try withMock { _, client in
            let wrongApp = try client.request("GET", "/dialog/oauth?client_id=999&redirect_uri=\(escape(testRedirect))&state=s")
            #expect(wrongApp.status == 400)
            #expect(wrongApp.text.contains("Invalid App ID"))
            let noRedirect = try client.request("GET", "/dialog/oauth?client_id=\(testAppID)&state=s")
            #expect(noRedirect.status == 400)
            #expect(noRedirect.text.contains("redirect_uri is required"))
        }
        try withMock(configure: { $0.allowedRedirectURIPrefixes = ["https://app.example/"] }) { _, client in
            let blocked = try client.request("GET", "/dialog/oauth?" + OAuthFlowTests.dialogQuery)
            #expect(blocked.status == 400)
            #expect(blocked.text.contains("URL blocked"))
        }
    }

    @Test func approveRedirectsWithCodeAndStateThenCodeWorksOnce() throws {
        try withMock { server, client in
            let location = try OAuthFlowTests.approve(client, user: Small.alice)
            #expect(location.hasPrefix(testRedirect + "?code="))
            let items = queryItems(location)
            #expect(items["state"] == "st&te 42")
            let code = try #require(items["code"])

            let first = try OAuthFlowTests.exchange(client, code: code)
            #expect(first.status == 200)
            #expect(first.json["token_type"] == "bearer")
            #expect(first.json["expires_in"] == 5_183_976)
            let token = try #require(first.json["access_token"]?.stringValue)
            #expect(token.hasPrefix("EAA"))
            #expect(server.tokenRecord(token)?.userID == Small.alice)
            #expect(server.tokenRecord(token)?.scopes == ["public_profile", "user_friends"])

            let second = try OAuthFlowTests.exchange(client, code: code)
            #expect(second.status == 400)
            #expect(graphError(second.json).code == 100)
            #expect(graphError(second.json).subcode == 36009)
            #expect(graphError(second.json).message == "This authorization code has been used.")
            #expect(graphError(second.json).type == "OAuthException")

            let me = try client.json("/me?fields=id&" + auth(token))
            #expect(me.json == ["id": .string(Small.alice)])
        }
    }

    @Test func cancelRedirectsWithAccessDeniedAndState() throws {
        try withMock { _, client in
            let form = [("client_id", testAppID), ("redirect_uri", testRedirect + "?from=app"), ("state", "xyz"),
                        ("user_id", Small.alice), ("action", "cancel")]
            let r = try client.request("POST", "/dialog/oauth/confirm", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                       body: Array(formEncode(form).utf8))
            #expect(r.status == 302)
            let location = r.header("Location") ?? ""
            #expect(location == testRedirect + "?from=app&error_reason=user_denied&error=access_denied&error_description=Permissions%20error&state=xyz")
            #expect(queryItems(location)["code"] == nil)
        }
    }

    @Test func wrongSecretOrRedirectFailsAndLeavesTheCodeUsable() throws {
        try withMock { _, client in
            let code = try #require(queryItems(try OAuthFlowTests.approve(client, user: Small.alice))["code"])
            let badSecret = try OAuthFlowTests.exchange(client, code: code, secret: "nope")
            #expect(badSecret.status == 400)
            #expect(graphError(badSecret.json).code == 1)
            #expect(graphError(badSecret.json).message == "Error validating client secret.")

            let badRedirect = try OAuthFlowTests.exchange(client, code: code, redirect: "http://127.0.0.1:9/other")
            #expect(badRedirect.status == 400)
            #expect(graphError(badRedirect.json).code == 100)
            #expect(graphError(badRedirect.json).subcode == 36008)

            let unknown = try OAuthFlowTests.exchange(client, code: "AQnot-a-code")
            #expect(graphError(unknown.json).code == 100)
            #expect(graphError(unknown.json).message == "Invalid verification code format.")

            let wrongApp = try client.json("/oauth/access_token?client_id=42&redirect_uri=x&client_secret=\(testSecret)&code=\(code)")
            #expect(graphError(wrongApp.json).code == 101)

            #expect(try OAuthFlowTests.exchange(client, code: code).status == 200)
        }
    }

    @Test func exchangeAcceptsPOSTFormAndUnversionedPath() throws {
        try withMock { _, client in
            let code = try #require(queryItems(try OAuthFlowTests.approve(client, user: Small.alice, version: ""))["code"])
            let r = try client.json("/oauth/access_token", method: "POST",
                                    form: [("client_id", testAppID), ("client_secret", testSecret), ("redirect_uri", testRedirect), ("code", code)])
            #expect(r.status == 200)
            #expect(r.json["access_token"]?.stringValue?.hasPrefix("EAA") == true)
        }
    }

    @Test func uncheckedPermissionIsNotGranted() throws {
        try withMock { server, client in
            // The page posts grants_listed=1 and one `grant` per ticked box; user_friends left unticked.
            let location = try OAuthFlowTests.approve(client, user: Small.alice, extra: [("grants_listed", "1"), ("grant", "public_profile")])
            let code = try #require(queryItems(location)["code"])
            let token = try #require(try OAuthFlowTests.exchange(client, code: code).json["access_token"]?.stringValue)
            #expect(server.tokenRecord(token)?.scopes == ["public_profile"])
            let friends = try client.json("/me/friends?" + auth(token))
            #expect(friends.json["data"] == [])
            #expect(friends.json["summary"]?["total_count"] == 10)
        }
    }

    @Test func implicitGrantPutsTokenInFragment() throws {
        try withMock { server, client in
            let location = try OAuthFlowTests.approve(client, user: "Cara Chen", extra: [("response_type", "token")])
            #expect(location.hasPrefix(testRedirect + "#access_token="))
            let fragment = "x?" + location.split(separator: "#")[1]
            let token = try #require(queryItems(fragment)["access_token"])
            #expect(queryItems(fragment)["expires_in"] == "5183976")
            #expect(queryItems(fragment)["state"] == "st&te 42")
            #expect(server.tokenRecord(token)?.userID == "100000000000003")
        }
    }

    @Test func appTokenFromClientCredentials() throws {
        try withMock { _, client in
            let r = try client.json("/oauth/access_token?client_id=\(testAppID)&client_secret=\(testSecret)&grant_type=client_credentials")
            #expect(r.json == ["access_token": .string("\(testAppID)|\(testSecret)"), "token_type": "bearer"])
        }
    }
}
