import Foundation
import Testing
import PhotoWallCore
import PhotoWallStorage
import PhotoWallSQLite

/// `Predicate.matches` (the in-memory evaluation LiveQuery uses for an update's original and a deleted
/// object) agrees with the SQLite adapter's SQL on the same objects, predicate by predicate, so an
/// event is decided by the same rules as a find.
@Suite struct PredicateMatchingTests {
    static func date(_ ms: Int64) -> JSON { ParseDate(millisecondsSince1970: ms).json }
    static func pointer(_ id: String) -> JSON { ["__type": "Pointer", "className": "_User", "objectId": .string(id)] }

    static let rows: [(String, [String: JSON])] = [
        ("a000000001", ["score": 5, "name": "Ann", "tags": ["x", "y"], "user": pointer("u1"), "when": date(1_000), "meta": ["w": 10]]),
        ("a000000002", ["score": 11, "name": "bob", "tags": ["y"], "user": pointer("u2"), "when": date(2_000), "meta": ["w": 20]]),
        ("a000000003", ["score": 11.5, "name": "Cy", "tags": [], "user": pointer("u1"), "flag": true]),
        ("a000000004", ["name": "dee", "flag": false, "score": .null]),
        ("a000000005", ["score": -1, "tags": ["x"], "userFBId": "100", "caption": "Sunset at sea"]),
        ("a000000006", ["userFBId": "200", "caption": "sunrise"]),
    ]

    static let predicates: [(String, PhotoWallStorage.Predicate)] = [
        ("all", .all),
        ("eq number", .compare("score", .eq, .number(11))),
        ("ne number (missing matches)", .compare("score", .ne, .number(11))),
        ("gt", .compare("score", .gt, .number(10))),
        ("lte", .compare("score", .lte, .number(5))),
        ("lt string", .compare("name", .lt, .string("bob"))),
        ("eq in array", .compare("tags", .eq, .string("x"))),
        ("in list", .inList("name", [.string("Ann"), .string("dee")], negated: false)),
        ("nin list", .inList("userFBId", [.string("100")], negated: true)),
        ("in list on array", .inList("tags", [.string("y")], negated: false)),
        ("pointer eq", .compare("user", .eq, .pointer(className: "_User", objectId: "u1"))),
        ("exists", .exists("flag", true)),
        ("not exists (null counts as missing)", .exists("score", false)),
        ("date gt", .compare("when", .gt, .date(ParseDate(millisecondsSince1970: 1_500)))),
        ("dotted", .compare("meta.w", .gte, .number(15))),
        ("regex i", .regex("caption", pattern: "^sun", options: "i")),
        ("regex", .regex("caption", pattern: "^sun", options: "")),
        ("all of", .containsAll("tags", [.string("x"), .string("y")])),
        ("bool", .compare("flag", .eq, .bool(true))),
        ("and/or", .and([.or([.compare("score", .gt, .number(10)), .exists("userFBId", true)]), .compare("name", .ne, .string("Cy"))])),
        ("nor", .nor([.compare("score", .eq, .number(5)), .exists("caption", true)])),
        ("objectId", .inList("objectId", [.string("a000000002"), .string("a000000006")], negated: false)),
    ]

    @Test func inMemoryMatchingAgreesWithSQLite() throws {
        let dir = NSTemporaryDirectory() + "pw-match-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try SQLiteAdapter(path: dir + "/db.sqlite", feedProjection: SQLiteAdapterTests.projection)
        let now = ParseDate.now()
        let objects = Self.rows.map { StoredObject(className: "Thing", objectId: $0.0, createdAt: now, updatedAt: now, fields: $0.1, acl: nil) }
        for o in objects { try db.insert(o) }
        for (name, predicate) in Self.predicates {
            let sql = Set(try db.find(StoredQuery(className: "Thing", predicate: predicate, readers: nil)).map(\.objectId))
            let memory = Set(objects.filter { predicate.matches($0) }.map(\.objectId))
            #expect(memory == sql, "\(name): in memory \(memory.sorted()), SQLite \(sql.sorted())")
        }
    }
}
