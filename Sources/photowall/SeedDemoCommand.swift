import Foundation
import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage
import PhotoWallWall

/// `photowall seed-demo`: fills a data folder quickly with a photo wall, for demos and benchmarks.
///
/// Writes straight into the database (SQLite in the data folder, or `--database postgres://…`) and
/// the file store (bulk transactions, one fsync each), not through HTTP. Either synthetic people (`--users N --friends-per-user K`) or the people and friend
/// graph of a mock-Facebook fixture (`--fixture FILE`), so that logging in through the mock finds the
/// seeded users. Photos come from `--photos DIR` (default `Samples/photos`); each is stored once with
/// its thumbnails and shared by many wall images. `--viewers 50,500,5000` adds users with exactly
/// that many friends and prints session tokens for them (for `make bench`); `--hot-comments H` gives the newest
/// image each viewer sees H more comments (a wall where some photos collect thousands).
enum SeedDemoCommand {
    static let usage = """
        usage: photowall seed-demo [--data-dir DIR] [--database URL] [--users N] [--images M] [--friends-per-user K]
                                   [--comments-per-image C] [--fixture FILE] [--photos DIR] [--viewers N,N,…]
                                   [--hot-comments H] [--seed S] [--json]

        """

    static func run(_ args: [String]) -> Int32 {
        do {
            let o = try Options(args, known: ["data-dir", "database", "users", "images", "friends-per-user", "comments-per-image", "fixture",
                                              "photos", "viewers", "hot-comments", "seed"], flags: ["json", "help"])
            if o.flag("help") { Terminal.write(usage, to: 1); return 0 }
            return try seed(o)
        } catch let e as UsageError {
            Terminal.write("photowall seed-demo: \(e)\n" + usage, to: 2)
            return 64
        } catch let e as ParseError {
            Terminal.write("photowall seed-demo: \(e.message)\(e.cause.map { " (\($0))" } ?? "")\n", to: 2)
            return 1
        } catch {
            Terminal.write("photowall seed-demo: \(error)\n", to: 2)
            return 1
        }
    }

    static func int(_ o: Options, _ name: String, _ def: Int) throws -> Int {
        guard let v = o.value(name) else { return def }
        guard let n = Int(v), n >= 0 else { throw UsageError(description: "--\(name) needs a non-negative number") }
        return n
    }

