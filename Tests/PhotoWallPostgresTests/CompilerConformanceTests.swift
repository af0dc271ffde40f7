import Foundation
import Testing
import PhotoWallCore
import PhotoWallPostgres
import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallTesting

/// The same predicates and orders against `SQLiteAdapter` and `PostgresAdapter` on the same rows:
/// the two query compilers must agree (missing fields, nulls, typed fields, arrays, regex options).
@Suite(.enabled(if: TestPostgres.adminURL != nil, Comment(rawValue: TestPostgres.skipNote)))
struct CompilerConformanceTests {
    let sqlite: SQLiteAdapter
    let postgres: PostgresAdapter

    /// One pair of databases with the rows below, shared by every case (made on first use).
    static let fixture = Result { () throws -> (SQLiteAdapter, PostgresAdapter) in
        let dir = NSTemporaryDirectory() + "pw-conf-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let sqlite = try SQLiteAdapter(path: dir + "/db.sqlite")
        let postgres = try PostgresAdapter(url: try TestPostgres.freshDatabase(), maxConnections: 4)
        let fields: [String: FieldType] = ["s": .string, "n": .number, "b": .boolean, "d": .date, "p": .pointer("_User"),
                                           "f": .file, "arr": .array, "o": .object]
        for db in [sqlite as any ObjectStore, postgres] {
            try db.ensureClass("X", fields: fields, indexedFields: ["s", "n", "p.objectId"], uniqueFields: [])
            for (i, row) in rows.enumerated() {
                let t = ParseDate(millisecondsSince1970: 1_700_000_000_000 + Int64(i) * 1000)
                try db.insert(StoredObject(className: "X", objectId: String(format: "obj%07d", i), createdAt: t, updatedAt: t, fields: row, acl: nil))
            }
        }
        return (sqlite, postgres)
    }

    init() throws {
        (sqlite, postgres) = try Self.fixture.get()
    }

    static func date(_ iso: String) -> JSON { ["__type": "Date", "iso": .string(iso)] }
    static func pointer(_ id: String) -> JSON { ["__type": "Pointer", "className": "_User", "objectId": .string(id)] }

    static let rows: [[String: JSON]] = [
        ["s": "alpha", "n": 1, "b": true, "d": date("2020-01-01T00:00:00.000Z"), "p": pointer("u1"), "f": ["__type": "File", "name": "a.jpg"],
         "arr": ["x", "y"], "o": ["k": 1, "t": "one"]],
        ["s": "Beta", "n": 2.5, "b": false, "d": date("2021-06-01T00:00:00.000Z"), "p": pointer("u2"), "arr": ["y", 3], "o": ["k": 2]],
        ["s": "gamma\nline", "n": -3, "arr": [], "o": ["t": "two"]],
        ["n": 10, "b": true, "s": .null],
        [:],
        ["s": "delta", "n": 0, "b": false, "d": date("2019-12-31T23:59:59.999Z"), "p": pointer("u1"), "arr": ["z"]],
        ["s": "épsilon", "n": 100, "arr": [1, 2, 3], "o": ["k": 10, "t": "ten"]],
    ]

    typealias Pred = PhotoWallStorage.Predicate
    typealias Case = (name: String, predicate: Pred)
    static func c(_ name: String, _ p: Pred) -> Case { (name, p) }

