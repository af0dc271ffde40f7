import PhotoWallCore
import PhotoWallMockFacebook
import Testing

/// The committed fixture and the generator.
@Suite struct FixtureTests {
    @Test func committedSampleIsTheGeneratorsOutputForSeed2013() throws {
        let fixture = try FacebookFixture.load(path: sampleFixturePath())
        #expect(fixture.users.count == 60)
        #expect(fixture.users.allSatisfy { $0.id.count == 15 && $0.email != nil && $0.color.count == 7 })
        #expect(Set(fixture.users.map(\.name)).count == 60)
        let degrees = fixture.users.map { fixture.friendIDs(of: $0.id).count }
        #expect(degrees.min()! >= 1)
        #expect(degrees.max()! >= 3 * degrees.min()!) // varied degree
        #expect(fixture.users.filter(\.appUser).count < 60) // some friends are not app users
        for user in fixture.users {
            for friend in fixture.friendIDs(of: user.id) { #expect(fixture.friendIDs(of: friend).contains(user.id)) }
        }
        let regenerated = try FixtureGenerator(userCount: 60, seed: 2013).generate()
        let text = String(decoding: try readAll(sampleFixturePath()), as: UTF8.self)
        #expect(regenerated.fileText() == text)
    }

    @Test func generatorIsDeterministicAndClustered() throws {
        let a = try FixtureGenerator(userCount: 2000, seed: 99).generate()
        let b = try FixtureGenerator(userCount: 2000, seed: 99).generate()
        let c = try FixtureGenerator(userCount: 2000, seed: 100).generate()
        #expect(a.fileText() == b.fileText())
        #expect(a.fileText() != c.fileText())
        #expect(a.users.count == 2000)
        let degrees = a.users.map { a.friendIDs(of: $0.id).count }
        let mean = Double(degrees.reduce(0, +)) / 2000
        #expect(mean > 20 && mean < 40) // default average min(30, 2000/7)
        #expect(degrees.max()! <= 180)
        // Clustering: a user's friends are friends of each other far more often than random pairs
        // (edge density ≈ mean degree / users ≈ 1.5 %). Average local clustering coefficient:
        var coefficients: [Double] = []
        for user in a.users.prefix(300) {
            let friends = a.friendIDs(of: user.id)
            guard friends.count >= 2 else { continue }
            var links = 0
            for i in friends.indices {
                let theirs = Set(a.friendIDs(of: friends[i]))
                for j in friends.indices where j > i && theirs.contains(friends[j]) { links += 1 }
            }
            coefficients.append(Double(links) / Double(friends.count * (friends.count - 1) / 2))
        }
        #expect(coefficients.reduce(0, +) / Double(coefficients.count) > 0.15)
        // The text round-trips through the loader.
        let reparsed = try FacebookFixture(json: try JSON.parse(a.fileText()))
        #expect(reparsed.fileText() == a.fileText())
    }

    @Test func loaderRejectsBadFixtures() {
        #expect(throws: FixtureError.self) { try FacebookFixture(json: ["users": [["id": "12"]]]) }
        #expect(throws: FixtureError.self) { try FacebookFixture(json: ["users": [["id": "ab", "name": "X"]]]) }
        #expect(throws: FixtureError.self) {
            try FacebookFixture(json: ["users": [["id": "1", "name": "X"], ["id": "1", "name": "Y"]]])
        }
        #expect(throws: FixtureError.self) { try FacebookFixture(json: ["users": [["id": "1", "name": "X", "friends": ["2"]]]]) }
        #expect(throws: FixtureError.self) { try FacebookFixture.load(path: "/nonexistent/users.json") }
    }

    @Test func oneSidedFriendshipCountsForBoth() throws {
        let f = try FacebookFixture(json: ["users": [["id": "1", "name": "Ann Ash", "friends": ["2"]], ["id": "2", "name": "Ben Bo"]]])
        #expect(f.friendIDs(of: "2") == ["1"])
        #expect(f.user(id: "1")?.firstName == "Ann")
        #expect(f.user(id: "1")?.appUser == true)
    }
}

#if canImport(Glibc)
import Glibc
#endif

func readAll(_ path: String) throws -> [UInt8] {
    guard let f = fopen(path, "rb") else { throw FixtureError("cannot open \(path)") }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n == 0 { return out }
        out += buffer[..<n]
    }
}
