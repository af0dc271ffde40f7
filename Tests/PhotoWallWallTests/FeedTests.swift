import Foundation
import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage
import PhotoWallWall
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `feed` cloud function as the wall installs it in `ObjectService` (the function REST calls),
/// in process against a real SQLite file: page order, the keyset cursor, comment counts and the
/// latest comments. FeedAPITests checks it through HTTP.
@Suite struct FeedTests {
    /// Ids of `ids`' images newest first, as the feed orders them: by (`createdAt`, `objectId`) descending.
    func newestFirst(_ ids: [String], _ f: WallFixture) throws -> [String] {
        let stored = try ids.map { id in try #require(try f.objects.fetchStored(className: WallSchema.imageClass, objectId: id)) }
        return stored.sorted { ($0.createdAt.millisecondsSince1970, $0.objectId) > ($1.createdAt.millisecondsSince1970, $1.objectId) }
            .map(\.objectId)
    }

    /// The fixture's `feed` function (as `ObjectService` binds it for REST), its answer read back as a value:
    /// the feed answers JSON text (`FunctionResult.text`).
    func feedFunction(_ f: WallFixture) throws -> ([String: JSON], AuthContext) throws -> JSON {
        let feed = try #require(f.objects.functions["feed"])
        return { params, auth in
            guard case .text(let text) = try feed(params, auth) else { throw ParseError(.internalServerError, "the feed answered a value, not its text") }
            return try JSON.parse(text)
        }
    }

    @Test(arguments: [FeedStrategy.perAuthor, .globalScan])
    func pagesThroughTheViewersAndFriendsImagesNewestFirstWithCommentCounts(strategy: FeedStrategy) throws {
        let f = try WallFixture(feedThreshold: strategy == .perAuthor ? 300 : 0)
        var mine: [String] = []
        for i in 0..<3 { mine.append(try f.image("owner \(i)", by: f.owner)) }
        let theirs = [try f.image("friend 0", by: f.friend), try f.image("friend 1", by: f.friend)]
        _ = try f.image("stranger", by: f.stranger)
        let commented = mine[1]
        var comments: [String] = []
        for (i, who) in [f.friend, f.owner, f.friend, f.owner].enumerated() {
            comments.append(try f.comment("c\(i)", on: commented, by: who))
            // Distinct creation milliseconds: comments made in the same one are ordered by their
            // random objectIds (the feed's tie-break), which made this expectation flaky.
            usleep(2_000)
        }
        let expected = try newestFirst(mine + theirs, f)

        let feed = try feedFunction(f)
        var seen: [String] = []
        var cursor: JSON = .null
        var pages = 0
        repeat {
            let page = try feed(["limit": 2, "cursor": cursor], f.friend)
            let images = try #require(page["images"]?.arrayValue)
            seen += images.compactMap { $0["objectId"]?.stringValue }
            for image in images {
                let id = image["objectId"]!.stringValue!
                let count = id == commented ? 4 : 0
                #expect(image["commentCount"] == .number(Double(count)), "\(id)")
                #expect(image["comments"]?.arrayValue?.count == min(count, 3))
                let author = mine.contains(id) ? ("1001", "Olga Owner") : ("1002", "Fred Friend")
                #expect(image["user"]?["fbId"]?.stringValue == author.0)
                #expect(image["user"]?["name"]?.stringValue == author.1)
            }
            if let c = images.first(where: { $0["objectId"]?.stringValue == commented }) {
                // The newest three, oldest first, with their authors' names.
                #expect(c["comments"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } == Array(comments.suffix(3)))
                #expect(c["comments"]?.arrayValue?.compactMap { $0["comment"]?.stringValue } == ["c1", "c2", "c3"])
                #expect(c["comments"]?.arrayValue?.first?["user"]?["name"]?.stringValue == "Olga Owner")
            }
            cursor = page["nextCursor"] ?? .null
            pages += 1
        } while !cursor.isNull && pages < 10
        #expect(seen == expected, "every image of the viewer's audience once, newest first; none of the stranger's")
        #expect(pages == 3, "2 + 2 + 1")

        // The stranger sees only their own; anonymous callers and bad cursors are refused.
        let strangers = try feed([:], f.stranger)
        #expect(strangers["images"]?.arrayValue?.map { $0["caption"] } == ["stranger"])
        #expect(strangers["nextCursor"] == .null)
        #expect(parseError { try feed([:], .anonymous) }?.code == .invalidSessionToken)
        #expect(parseError { try feed(["cursor": "%%%"], f.owner) }?.code == .invalidJSON)
        #expect(parseError { try feed(["limit": 0], f.owner) }?.code == .invalidQuery)
    }

    /// An image's shown fields come out as stored (the feed reads only these members of the stored
    /// row): the files with their signed URLs, width, height, a caption with escapes, the author; a
    /// field the feed doesn't show stays out.
    @Test func showsTheImagesFieldsAsStored() throws {
        let f = try WallFixture()
        let owner = try #require(f.owner.user)
        let file = { (name: String) -> JSON in ["__type": "File", "name": .string(name)] }
        let at = ParseDate.now()
        let caption = "Quote \" back\\slash \u{1F600} tab\t"
        try f.database.insert(StoredObject(className: WallSchema.imageClass, objectId: "img0000001", createdAt: at, updatedAt: at, fields: [
            "image": file("a1_photo.jpg"), "thumbnail": file("a1_photo_thumbnail.jpg"), "display": file("a1_photo_display.jpg"),
            "width": 1200, "height": .number(800.5), "caption": .string(caption), "likes": 7,
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(owner.objectId)], WallSchema.authorField: "1001",
        ], acl: nil))
        let feed = try feedFunction(f)
        let page = try feed([:], f.friend)
        let image = try #require(page["images"]?.arrayValue?.first)
        #expect(image["objectId"] == "img0000001")
        #expect(image["caption"] == .string(caption))
        #expect(image["width"] == 1200)
        #expect(image["height"] == .number(800.5))
        #expect(image["likes"] == nil)
        #expect(image["user"] == ["objectId": .string(owner.objectId), "name": "Olga Owner", "fbId": "1001"])
        #expect(image["createdAt"] == .string(at.iso))
        for (field, name) in [("image", "a1_photo.jpg"), ("thumbnail", "a1_photo_thumbnail.jpg"), ("display", "a1_photo_display.jpg")] {
            #expect(image[field]?["name"] == .string(name))
            let url = try #require(image[field]?["url"]?.stringValue)
            #expect(url.hasPrefix(f.objects.config.fileURL(name) + "?exp="), "\(url)")
        }
    }

