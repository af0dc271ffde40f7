import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// Makes a deterministic fixture of any size: the same settings give byte-identical output.
///
/// The friend graph is clustered with varied degree, like a real social network:
/// - users fall into communities of 3–(2·avg+4) people (a school, a team, a family);
/// - each user gets a target degree from a truncated Pareto law (α 2.3), scaled so the mean is
///   about `averageFriends` and capped at `maxFriends`: most people have a few friends, a few have many;
/// - each friendship is chosen, in order of decreasing target, 55 % inside the community,
///   25 % as a friend of a friend (triadic closure, which makes triangles), 20 % anywhere.
///
/// Cost is O(users × averageFriends) time and memory: 100 000 users × 30 friends takes a few seconds.
///
/// ```swift
/// let fixture = try FixtureGenerator(userCount: 60, seed: 2013).generate()
/// print(fixture.fileText())
/// ```
public struct FixtureGenerator: Sendable {
    /// Number of users, ≥ 1.
    public var userCount: Int
    /// PRNG seed; the whole output depends only on it and the settings below.
    public var seed: UInt64
    /// Mean friends per user, ≥ 1 (default: users / 7, between 2 and 30).
    public var averageFriends: Double
    /// Largest target degree (default: min(users − 1, 6 × average, max(users / 2, 1))).
    public var maxFriends: Int
    /// Share of users who are app users (`app_user`), 0…1 (default 0.85).
    public var appUserRatio: Double

    /// - Throws: `FixtureError` when `userCount` < 1, `averageFriends` < 0, or `appUserRatio` is outside 0…1.
    public init(userCount: Int, seed: UInt64, averageFriends: Double? = nil, maxFriends: Int? = nil,
                appUserRatio: Double = 0.85) throws(FixtureError) {
        guard userCount >= 1 else { throw FixtureError("the generator needs at least 1 user") }
        guard (0...1).contains(appUserRatio) else { throw FixtureError("app-user ratio must be 0…1") }
        self.userCount = userCount
        self.seed = seed
        let average = averageFriends ?? Double(min(30, max(2, userCount / 7)))
        guard average >= 0 else { throw FixtureError("average friends must be ≥ 0") }
        self.averageFriends = min(average, Double(userCount - 1))
        self.maxFriends = max(0, min(userCount - 1, maxFriends ?? min(Int(6 * self.averageFriends), max(userCount / 2, 1))))
        self.appUserRatio = appUserRatio
    }

    /// Builds the users and friendships.
    public func generate() -> FacebookFixture {
        var rng = SplitMix64(seed: seed)
        let n = userCount
        let users = makeUsers(&rng)
        let communityOf = makeCommunities(&rng)
        var members = [[Int]](repeating: [], count: (communityOf.max() ?? 0) + 1)
        for (user, c) in communityOf.enumerated() { members[c].append(user) }

        // Target degrees: truncated Pareto weights scaled to the requested mean.
        let alpha = 2.3
        let weights = (0..<n).map { _ in min(40, pow(1 - rng.unit(), -1 / (alpha - 1))) }
        let meanWeight = weights.reduce(0, +) / Double(n)
        let targets = weights.map { w -> Int in
            guard averageFriends > 0, maxFriends > 0 else { return 0 }
            return max(1, min(maxFriends, Int((averageFriends * w / meanWeight).rounded())))
        }

        var adjacency = [[Int]](repeating: [], count: n)
        var isFriend = [Set<Int>](repeating: [], count: n) // membership only; never iterated (order is per-process)
        let order = (0..<n).sorted { targets[$0] != targets[$1] ? targets[$0] > targets[$1] : $0 < $1 }
        for u in order {
            var attempts = 0
            while adjacency[u].count < targets[u] && attempts < 30 * targets[u] {
                attempts += 1
                let r = rng.unit()
                let v: Int
                if r < 0.55 {
                    let group = members[communityOf[u]]
                    v = group[rng.below(group.count)]
                } else if r < 0.80, !adjacency[u].isEmpty {
                    let f = adjacency[u][rng.below(adjacency[u].count)]
                    v = adjacency[f][rng.below(adjacency[f].count)]
                } else {
                    v = rng.below(n)
                }
                let room = min(maxFriends, targets[v] + max(2, targets[v] / 2))
                guard v != u, adjacency[v].count < room, !isFriend[u].contains(v) else { continue }
                adjacency[u].append(v); adjacency[v].append(u)
                isFriend[u].insert(v); isFriend[v].insert(u)
            }
        }

        var pairs: [(String, String)] = []
        for u in 0..<n { for v in adjacency[u] where u < v { pairs.append((users[u].id, users[v].id)) } }
        var withCommunities = users
        for u in 0..<n { withCommunities[u].community = communityOf[u] }
        // The ids are unique digit strings by construction, so this cannot fail.
        var fixture = try! FacebookFixture(users: withCommunities, friendships: pairs)
        fixture.about = "Fake people for the mock Facebook provider (test data only). Made by "
            + "`photowall mock-facebook --generate-fixture \(n) --seed \(seed)` (FixtureGenerator)."
        fixture.generator = ["seed": .number(Double(seed)), "users": .number(Double(n)),
                             "average_friends": .number(averageFriends), "max_friends": .number(Double(maxFriends)),
                             "app_user_ratio": .number(appUserRatio)]
        return fixture
    }