    static var predicates: [Case] {
        [
            c("s = alpha", .compare("s", .eq, .string("alpha"))),
            c("s != alpha", .compare("s", .ne, .string("alpha"))),
            c("s < delta", .compare("s", .lt, .string("delta"))),
            c("s >= Beta", .compare("s", .gte, .string("Beta"))),
            c("s = null", .compare("s", .eq, .null)),
            c("s != null", .compare("s", .ne, .null)),
            c("n > 1", .compare("n", .gt, .number(1))),
            c("n <= 0", .compare("n", .lte, .number(0))),
            c("n != 2.5", .compare("n", .ne, .number(2.5))),
            c("b = true", .compare("b", .eq, .bool(true))),
            c("b != true", .compare("b", .ne, .bool(true))),
            c("d > 2020", .compare("d", .gt, .date(ParseDate(iso: "2020-01-01T00:00:00.000Z")!))),
            c("d <= 2020", .compare("d", .lte, .date(ParseDate(iso: "2020-01-01T00:00:00.000Z")!))),
            c("p = u1", .compare("p", .eq, .pointer(className: "_User", objectId: "u1"))),
            c("p != u1", .compare("p", .ne, .pointer(className: "_User", objectId: "u1"))),
            c("f = a.jpg", .compare("f", .eq, .file(name: "a.jpg"))),
            c("arr contains y", .compare("arr", .eq, .string("y"))),
            c("arr not contains y", .compare("arr", .ne, .string("y"))),
            c("arr contains 3", .compare("arr", .eq, .number(3))),
            c("o.k > 1", .compare("o.k", .gt, .number(1))),
            c("o.t = two", .compare("o.t", .eq, .string("two"))),
            c("s in", .inList("s", [.string("alpha"), .string("delta"), .string("nope")], negated: false)),
            c("s in with null", .inList("s", [.string("alpha"), .null], negated: false)),
            c("s nin", .inList("s", [.string("alpha"), .string("delta")], negated: true)),
            c("s nin with null", .inList("s", [.string("alpha"), .null], negated: true)),
            c("n in", .inList("n", [.number(1), .number(100), .number(7)], negated: false)),
            c("n nin", .inList("n", [.number(1), .number(100)], negated: true)),
            c("p in", .inList("p", [.pointer(className: "_User", objectId: "u2"), .pointer(className: "_User", objectId: "u9")], negated: false)),
            c("arr in", .inList("arr", [.string("z"), .number(2)], negated: false)),
            c("arr nin", .inList("arr", [.string("z"), .number(2)], negated: true)),
            c("objectId in", .inList("objectId", [.string("obj0000001"), .string("obj0000004")], negated: false)),
            c("createdAt >", .compare("createdAt", .gt, .string("2023-11-14T22:13:22.000Z"))),
            c("createdAt < date", .compare("createdAt", .lt, .date(ParseDate(millisecondsSince1970: 1_700_000_002_000)))),
            c("exists s", .exists("s", true)),
            c("not exists s", .exists("s", false)),
            c("exists o.k", .exists("o.k", true)),
            c("regex", .regex("s", pattern: "^[a-d]", options: "")),
            c("regex i", .regex("s", pattern: "^b", options: "i")),
            c("regex $ no m", .regex("s", pattern: "gamma$", options: "")),
            c("regex $ m", .regex("s", pattern: "gamma$", options: "m")),
            c("regex dot s", .regex("s", pattern: "gamma.line", options: "s")),
            c("regex dot no s", .regex("s", pattern: "gamma.line", options: "")),
            c("regex \\d\\b", .regex("s", pattern: "\\bdel", options: "")),
            c("all", .containsAll("arr", [.string("x"), .string("y")])),
            c("all numbers", .containsAll("arr", [.number(1), .number(3)])),
            c("and", .and([.compare("n", .gt, .number(0)), .compare("b", .eq, .bool(true))])),
            c("or", .or([.compare("s", .eq, .string("alpha")), .compare("n", .eq, .number(100))])),
            c("nor", .nor([.compare("s", .eq, .string("alpha")), .compare("n", .gt, .number(5))])),
            c("empty or", .or([])),
            c("empty in", .inList("s", [], negated: false)),
            c("empty nin", .inList("s", [], negated: true)),
        ]
    }

    static let orders: [[SortKey]] = [
        [SortKey(path: "s", descending: false)],
        [SortKey(path: "s", descending: true)],
        [SortKey(path: "n", descending: false)],
        [SortKey(path: "n", descending: true)],
        [SortKey(path: "b", descending: false), SortKey(path: "n", descending: true)],
        [SortKey(path: "d", descending: true)],
        [SortKey(path: "p", descending: false)],
        [SortKey(path: "createdAt", descending: true)],
        [SortKey(path: "missing", descending: false), SortKey(path: "objectId", descending: true)],
    ]

    func ids(_ db: any ObjectStore, _ q: StoredQuery) throws -> [String] { try db.find(q).map(\.objectId) }

    @Test(arguments: 0..<predicates.count)
    func predicateAgrees(_ index: Int) throws {
        let (name, p) = Self.predicates[index]
        let q = StoredQuery(className: "X", predicate: p, order: [SortKey(path: "objectId", descending: false)], readers: nil)
        let expected = try ids(sqlite, q)
        if name == "nor" {
            // Mongo and parse-server's $nor keep the row where neither field exists; both compilers do.
            #expect(expected == ["obj0000001", "obj0000002", "obj0000004", "obj0000005"])
        }
        #expect(try ids(postgres, q) == expected, "\(name)")
        #expect(try postgres.count(q) == expected.count, "\(name)")
    }

    @Test(arguments: 0..<orders.count)
    func orderAgrees(_ index: Int) throws {
        let q = StoredQuery(className: "X", order: Self.orders[index], limit: 5, skip: 1, readers: nil)
        #expect(try ids(postgres, q) == (try ids(sqlite, q)), "\(Self.orders[index])")
    }
}