    /// An image whose ACL hides it from the viewer is left out of the viewer's feed, as GET leaves it out;
    /// a page goes on past such images (`FeedService.maxFillRounds` reads of keys) instead of coming back
    /// short or empty while older images remain.
    @Test(arguments: [FeedStrategy.perAuthor, .globalScan])
    func imagesTheViewerMayNotReadAreLeftOutAndPagesFillPastThem(strategy: FeedStrategy) throws {
        let f = try WallFixture(feedThreshold: strategy == .perAuthor ? 300 : 0)
        var open: [String] = []
        for i in 0..<3 { open.append(try f.image("open \(i)", by: f.owner)) }
        usleep(2_000)
        let ownerOnly: JSON = [.init(f.owner.userId!): ["read": true, "write": true]]
        var hidden: [String] = []
        for i in 0..<12 {
            hidden.append(try f.objects.create(className: WallSchema.imageClass, body: ["caption": .string("hidden \(i)"), "ACL": ownerOnly],
                                               auth: f.owner).objectId)
        }
        let feed = try feedFunction(f)
        func pages(_ auth: AuthContext, limit: Int) throws -> [[String]] {
            var out: [[String]] = []
            var cursor: JSON = .null
            repeat {
                let page = try feed(["limit": .number(Double(limit)), "cursor": cursor], auth)
                out.append(try #require(page["images"]?.arrayValue).compactMap { $0["objectId"]?.stringValue })
                cursor = page["nextCursor"] ?? .null
            } while !cursor.isNull && out.count < 20
            return out
        }
        let friendPages = try pages(f.friend, limit: 2)
        #expect(friendPages.flatMap { $0 } == (try newestFirst(open, f)))
        #expect(friendPages.dropLast().allSatisfy { $0.count == 2 }, "\(friendPages)")
        #expect(try pages(f.owner, limit: 5).flatMap { $0 } == (try newestFirst(open + hidden, f)))
        // GET agrees.
        #expect(parseError { try f.objects.get(className: WallSchema.imageClass, objectId: hidden[0], auth: f.friend) }?.code == .objectNotFound)
    }

    /// A user written while a feed page's read snapshot is open: the page may show the user as its
    /// snapshot saw it, but must not leave that in the users' cache (`ObjectService.includeTargets`):
    /// the cache's generation for the page's authors is taken before the snapshot began. With one
    /// taken at the read, after the write's invalidation, the old name (or ACL) would be served on.
    @Test func aUserWrittenDuringAPageIsNotCachedAsThePageSawIt() throws {
        let f = try WallFixture(userCacheSeconds: 60)
        let ownerId = try #require(f.owner.user?.objectId)
        let via = [WallSchema.imageClass + ".user": Set([ownerId])]
        func name(_ shown: [String: [JSON?]]) -> JSON? { shown[ownerId]?[1] ?? nil }
        let before = f.objects.includeCacheGeneration()
        let seen = try f.database.readingOneSnapshot { () throws(ParseError) -> [String: [JSON?]] in
            // The snapshot begins with its first read.
            _ = try f.database.find(StoredQuery(className: "_User", predicate: .all, limit: 1, readers: nil))
            // Another thread renames the owner; the write commits while the snapshot stays open.
            let done = DispatchSemaphore(value: 0)
            let objects = f.objects
            let writer = Thread {
                _ = try? objects.update(className: "_User", objectId: ownerId, body: ["name": "Olga Renamed"], auth: .master)
                done.signal()
            }
            writer.start()
            done.wait()
            return try f.objects.includedMembers(className: "_User", idsVia: via, auth: f.friend, members: ["fbId", "name"],
                                                 readsSince: before)
        }
        #expect(name(seen) == "Olga Owner")
        let stored = try #require(try f.objects.fetchStored(className: "_User", objectId: ownerId))
        #expect(stored.fields["name"] == "Olga Renamed")
        let next = try f.objects.includedMembers(className: "_User", idsVia: via, auth: f.friend, members: ["fbId", "name"])
        #expect(name(next) == "Olga Renamed")
        // And the cache does serve: a rename behind its back (straight to the database) is not seen
        // while the entry lives, so the reads above went through it.
        _ = try f.database.update(className: "_User", objectId: ownerId, writers: nil) { (o: inout StoredObject) throws(ParseError) in
            o.fields["name"] = "Olga Unseen"
        }
        #expect(name(try f.objects.includedMembers(className: "_User", idsVia: via, auth: f.friend, members: ["fbId", "name"])) == "Olga Renamed")
    }
}
