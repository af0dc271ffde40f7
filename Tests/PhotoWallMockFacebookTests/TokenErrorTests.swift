import PhotoWallCore
import PhotoWallMockFacebook
import PhotoWallTesting
import Testing

/// appsecret_proof, expired / revoked / unknown tokens, debug_token (notes §2.2, §2.5, §2.6).
@Suite struct TokenErrorTests {
    @Test func appSecretProofMissingOrWrongIsRefused() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let missing = try client.json("/me?access_token=\(escape(token))")
            #expect(missing.status == 400)
            #expect(missing.json["error"]?["message"] == "API calls from the server require an appsecret_proof argument")
            #expect(missing.json["error"]?["type"] == "GraphMethodException")
            #expect(missing.json["error"]?["code"] == 100)
            #expect(missing.json["error"]?["fbtrace_id"]?.stringValue?.count == 11)

            let wrong = try client.json("/me?access_token=\(escape(token))&appsecret_proof=\(String(repeating: "0", count: 64))")
            #expect(graphError(wrong.json).message == "Invalid appsecret_proof provided in the API argument")
            #expect(graphError(wrong.json).code == 100)

            let upper = try client.json("/me?access_token=\(escape(token))&appsecret_proof=\(proof(token).uppercased())")
            #expect(upper.status == 200)
        }
    }

    @Test func proofMatchesHMACSHA256Hex() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        #expect(MockFacebookServer.appSecretProof(accessToken: "what do ya want for nothing?", appSecret: "Jefe")
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func proofOptionalWhenNotRequiredButCheckedWhenSent() throws {
        try withMock(configure: { $0.requireAppSecretProof = false }) { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            #expect(try client.json("/me?access_token=\(escape(token))").status == 200)
            let wrong = try client.json("/me?access_token=\(escape(token))&appsecret_proof=abc")
            #expect(graphError(wrong.json).message == "Invalid appsecret_proof provided in the API argument")
        }
    }

    @Test func expiredTokenGives190Subcode463() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let control = try client.json("/__control/tokens/\(token)/expire", method: "POST")
            #expect(control.status == 200)
            #expect(control.json["token"]?["status"] == "expired")
            let r = try client.request("GET", "/me?" + auth(token))
            #expect(r.status == 400)
            let e = graphError(try JSON.parse(r.body))
            #expect(e.code == 190)
            #expect(e.subcode == 463)
            #expect(e.type == "OAuthException")
            #expect(e.message?.hasPrefix("Error validating access token: Session has expired on ") == true)
            #expect(e.message?.contains(". The current time is ") == true)
            #expect(r.header("WWW-Authenticate")?.hasPrefix("OAuth \"Facebook Platform\" \"invalid_token\"") == true)

            let zeroLifetime = try server.issueToken(forUser: Small.alice, lifetimeSeconds: 0).token
            #expect(graphError(try client.json("/me?" + auth(zeroLifetime)).json).subcode == 463)
        }
    }

    @Test func revokedLoggedOutAndUnknownTokens() throws {
        try withMock { server, client in
            let revoked = try server.issueToken(forUser: Small.alice).token
            #expect(try client.json("/__control/tokens/\(revoked)/revoke", method: "POST").status == 200)
            let r1 = graphError(try client.json("/me?" + auth(revoked)).json)
            #expect(r1.code == 190)
            #expect(r1.subcode == 460)
            #expect(r1.message == "Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.")

            let loggedOut = try server.issueToken(forUser: Small.alice).token
            #expect(try client.json("/__control/tokens/\(loggedOut)/logout", method: "POST").status == 200)
            #expect(graphError(try client.json("/me?" + auth(loggedOut)).json).subcode == 467)

            let viaSubcode = try server.issueToken(forUser: Small.alice).token
            _ = try client.json("/__control/tokens/\(viaSubcode)/revoke", method: "POST", form: [("subcode", "467")])
            #expect(graphError(try client.json("/me?" + auth(viaSubcode)).json).subcode == 467)

            let unknown = graphError(try client.json("/me?" + auth("EAAnot-issued")).json)
            #expect(unknown.code == 190)
            #expect(unknown.subcode == nil)
            #expect(unknown.message == "Invalid OAuth access token - Cannot parse access token")

            // Other tokens of the same user keep working.
            let fresh = try server.issueToken(forUser: Small.alice).token
            #expect(try client.json("/me?" + auth(fresh)).status == 200)
            #expect(try client.json("/__control/tokens/EAAnope/expire", method: "POST").status == 404)
        }
    }

    @Test func debugTokenShape() throws {
        try withMock { server, client in
            let record = try server.issueToken(forUser: Small.alice, scopes: ["public_profile", "user_friends"])
            let appToken = escape(testAppID + "|" + testSecret)
            let r = try client.json("/v19.0/debug_token?input_token=\(escape(record.token))&access_token=\(appToken)")
            #expect(r.status == 200)
            #expect(r.json == ["data": ["app_id": .string(testAppID), "type": "USER", "application": "PhotoWall",
                                        "data_access_expires_at": .number(Double(record.issuedAt + 7_776_000)),
                                        "expires_at": .number(Double(record.expiresAt)), "issued_at": .number(Double(record.issuedAt)),
                                        "is_valid": true, "scopes": ["public_profile", "user_friends"],
                                        "granular_scopes": [["scope": "user_friends"]], "user_id": .string(Small.alice)]])
            #expect(record.expiresAt - record.issuedAt == 5_183_976)

            server.expireToken(record.token)
            let expired = try client.json("/debug_token?input_token=\(escape(record.token))&access_token=\(appToken)")
            #expect(expired.json["data"]?["is_valid"] == false)
            #expect(expired.json["data"]?["error"]?["code"] == 190)
            #expect(expired.json["data"]?["error"]?["subcode"] == 463)

            let unknown = try client.json("/debug_token?input_token=EAAzzz&access_token=\(appToken)")
            #expect(unknown.json == ["data": ["error": ["code": 190, "message": "Invalid OAuth access token - Cannot parse access token"],
                                              "is_valid": false, "scopes": []]])

            let badApp = try client.json("/debug_token?input_token=EAAzzz&access_token=\(escape(testAppID + "|wrong"))")
            #expect(graphError(badApp.json).code == 190)
            let noInspector = try client.json("/debug_token?input_token=EAAzzz")
            #expect(graphError(noInspector.json).code == 100)
        }
    }

    @Test func longLivedExchangeKeepsUserAndScopes() throws {
        try withMock { server, client in
            let short = try server.issueToken(forUser: Small.alice, scopes: ["email"]).token
            let r = try client.json("/oauth/access_token?grant_type=fb_exchange_token&client_id=\(testAppID)&client_secret=\(testSecret)&fb_exchange_token=\(escape(short))")
            let long = try #require(r.json["access_token"]?.stringValue)
            #expect(long != short)
            #expect(server.tokenRecord(long)?.scopes == ["public_profile", "email"])
        }
    }
}
