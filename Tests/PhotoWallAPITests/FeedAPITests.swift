import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// `POST /functions/feed` on a live server with Facebook users and their friends from the mock
/// provider: keyset pages without gaps or duplicates, comment counts, authors. The same function
/// in process against SQLite: PhotoWallWallTests' FeedTests.
@Suite(.serialized) struct FeedAPITests {
    static let env = MockFacebookProcess.withServer(extraArgs: ["--friend-sync-ttl", "1"])
    var s: ParseTestServer { Self.env.0 }
    var fb: MockFacebookProcess { Self.env.1 }

    @Test func feedPagesThroughFriendsImagesWithoutGapsOrDuplicates() async throws {
        let fixture = MockFacebookProcess.fixture
        let appUsers = Set(MockFacebookProcess.appUsers())
        let viewer = try #require(MockFacebookProcess.appUsers(minFriends: 2).dropFirst(8).first)
        let friends = Set((fixture[viewer]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue }).intersection(appUsers)
        let (f1, f2) = (friends.sorted()[0], friends.sorted()[1])
        let stranger = try #require(appUsers.subtracting(friends).subtracting([viewer]).sorted().dropFirst(3).first)
        var sessions: [String: String] = [:]
        for u in [viewer, f1, f2, stranger] { sessions[u] = try await fb.logIn(u, on: s).session }

        var mine: [String: String] = [:]  // objectId → author
        for (author, count) in [(viewer, 3), (f1, 4), (f2, 2), (stranger, 3)] {
            for i in 0..<count {
                let r = try await s.request("POST", "/classes/WallImage", json: ["caption": .string("\(author)-\(i)")], key: .session(sessions[author]!))
                let id = try #require(r.json["objectId"]?.stringValue)
                if author != stranger { mine[id] = author }
            }
        }
        // Comments on one of the viewer's images: 4, so the feed shows the newest 3, oldest first.
        let commented = try #require(mine.first { $0.value == viewer }?.key)
        for (i, who) in [viewer, f1, f2, f1].enumerated() {
            let r = try await s.request("POST", "/classes/WallImageComment", json: ["comment": .string("c\(i)"), "imageObjectId": .string(commented)],
                                        key: .session(sessions[who]!))
            #expect(r.status == 201)
        }

        // Page through with limit 4, while a friend posts a new image after the first page.
        var seen: [String] = []
        var cursor: JSON = .null
        var pages = 0
        var lastCreatedAt = "9999"
        repeat {
            let r = try await s.request("POST", "/functions/feed", json: ["limit": 4, "cursor": cursor], key: .session(sessions[viewer]!))
            #expect(r.status == 200, "\(r.text)")
            let images = try #require(r.json["result"]?["images"]?.arrayValue)
            for img in images {
                let id = try #require(img["objectId"]?.stringValue)
                seen.append(id)
                let created = img["createdAt"]?.stringValue ?? ""
                #expect(created <= lastCreatedAt, "newest first")
                lastCreatedAt = created
                if id == commented {
                    #expect(img["commentCount"] == 4)
                    #expect(img["comments"]?.arrayValue?.map { $0["comment"] } == ["c1", "c2", "c3"])
                    #expect(img["comments"]?.arrayValue?.last?["user"]?["fbId"]?.stringValue == f1)
                }
                if let author = mine[id] {
                    #expect(img["user"]?["fbId"]?.stringValue == author)
                    #expect(img["user"]?["name"] == fixture[author]?["name"])
                }
            }
            cursor = r.json["result"]?["nextCursor"] ?? .null
            pages += 1
            if pages == 1 {
                _ = try await s.request("POST", "/classes/WallImage", json: ["caption": "late"], key: .session(sessions[f1]!))
            }
        } while !cursor.isNull && pages < 20
        #expect(seen.count == Set(seen).count, "no duplicates")
        #expect(Set(seen) == Set(mine.keys), "every image of the viewer and friends, none of the stranger's")
        #expect(pages == 3)

        // A fresh first page starts with the late image; a stranger's feed doesn't show the viewer's.
        let fresh = try await s.request("POST", "/functions/feed", json: ["limit": 1], key: .session(sessions[viewer]!))
        #expect(fresh.json["result"]?["images"]?.arrayValue?.first?["caption"] == "late")
        let theirs = try await s.request("POST", "/functions/feed", json: ["limit": 100], key: .session(sessions[stranger]!))
        let theirIds = Set(theirs.json["result"]?["images"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? [])
        #expect(theirIds.isDisjoint(with: Set(mine.filter { $0.value == viewer }.map(\.key))), "not the viewer's own images")
        #expect(try await s.request("POST", "/functions/feed", json: ["cursor": "???"], key: .session(sessions[viewer]!)).json["code"] == 107)
        #expect(try await s.request("POST", "/functions/feed", json: [:], key: .app).json["code"] == 209)
    }

    /// The feed's comment count follows every way a comment goes away: its author's delete, the
    /// image owner's delete of a friend's comment, a delete inside `/batch`, and the cascade when
    /// the image itself is deleted (the counter is kept with the comment writes, not recounted).
    @Test func commentCountFollowsDeletesAndCascades() async throws {
        let fixture = MockFacebookProcess.fixture
        let appUsers = Set(MockFacebookProcess.appUsers())
        let viewer = try #require(MockFacebookProcess.appUsers(minFriends: 2).dropFirst(9).first)
        let friends = Set((fixture[viewer]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue }).intersection(appUsers).sorted()
        let friend = try #require(friends.first)
        let me = try await fb.logIn(viewer, on: s).session, them = try await fb.logIn(friend, on: s).session
        func post(_ path: String, _ body: JSON, _ session: String) async throws -> String {
            let r = try await s.request("POST", path, json: body, key: .session(session))
            #expect(r.status == 201, "\(r.text)")
            return try #require(r.json["objectId"]?.stringValue)
        }
        let a = try await post("/classes/WallImage", ["caption": "counted A"], me)
        let b = try await post("/classes/WallImage", ["caption": "counted B"], me)
        var theirs: [String] = []
        for i in 0..<3 { theirs.append(try await post("/classes/WallImageComment", ["comment": .string("f\(i)"), "imageObjectId": .string(a)], them)) }
        let mine = try await post("/classes/WallImageComment", ["comment": "m", "imageObjectId": .string(a)], me)
        for i in 0..<2 { _ = try await post("/classes/WallImageComment", ["comment": .string("b\(i)"), "imageObjectId": .string(b)], them) }
        func counts() async throws -> [String: JSON] {
            let r = try await s.request("POST", "/functions/feed", json: ["limit": 100], key: .session(me))
            var out: [String: JSON] = [:]
            for img in r.json["result"]?["images"]?.arrayValue ?? [] where [a, b].contains(img["objectId"]?.stringValue ?? "") {
                out[img["objectId"]!.stringValue!] = img["commentCount"]
            }
            return out
        }
        #expect(try await counts() == [a: 4, b: 2])
        #expect(try await s.request("DELETE", "/classes/WallImageComment/\(theirs[0])", key: .session(them)).status == 200)
        #expect(try await counts() == [a: 3, b: 2], "the author deleted their comment")
        #expect(try await s.request("DELETE", "/classes/WallImageComment/\(theirs[1])", key: .session(me)).status == 200)
        #expect(try await counts() == [a: 2, b: 2], "the image's owner deleted a friend's comment")
        let batch = try await s.request("POST", "/batch", json: ["requests": [["method": "DELETE", "path": .string("/parse/classes/WallImageComment/\(mine)")]]],
                                        key: .session(me))
        #expect(batch.json.arrayValue?.first?["success"] != nil, "\(batch.text)")
        #expect(try await counts() == [a: 1, b: 2], "a delete inside /batch")
        #expect(try await s.request("DELETE", "/classes/WallImage/\(b)", key: .session(me)).status == 200)
        #expect(try await counts() == [a: 1], "the deleted image is gone with its comments")
        let left = try await s.request("GET", "/classes/WallImageComment?count=1&limit=0&where="
                                           + #"{"imageObjectId":"\#(b)"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, key: .master(nil))
        #expect(left.json["count"] == 0, "the cascade deleted image B's comments")
        _ = try await post("/classes/WallImageComment", ["comment": "again", "imageObjectId": .string(a)], them)
        #expect(try await counts() == [a: 2])
    }

    /// `photowall serve` takes the feed strategy's crossover from the database it opens (the feed
    /// store's suggestion for the images it holds: at least 50 authors, growing with √images) unless
    /// `--feed-threshold` is given; it used to fix SQLite's at 300, so its suggestion was never used.
    @Test func serveTakesTheFeedThresholdFromTheDatabase() throws {
        let suggested = try ParseTestServer(extraArgs: ["--log-level", "info"])
        defer { suggested.stop() }
        let log = suggested.serverLog()
        #expect(log.contains("feed: per-author probes up to 50 authors (the database's suggestion for the images it holds)"), "\(log)")
        let fixed = try ParseTestServer(extraArgs: ["--log-level", "info", "--feed-threshold", "120"])
        defer { fixed.stop() }
        #expect(fixed.serverLog().contains("feed: per-author probes up to 120 authors (--feed-threshold)"), "\(fixed.serverLog())")
    }
}

