import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// `where` operators, `order`, `limit`, `skip`, `count`, in both comma-string and JSON-array forms.
@Suite struct QueryTests {
    let s = sharedServer

    /// Creates a class of its own with five rows and returns its name.
    func seed() async throws -> String {
        let cls = "Q" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12)
        let rows: [JSON] = [
            ["name": "alpha", "n": 1, "flag": true, "tags": ["x", "y"], "when": ["__type": "Date", "iso": "2020-01-01T00:00:00.000Z"]],
            ["name": "beta", "n": 2, "flag": false, "tags": ["y"], "when": ["__type": "Date", "iso": "2021-01-01T00:00:00.000Z"]],
            ["name": "gamma", "n": 3, "flag": true, "tags": [], "when": ["__type": "Date", "iso": "2022-01-01T00:00:00.000Z"]],
            ["name": "Delta", "n": 4, "when": ["__type": "Date", "iso": "2023-01-01T00:00:00.000Z"]],
            ["name": "epsilon", "n": 5, "flag": false, "tags": ["z"], "when": ["__type": "Date", "iso": "2024-01-01T00:00:00.000Z"]],
        ]
        for r in rows {
            let c = try await s.request("POST", "/classes/\(cls)", json: r, key: .master(nil))
            #expect(c.status == 201)
        }
        return cls
    }

    func names(_ cls: String, _ query: String) async throws -> [String] {
        let r = try await s.request("GET", "/classes/\(cls)?\(query)", key: .app)
        #expect(r.status == 200, "\(query): \(r.text)")
        return r.json["results"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    }

    func w(_ j: JSON) -> String { "where=" + enc(j) }

    @Test func operators() async throws {
        let c = try await seed()
        #expect(try await names(c, w(["n": ["$gt": 3]]) + "&order=n") == ["Delta", "epsilon"])
        #expect(try await names(c, w(["n": ["$gte": 3, "$lt": 5]]) + "&order=n") == ["gamma", "Delta"])
        #expect(try await names(c, w(["n": ["$lte": 1]])) == ["alpha"])
        #expect(try await names(c, w(["name": ["$eq": "beta"]])) == ["beta"])
        #expect(try await names(c, w(["name": "beta"])) == ["beta"])
        #expect(try await names(c, w(["n": ["$ne": 1]]) + "&order=n") == ["beta", "gamma", "Delta", "epsilon"])
        #expect(try await names(c, w(["name": ["$in": ["alpha", "gamma", "nope"]]]) + "&order=name") == ["alpha", "gamma"])
        #expect(try await names(c, w(["n": ["$nin": [1, 2, 3]]]) + "&order=n") == ["Delta", "epsilon"])
        #expect(try await names(c, w(["flag": ["$exists": false]])) == ["Delta"])
        #expect(try await names(c, w(["flag": ["$exists": true], "n": ["$lt": 3]]) + "&order=n") == ["alpha", "beta"])
        #expect(try await names(c, w(["flag": true]) + "&order=n") == ["alpha", "gamma"])
        // $ne matches rows where the field is missing (Mongo semantics, as parse-server).
        #expect(try await names(c, w(["flag": ["$ne": true]]) + "&order=n") == ["beta", "Delta", "epsilon"])
        #expect(try await names(c, w(["name": ["$regex": "^[a-d]"]]) + "&order=n") == ["alpha", "beta"])
        #expect(try await names(c, w(["name": ["$regex": "^d", "$options": "i"]])) == ["Delta"])
        #expect(try await names(c, w(["$or": [["n": 1], ["n": 5]]]) + "&order=n") == ["alpha", "epsilon"])
        #expect(try await names(c, w(["$and": [["n": ["$gt": 1]], ["n": ["$lt": 3]]]])) == ["beta"])
        // $nor keeps rows where the field is missing (Delta has no flag), as in parse-server.
        #expect(try await names(c, w(["$nor": [["flag": true], ["n": 5]]]) + "&order=n") == ["beta", "Delta"])
        // An array field equals a value when it contains it.
        #expect(try await names(c, w(["tags": "y"]) + "&order=n") == ["alpha", "beta"])
        #expect(try await names(c, w(["tags": ["$all": ["x", "y"]]])) == ["alpha"])
        // Dates compare by time, as {"__type":"Date"}.
        #expect(try await names(c, w(["when": ["$gte": ["__type": "Date", "iso": "2022-06-01T00:00:00.000Z"]]]) + "&order=-when") == ["epsilon", "Delta"])
        // createdAt compares with an ISO string or a Date.
        #expect(try await names(c, w(["createdAt": ["$gt": "2000-01-01T00:00:00.000Z"]])).count == 5)
        #expect(try await names(c, w(["createdAt": ["$lt": ["__type": "Date", "iso": "2000-01-01T00:00:00.000Z"]]])).isEmpty)
    }

    @Test func orderLimitSkipCount() async throws {
        let c = try await seed()
        #expect(try await names(c, "order=-n") == ["epsilon", "Delta", "gamma", "beta", "alpha"])
        #expect(try await names(c, "order=" + enc(["-n"])) == ["epsilon", "Delta", "gamma", "beta", "alpha"])
        // Several keys; a missing value sorts first, as in parse-server on MongoDB.
        #expect(try await names(c, "order=flag,-n") == ["Delta", "epsilon", "beta", "gamma", "alpha"])
        #expect(try await names(c, "order=n&limit=2&skip=1") == ["beta", "gamma"])
        let counted = try await s.request("GET", "/classes/\(c)?count=1&limit=0", key: .app)
        #expect(counted.json == ["results": [], "count": 5])
        let countTrue = try await s.request("GET", "/classes/\(c)?count=true&limit=2&" + w(["n": ["$gt": 1]]), key: .app)
        #expect(countTrue.json["count"] == 4)
        #expect(countTrue.json["results"]?.arrayValue?.count == 2)
        let keys = try await s.request("GET", "/classes/\(c)?keys=" + enc(["name"]) + "&order=n&limit=1", key: .app)
        #expect(keys.json["results"]?.arrayValue?.first?.objectValue?.keys.sorted() == ["createdAt", "name", "objectId", "updatedAt"])
    }

    @Test func defaultLimitIsOneHundred() async throws {
        let cls = "Many" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(8)
        let requests: [JSON] = (0..<130).map { i in ["method": "POST", "path": .string("/parse/classes/\(cls)"), "body": ["i": .number(Double(i))]] }
        let b = try await s.request("POST", "/batch", json: ["requests": .array(requests)], key: .master(nil))
        #expect(b.status == 200)
        #expect(b.json.arrayValue?.count == 130)
        #expect(b.json.arrayValue?.allSatisfy { $0["success"]?["objectId"] != nil } == true)
        let all = try await s.request("GET", "/classes/\(cls)", key: .app)
        #expect(all.json["results"]?.arrayValue?.count == 100)
        let paged = try await s.request("GET", "/classes/\(cls)?order=i&skip=120&limit=50", key: .app)
        #expect(paged.json["results"]?.arrayValue?.map { $0["i"]?.intValue ?? -1 } == Array(120..<130))
    }

    @Test func pointerEquality() async throws {
        let (uid, token) = try await s.signUp()
        let ptr: JSON = ["__type": "Pointer", "className": "_User", "objectId": .string(uid)]
        let c = try await s.request("POST", "/classes/WallImage", json: ["user": ptr], key: .session(token))
        #expect(c.status == 201)
        let r = try await s.request("GET", "/classes/WallImage?" + w(["user": ptr]), key: .session(token))
        #expect(r.json["results"]?.arrayValue?.map { $0["objectId"]?.stringValue } == [c.json["objectId"]?.stringValue])
    }
}