    /// Users with unique 15-digit ids (`1000` + 11 digits), names, e-mails, colours, app-user flags.
    private func makeUsers(_ rng: inout SplitMix64) -> [FixtureUser] {
        var ids = Set<String>()
        var names = Set<String>()
        var emails = Set<String>()
        var users: [FixtureUser] = []
        users.reserveCapacity(userCount)
        for _ in 0..<userCount {
            var id: String
            repeat {
                let digits = String(rng.below(100_000_000_000))
                id = "1000" + String(repeating: "0", count: 11 - digits.count) + digits
            } while ids.contains(id)
            ids.insert(id)
            var first = "", last = ""
            for attempt in 0..<20 {
                first = FixtureNames.first[rng.below(FixtureNames.first.count)]
                last = FixtureNames.last[rng.below(FixtureNames.last.count)]
                if !names.contains(first + " " + last) || attempt == 19 { break }
            }
            names.insert(first + " " + last)
            let local = FixtureNames.ascii(first) + "." + FixtureNames.ascii(last)
            var email = local + "@example.com"
            var suffix = 2
            while emails.contains(email) { email = local + "\(suffix)@example.com"; suffix += 1 }
            emails.insert(email)
            let color = FixtureGenerator.color(hue: rng.unit() * 360, saturation: 0.45 + 0.25 * rng.unit(), lightness: 0.45 + 0.15 * rng.unit())
            users.append(FixtureUser(id: id, name: first + " " + last, firstName: first, lastName: last, email: email,
                                     color: color, appUser: rng.unit() < appUserRatio))
        }
        // Index i of the result is the i-th smallest id, matching FacebookFixture's order.
        return users.sorted { FacebookFixture.idPrecedes($0.id, $1.id) }
    }

    /// Community number per user: consecutive runs of a shuffled order, sizes 3…(2·avg+4).
    private func makeCommunities(_ rng: inout SplitMix64) -> [Int] {
        var order = Array(0..<userCount)
        for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, rng.below(i + 1)) }
        var communityOf = [Int](repeating: 0, count: userCount)
        var start = 0, community = 0
        let largest = Int(2 * averageFriends) + 4
        while start < userCount {
            var size = 3 + rng.below(max(1, largest - 2))
            if userCount - (start + size) < 3 { size = userCount - start } // no tiny leftover group
            for i in start..<min(userCount, start + size) { communityOf[order[i]] = community }
            start += size
            community += 1
        }
        return communityOf
    }

    /// `#rrggbb` from HSL (hue in degrees, saturation and lightness 0…1).
    static func color(hue: Double, saturation s: Double, lightness l: Double) -> String {
        let c = (1 - abs(2 * l - 1)) * s
        let h = hue / 60
        let x = c * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double) = switch Int(h) {
        case 0: (c, x, 0)
        case 1: (x, c, 0)
        case 2: (0, c, x)
        case 3: (0, x, c)
        case 4: (x, 0, c)
        default: (c, 0, x)
        }
        let m = l - c / 2
        return "#" + [r, g, b].map { UInt8(max(0, min(255, (($0 + m) * 255).rounded()))) }.hexString
    }
}
