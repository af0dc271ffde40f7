import PhotoWallCore
import PhotoWallMockFacebook
import PhotoWallTesting
import Testing

/// `/me/friends`: cursor paging, `summary.total_count`, the app-user filter (notes §2.3, §2.8 item 6).
@Suite struct FriendsTests {
    /// Follows `paging.next` from `first` to the end; returns every page's ids.
    static func walk(_ client: TestHTTPClient, _ first: String) throws -> (pages: [[String]], totals: Set<Int>) {
        var pages: [[String]] = []
        var totals = Set<Int>()
        var target: String? = first
        while let t = target, pages.count < 100 {
            let r = try client.json(t)
            #expect(r.status == 200)
            pages.append((r.json["data"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
            if let total = r.json["summary"]?["total_count"]?.intValue { totals.insert(total) }
            target = r.json["paging"]?["next"]?.stringValue.map(pathOf)
        }
        return (pages, totals)
    }

    @Test func pagingWalksEveryAppUserFriendOnceWithTotalCount() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let (pages, totals) = try FriendsTests.walk(client, "/v19.0/me/friends?limit=3&" + auth(token))
            #expect(pages.map(\.count) == [3, 3, 1])
            #expect(pages.flatMap { $0 } == Small.visibleFriends) // numeric id order, no duplicates, non-app users left out
            #expect(totals == [10])
        }
    }

    @Test func firstPageShapeAndNames() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let r = try client.json("/me/friends?limit=2&" + auth(token))
            #expect(r.json["data"] == [["id": "100000000000002", "name": "Bob Brown"], ["id": "100000000000003", "name": "Cara Chen"]])
            let paging = try #require(r.json["paging"])
            #expect(paging["previous"] == nil)
            let next = try #require(paging["next"]?.stringValue)
            #expect(next.hasPrefix("http://127.0.0.1:\(server.port)/\(Small.alice)/friends?"))
            let items = queryItems(next)
            #expect(items["access_token"] == token)
            #expect(items["appsecret_proof"] == proof(token))
            #expect(items["limit"] == "2")
            #expect(items["after"] == paging["cursors"]?["after"]?.stringValue)
            #expect(r.json["summary"] == ["total_count": 10])
        }
    }

    @Test func beforeCursorAndPreviousLinkGoBack() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let first = try client.json("/me/friends?limit=3&" + auth(token))
            let second = try client.json(pathOf(try #require(first.json["paging"]?["next"]?.stringValue)))
            #expect(second.json["data"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == Array(Small.visibleFriends[3..<6]))
            let previous = try #require(second.json["paging"]?["previous"]?.stringValue)
            let back = try client.json(pathOf(previous))
            #expect(back.json["data"] == first.json["data"])
            let bad = try client.json("/me/friends?after=%21%21&" + auth(token))
            #expect(graphError(bad.json).code == 100)
        }
    }

    @Test func defaultLimitAndLastPageHasNoNext() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let r = try client.json("/me/friends?fields=id&" + auth(token))
            #expect(r.json["data"]?.arrayValue?.count == 7) // all fit in the default 25
            #expect(r.json["data"]?.arrayValue?.first == ["id": "100000000000002"])
            #expect(r.json["paging"]?["next"] == nil)
            #expect(r.json["paging"]?["previous"] == nil)
            let zero = try client.json("/me/friends?limit=0&" + auth(token))
            #expect(graphError(zero.json).code == 100)
        }
    }

    @Test func appUserFilterFollowsLogins() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let dev = "100000000000004"
            #expect(try FriendsTests.walk(client, "/me/friends?" + auth(token)).pages.flatMap { $0 }.contains(dev) == false)
            _ = try server.issueToken(forUser: dev) // Dev logs in with user_friends and becomes an app user
            let ids = try FriendsTests.walk(client, "/me/friends?" + auth(token)).pages.flatMap { $0 }
            #expect(ids.contains(dev))
            #expect(ids.count == 8)
        }
    }

    @Test func friendshipCheckAndOnlyOwnFriends() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let yes = try client.json("/me/friends/100000000000002?" + auth(token))
            #expect(yes.json["data"] == [["id": "100000000000002", "name": "Bob Brown"]])
            let no = try client.json("/me/friends/\(Small.stranger)?" + auth(token))
            #expect(no.json["data"] == [])
            let own = try client.json("/\(Small.alice)/friends?limit=1&" + auth(token))
            #expect(own.json["data"]?.arrayValue?.count == 1)
            let others = try client.json("/100000000000002/friends?" + auth(token))
            #expect(graphError(others.json).code == 100)
        }
    }

    @Test func friendsFieldExpansionOnMe() throws {
        try withMock { server, client in
            let token = try server.issueToken(forUser: Small.alice).token
            let r = try client.json("/me?fields=id,friends.limit(2){id}&" + auth(token))
            #expect(r.json["friends"]?["data"] == [["id": "100000000000002"], ["id": "100000000000003"]])
            #expect(r.json["friends"]?["summary"] == ["total_count": 10])
        }
    }

    @Test func sampleFixturePagingMatchesFixture() throws {
        let fixture = try FacebookFixture.load(path: sampleFixturePath())
        // The best-connected app user, so that paging has several pages.
        let hub = try #require(fixture.users.filter(\.appUser).max { fixture.friendIDs(of: $0.id).count < fixture.friendIDs(of: $1.id).count })
        let all = fixture.friendIDs(of: hub.id)
        let expected = all.filter { fixture.user(id: $0)!.appUser }
        #expect(expected.count < all.count) // the filter matters for this user
        try withMock(fixture: fixture) { server, client in
            let token = try server.issueToken(forUser: hub.id).token
            let (pages, totals) = try FriendsTests.walk(client, "/me/friends?limit=4&" + auth(token))
            let ids = pages.flatMap { $0 }
            #expect(ids == expected)
            #expect(Set(ids).count == ids.count)
            #expect(pages.count == (expected.count + 3) / 4)
            #expect(totals == [all.count])
        }
    }
}