    static func seed(_ o: Options) throws -> Int32 {
        let dataDir = o.value("data-dir", env: ["PHOTOWALL_DATA_DIR"]) ?? "Storage"
        var rng = SplitMix64(seed: UInt64(try int(o, "seed", 2026)))
        let started = Date()
        _ = try? FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let db = try DatabaseOpener.open(url: o.value("database", env: ["PARSE_SERVER_DATABASE_URI"]), dataDir: dataDir,
                                         logger: Logger(label: "seed-demo"))
        let store = try FileSystemStore(root: dataDir)
        try WallSchema.createClasses(db)
        var config = ServerConfig()
        config.appId = o.value("", env: ["PARSE_SERVER_APPLICATION_ID"]) ?? config.appId
        let files = FileService(records: db, objects: db, store: store, config: config)
        let objects = ObjectService(store: db, fileRecords: db, config: config)
        let users = try UserService(objects: objects)

        // People and friendships.
        var people: [(fbId: String, name: String)] = []
        var pairs: [(String, String)] = []
        if let fixturePath = o.value("fixture") {
            let json = try JSON.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: fixturePath))))
            for u in json["users"]?.arrayValue ?? [] {
                guard let id = u["id"]?.stringValue else { continue }
                people.append((id, u["name"]?.stringValue ?? id))
                for f in u["friends"]?.arrayValue ?? [] { if let fid = f.stringValue, id < fid { pairs.append((id, fid)) } }
            }
        } else {
            let n = try int(o, "users", 1000), k = try int(o, "friends-per-user", 50)
            for i in 0..<n { people.append((String(format: "8%014d", i), "Demo User \(i)")) }
            if n > 1 {
                for i in 0..<n {
                    for _ in 0..<(k / 2) { pairs.append((people[i].fbId, people[rng.below(n)].fbId)) }  // ~k per user, both directions
                }
            }
        }
        var viewers: [(fbId: String, friends: Int)] = []
        var viewerAudiences: [Set<String>] = []  // each viewer's wall id and its friends'

        if let list = o.value("viewers") {
            for (vi, part) in list.split(separator: ",").enumerated() {
                guard let k = Int(part), k >= 0 else { throw UsageError(description: "--viewers takes numbers like 50,500,5000") }
                let fbId = String(format: "7%014d", vi)
                people.append((fbId, "Viewer with \(k) friends"))
                var chosen = Set<Int>()
                let pool = people.count - 1 - vi
                while chosen.count < min(k, pool) { chosen.insert(rng.below(pool)) }
                for c in chosen { pairs.append((fbId, people[c].fbId)) }
                viewers.append((fbId, chosen.count))
                viewerAudiences.append(Set(chosen.map { people[$0].fbId } + [fbId]))
            }
        }
        guard !people.isEmpty else { throw UsageError(description: "nobody to seed: give --users N (N > 0), --fixture or --viewers") }
        let now = ParseDate.now()
        var userIds: [String] = []
        var userObjects: [StoredObject] = []
        for p in people {
            let id = ParseIdentifier.alphanumeric(10)
            userIds.append(id)
            userObjects.append(StoredObject(className: "_User", objectId: id, createdAt: now, updatedAt: now, fields: [
                "username": .string("fb_" + p.fbId), "name": .string(p.name), "fbId": .string(p.fbId),
                "authData": ["facebook": ["id": .string(p.fbId)]],
            ], acl: ACL(entries: ["*": .init(read: true, write: false), id: .init(read: true, write: true)])))
        }
        try db.beginBulkLoad()
        try db.bulkInsert(userObjects)
        try db.bulkInsertFriendships(pairs)

        // Photos: each stored once with its thumbnails, shared by many wall images.
        let photosDir = o.value("photos") ?? "Samples/photos"
        let photoNames = ((try? FileManager.default.contentsOfDirectory(atPath: photosDir)) ?? []).filter { $0.lowercased().hasSuffix(".jpg") }.sorted()
        guard !photoNames.isEmpty else { throw UsageError(description: "no .jpg photos in \(photosDir)") }
        let thumbnails = ThumbnailService(files: files, logger: Logger(label: "seed", level: .warning))
        var photos: [[String: JSON]] = []
        for name in photoNames {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: photosDir + "/" + name)))
            let record = try files.store(bytes, name: name.replacingOccurrences(of: " ", with: "_"), contentType: "image/jpeg")
            photos.append(try WallSchema.demoPhoto(imageName: record.name, thumbnails: thumbnails))
        }

        // Images, oldest first over the last 30 days, and comments.
        let imageCount = try int(o, "images", 5000), perImage = try int(o, "comments-per-image", 1), hot = try int(o, "hot-comments", 0)
        var newestSeen = [(id: String, at: ParseDate, ownerWallId: String)?](repeating: nil, count: viewers.count)
        let span: Int64 = 30 * 86_400_000
        var batch: [StoredObject] = []
        var comments: [StoredObject] = []
        let captions = ["Sunday walk", "Look at this view", "Old town", "Weekend", "Morning light", "On the hill", "With friends", "Finally!"]
        for i in 0..<imageCount {
            let owner = rng.below(people.count)
            let at = ParseDate(millisecondsSince1970: now.millisecondsSince1970 - 3_600_000 - span + span * Int64(i) / Int64(max(imageCount, 1)))
            let id = ParseIdentifier.alphanumeric(10)
            batch.append(WallSchema.demoImage(objectId: id, createdAt: at, photo: photos[i % photos.count], ownerId: userIds[owner],
                                              ownerWallId: people[owner].fbId, caption: captions[rng.below(captions.count)]))
            for c in 0..<perImage {
                let who = rng.below(people.count)
                let cat = ParseDate(millisecondsSince1970: at.millisecondsSince1970 + Int64(c + 1) * 60_000)
                comments.append(WallSchema.demoComment(objectId: ParseIdentifier.alphanumeric(10), createdAt: cat,
                                                       text: ["Nice!", "Love it", "Where is this?", "Beautiful", "😍"][rng.below(5)],
                                                       authorId: userIds[who], authorWallId: people[who].fbId,
                                                       imageId: id, imageOwnerWallId: people[owner].fbId))
            }
            if hot > 0 {
                for (v, audience) in viewerAudiences.enumerated() where audience.contains(people[owner].fbId) {
                    newestSeen[v] = (id, at, people[owner].fbId)
                }
            }
            if batch.count == 50_000 { try db.bulkInsert(batch); batch.removeAll(keepingCapacity: true) }
            if comments.count >= 50_000 { try db.bulkInsert(comments); comments.removeAll(keepingCapacity: true) }
        }
        try db.bulkInsert(batch)
        let hotImages = Set(newestSeen.compactMap { $0?.id })
        let commentCount = imageCount * perImage + hot * hotImages.count
        for image in hotImages {
            guard let seen = newestSeen.first(where: { $0?.id == image }) ?? nil else { continue }
            for c in 0..<hot {
                let who = rng.below(people.count)
                comments.append(WallSchema.demoComment(objectId: ParseIdentifier.alphanumeric(10),
                                                       createdAt: ParseDate(millisecondsSince1970: seen.at.millisecondsSince1970 + Int64(c + 1)),
                                                       text: "Comment \(c + 1)", authorId: userIds[who], authorWallId: people[who].fbId,
                                                       imageId: image, imageOwnerWallId: seen.ownerWallId))
            }
            if comments.count >= 50_000 { try db.bulkInsert(comments); comments.removeAll(keepingCapacity: true) }
        }
        try db.bulkInsert(comments)
        try db.finishBulkLoad()

        // Sessions for the benchmark viewers.
        var viewerJSON: [JSON] = []
        for v in viewers {
            guard let idx = people.firstIndex(where: { $0.fbId == v.fbId }) else { continue }
            let token = try users.createSession(userId: userIds[idx], action: "login", authProvider: "facebook", installationId: nil)
            viewerJSON.append(["fbId": .string(v.fbId), "friends": .number(Double(v.friends)), "objectId": .string(userIds[idx]),
                               "sessionToken": .string(token)])
        }
        let seconds = Date().timeIntervalSince(started)
        if o.flag("json") {
            Terminal.write(JSON.object(["users": .number(Double(people.count)), "friendships": .number(Double(pairs.count)),
                                        "images": .number(Double(imageCount)), "comments": .number(Double(commentCount)),
                                        "seconds": .number((seconds * 10).rounded() / 10), "viewers": .array(viewerJSON)]).text + "\n", to: 1)
        } else {
            Terminal.write("seeded \(dataDir): \(people.count) users, \(pairs.count) friendships, \(imageCount) images, "
                           + "\(commentCount) comments in \(String(format: "%.1f", seconds)) s\n", to: 1)
            for v in viewerJSON { Terminal.write("  viewer \(v["fbId"]!.stringValue!) (\(v["friends"]!.intValue!) friends): \(v["sessionToken"]!.stringValue!)\n", to: 1) }
        }
        return 0
    }
}
