import PhotoWallCore

/// The mock provider's world: fixture users and the (mutual) friendships between them.
///
/// File shape (`Samples/facebook/users.json`, written by `FixtureGenerator`):
/// ```json
/// {"about": "…", "generator": {"seed": 2013, "users": 60, …},
///  "users": [{"id": "100003512345678", "name": "…", "first_name": "…", "last_name": "…",
///             "email": "…", "color": "#rrggbb", "app_user": true, "community": 3,
///             "friends": ["100007123456789", …]}, …]}
/// ```
/// Only `id` and `name` are required per user. A friendship listed on either side counts for both.
/// Users are kept sorted by id in numeric order, which is also the order of `/me/friends`.
public struct FacebookFixture: Sendable {
    /// Every user, sorted by numeric id.
    public let users: [FixtureUser]
    /// Free text from the file's `about` key (how it was made).
    public var about: String?
    /// The generator settings recorded in the file, if any.
    public var generator: JSON?
    /// Sorted indices into `users`, per user; symmetric, no self-loops.
    let friendIndices: [[Int]]
    let indexByID: [String: Int]

    /// Builds a fixture from users and friendship pairs.
    ///
    /// - Parameters:
    ///   - users: unique numeric-string ids (1–32 digits); any order.
    ///   - friendships: pairs of user ids; order and duplicates do not matter.
    /// - Throws: `FixtureError` for a bad or duplicate id, an unknown id in a pair, or a self-friendship.
    public init(users: [FixtureUser], friendships: [(String, String)]) throws(FixtureError) {
        let sorted = users.sorted { FacebookFixture.idPrecedes($0.id, $1.id) }
        var index: [String: Int] = [:]
        for (i, user) in sorted.enumerated() {
            guard FacebookFixture.isValidID(user.id) else { throw FixtureError("user id \"\(user.id)\" is not 1–32 digits") }
            guard index.updateValue(i, forKey: user.id) == nil else { throw FixtureError("duplicate user id \(user.id)") }
        }
        var sets = [Set<Int>](repeating: [], count: sorted.count)
        for (a, b) in friendships {
            guard let i = index[a] else { throw FixtureError("friendship names unknown user \(a)") }
            guard let j = index[b] else { throw FixtureError("friendship names unknown user \(b)") }
            guard i != j else { throw FixtureError("user \(a) is listed as their own friend") }
            sets[i].insert(j)
            sets[j].insert(i)
        }
        self.users = sorted
        self.indexByID = index
        self.friendIndices = sets.map { $0.sorted() }
    }

    /// Parses the file shape above.
    /// - Throws: `FixtureError` naming the first problem (missing `users`, a user without `id`/`name`, …).
    public init(json: JSON) throws(FixtureError) {
        guard let list = json["users"]?.arrayValue else { throw FixtureError("fixture has no \"users\" array") }
        var users: [FixtureUser] = []
        var pairs: [(String, String)] = []
        for (n, entry) in list.enumerated() {
            guard let id = entry["id"]?.stringValue ?? entry["id"]?.intValue.map({ String($0) }) else {
                throw FixtureError("users[\(n)] has no string \"id\"")
            }
            guard let name = entry["name"]?.stringValue, !name.isEmpty else { throw FixtureError("user \(id) has no \"name\"") }
            let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
            users.append(FixtureUser(
                id: id, name: name,
                firstName: entry["first_name"]?.stringValue ?? parts[0],
                lastName: entry["last_name"]?.stringValue ?? (parts.count > 1 ? parts[1] : ""),
                email: entry["email"]?.stringValue,
                color: entry["color"]?.stringValue ?? "#7f8c8d",
                appUser: entry["app_user"]?.boolValue ?? true,
                community: entry["community"]?.intValue))
            for friend in entry["friends"]?.arrayValue ?? [] {
                guard let friendID = friend.stringValue else { throw FixtureError("user \(id) has a non-string friend id") }
                pairs.append((id, friendID))
            }
        }
        try self.init(users: users, friendships: pairs)
        about = json["about"]?.stringValue
        generator = json["generator"]
    }

    /// Reads and parses a fixture file.
    /// - Throws: `FixtureError` when the file cannot be read, is not JSON, or is inconsistent.
    public static func load(path: String) throws(FixtureError) -> FacebookFixture {
        let bytes = try FileIO.read(path)
        let json: JSON
        do { json = try JSON.parse(bytes) } catch { throw FixtureError("\(path) is not valid JSON: \(error.message)") }
        do { return try FacebookFixture(json: json) } catch { throw FixtureError("\(path): \(error.message)") }
    }

    /// The user with this id, if any.
    public func user(id: String) -> FixtureUser? { indexByID[id].map { users[$0] } }

    /// Every friend of `id` in the fixture (app users or not), sorted by numeric id; empty for an unknown id.
    public func friendIDs(of id: String) -> [String] {
        guard let i = indexByID[id] else { return [] }
        return friendIndices[i].map { users[$0].id }
    }

    /// Number of (undirected) friendships.
    public var friendshipCount: Int { friendIndices.reduce(0) { $0 + $1.count } / 2 }

    /// The file text: one user per line (readable diffs), keys in a fixed order, UTF-8.
    public func fileText() -> String {
        var out = "{\n"
        if let about { out += "  \"about\": \(JSON.string(about).text),\n" }
        if let generator { out += "  \"generator\": \(generator.text),\n" }
        out += "  \"users\": [\n"
        for (i, user) in users.enumerated() {
            var fields: [String] = [
                "\"id\": \(JSON.string(user.id).text)",
                "\"name\": \(JSON.string(user.name).text)",
                "\"first_name\": \(JSON.string(user.firstName).text)",
                "\"last_name\": \(JSON.string(user.lastName).text)",
            ]
            if let email = user.email { fields.append("\"email\": \(JSON.string(email).text)") }
            fields.append("\"color\": \(JSON.string(user.color).text)")
            fields.append("\"app_user\": \(user.appUser)")
            if let community = user.community { fields.append("\"community\": \(community)") }
            fields.append("\"friends\": [" + friendIndices[i].map { JSON.string(users[$0].id).text }.joined(separator: ", ") + "]")
            out += "    {" + fields.joined(separator: ", ") + "}" + (i + 1 < users.count ? ",\n" : "\n")
        }
        out += "  ]\n}\n"
        return out
    }

    /// Graph ids are digit strings; a shorter one is smaller, equal lengths compare as text.
    static func idPrecedes(_ a: String, _ b: String) -> Bool {
        a.utf8.count != b.utf8.count ? a.utf8.count < b.utf8.count : a < b
    }

    static func isValidID(_ id: String) -> Bool {
        (1...32).contains(id.utf8.count) && id.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }
}
