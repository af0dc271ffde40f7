import Foundation
import Testing
import PhotoWallCore
import PhotoWallPostgres
import PhotoWallStorage
import PhotoWallTesting

/// The PostgreSQL adapter on a fresh database per test (mirrors `SQLiteAdapterTests`).
@Suite(.enabled(if: TestPostgres.adminURL != nil, TestPostgres.skipNote))
struct PostgresAdapterTests {
    let url: String
    let db: PostgresAdapter

    init() throws {
        url = try TestPostgres.freshDatabase()
        db = try PostgresAdapter(url: url, maxConnections: 8)
    }

    func object(_ cls: String, _ fields: [String: JSON], acl: ACL? = nil, id: String = ParseIdentifier.alphanumeric()) -> StoredObject {
        let now = ParseDate.now()
        return StoredObject(className: cls, objectId: id, createdAt: now, updatedAt: now, fields: fields, acl: acl)
    }

    @Test func migrationsAreRecordedAndIdempotent() throws {
        let again = try PostgresAdapter(url: url, maxConnections: 1)
        #expect(try again.schema(of: "_User") == nil)
        let conn = try PostgresConnection(conninfo: url)
        #expect(try conn.query("SELECT max(version) FROM \"_MIGRATIONS\"").first?[0] == "8")
    }

    @Test func schemaMismatchIs111AndRollsBack() throws {
        try db.insert(object("T", ["a": "x"]))
        #expect(try db.schema(of: "T")?.fields["a"] == .string)
        do {
            try db.insert(object("T", ["a": 1, "b": true]))
            Issue.record("expected a schema mismatch")
        } catch {
            #expect(error.code == .incorrectType)
            #expect(error.message == "schema mismatch for T.a; expected String but got Number")
        }
        // "b" was added neither in the cache nor in the database (a second process sees the same).
        #expect(try db.schema(of: "T")?.fields["b"] == nil)
        #expect(try PostgresAdapter(url: url, maxConnections: 1).schema(of: "T")?.fields["b"] == nil)
        #expect(try db.count(StoredQuery(className: "T", readers: nil)) == 1)
        try db.insert(object("T", ["b": "now a string"]))
        #expect(try db.schema(of: "T")?.fields["b"] == .string)
        #expect(try PostgresAdapter(url: url, maxConnections: 1).schema(of: "T")?.fields["b"] == .string)
    }

    @Test func mismatchInsideUpdateRollsBackTheChange() throws {
        try db.insert(object("M", ["n": 1], id: "mObject001"))
        do {
            _ = try db.update(className: "M", objectId: "mObject001", writers: nil) { (o: inout StoredObject) throws(ParseError) in
                o.fields["n"] = "text"
                o.fields["extra"] = 5
            }
            Issue.record("expected a schema mismatch")
        } catch {
            #expect(error.code == .incorrectType)
        }
        let o = try #require(try db.find(StoredQuery(className: "M", readers: nil)).first)
        #expect(o.fields["n"] == 1)
        #expect(o.fields["extra"] == nil)
        #expect(try db.schema(of: "M")?.fields["extra"] == nil)
    }

    @Test func uniqueIndexIs137() throws {
        try db.ensureClass("U", fields: [:], indexedFields: [], uniqueFields: ["name", "authData.facebook.id"])
        try db.insert(object("U", ["name": "a", "authData": ["facebook": ["id": "10001"]]]))
        for dup: [String: JSON] in [["name": "a"], ["name": "b", "authData": ["facebook": ["id": "10001"]]]] {
            do {
                try db.insert(object("U", dup))
                Issue.record("expected a duplicate error for \(dup)")
            } catch {
                #expect(error.code == .duplicateValue)
                #expect(error.message == "A duplicate value for a field with unique values was provided")
            }
        }
        // Missing and null values are not duplicates of each other.
        try db.insert(object("U", ["name": "c"]))
        try db.insert(object("U", ["name": "d", "authData": .null]))
        #expect(try db.count(StoredQuery(className: "U", readers: nil)) == 3)
    }

    @Test func permissionsFilterReadsAndWrites() throws {
        let priv = object("P", ["n": 1], acl: .privateTo("alice"), id: "privObject")
        let pub = object("P", ["n": 2], acl: nil, id: "pubObject1")
        let role = object("P", ["n": 3], acl: ACL(entries: ["role:Mods": .init(read: true, write: false)]), id: "roleObject")
        try db.insert(priv)
        try db.insert(pub)
        try db.insert(role)
        let order = [SortKey(path: "n", descending: false)]
        #expect(try db.find(StoredQuery(className: "P", order: order, readers: ["*", "bob"])).map(\.objectId) == ["pubObject1"])
        #expect(try db.find(StoredQuery(className: "P", order: order, readers: ["*", "alice"])).map(\.objectId) == ["privObject", "pubObject1"])
        #expect(try db.find(StoredQuery(className: "P", order: order, readers: ["*", "bob", "role:Mods"])).map(\.objectId) == ["pubObject1", "roleObject"])
        #expect(try db.count(StoredQuery(className: "P", readers: ["*", "alice"])) == 2)
        #expect(try db.find(StoredQuery(className: "P", readers: nil)).count == 3)
        #expect(throws: ParseError.self) { try db.delete(className: "P", objectId: "privObject", writers: ["*", "bob"]) }
        #expect(throws: ParseError.self) {
            _ = try db.update(className: "P", objectId: "roleObject", writers: ["*", "role:Mods"]) { (_: inout StoredObject) throws(ParseError) in }
        }
        try db.delete(className: "P", objectId: "privObject", writers: ["*", "alice"])
        #expect(try db.count(StoredQuery(className: "P", readers: nil)) == 2)
        // ACL round trip.
        #expect(try db.find(StoredQuery(className: "P", predicate: .compare("objectId", .eq, .string("roleObject")), readers: nil)).first?.acl == role.acl)
    }

    @Test func updateIsAtomicUnderConcurrency() async throws {
        try db.insert(object("C", ["n": 0], id: "counter001"))
        let db = self.db
        await withTaskGroup(of: Void.self) { g in
            for _ in 0..<8 {
                g.addTask {
                    for _ in 0..<50 {
                        _ = try? db.update(className: "C", objectId: "counter001", writers: nil) { (o: inout StoredObject) throws(ParseError) in
                            o.fields["n"] = .number((o.fields["n"]?.doubleValue ?? 0) + 1)
                        }
                    }
                }
            }
        }
        let o = try #require(try db.find(StoredQuery(className: "C", readers: nil)).first)
        #expect(o.fields["n"] == 400)
    }

    @Test func concurrentFirstUseOfAFieldAgreesOnOneType() async throws {
        try db.insert(object("R", ["x": "seed"]))
        let db = self.db
        let results = await withTaskGroup(of: Bool.self) { g in
            for i in 0..<8 {
                g.addTask {
                    let value: JSON = i % 2 == 0 ? "text" : 7
                    return (try? db.insert(self.object("R", ["race": value]))) != nil
                }
            }
            return await g.reduce(into: [Bool]()) { $0.append($1) }
        }
        let type = try #require(try db.schema(of: "R")?.fields["race"])
        let stored = try db.count(StoredQuery(className: "R", predicate: .exists("race", true), readers: nil))
        #expect(stored == results.filter { $0 }.count)
        #expect(stored == 4, "one type won (\(type)), its four inserts landed")
    }

    @Test func explainUsesTheExpressionIndexForTheWallQuery() throws {
        try db.ensureClass("WallImage", fields: ["userFBId": .string, "user": .pointer("_User")],
                           indexedFields: ["userFBId", "user.objectId"], uniqueFields: [])
        let conn = try PostgresConnection(conninfo: url)
        // 4,000 rows from 400 authors, then fresh statistics, so the planner has a real choice.
        try conn.execute("""
            INSERT INTO "c_WallImage"("objectId", "createdAt", "updatedAt", doc)
            SELECT 'o' || g, 1600000000000 + g, 1600000000000 + g,
                   jsonb_build_object('userFBId', (g % 400)::text, 'user', jsonb_build_object('__type', 'Pointer', 'className', '_User', 'objectId', 'u' || (g % 400)))
            FROM generate_series(1, 4000) g;
            ANALYZE "c_WallImage";
            """)
        let wall = StoredQuery(className: "WallImage",
                               predicate: .inList("userFBId", [.string("1"), .string("2"), .string("3")], negated: false),
                               order: [SortKey(path: "createdAt", descending: true)], limit: 20, readers: ["*", "someone"])
        let plan = try db.explain(wall)
        #expect(plan.contains("i_WallImage_userFBId"), "\(plan)")
        #expect(try db.find(wall).count == 20)
        #expect(try db.find(wall).map(\.createdAt.millisecondsSince1970) == (try db.find(wall).map(\.createdAt.millisecondsSince1970)).sorted(by: >))
        let byPointer = StoredQuery(className: "WallImage", predicate: .compare("user", .eq, .pointer(className: "_User", objectId: "u7")),
                                    order: [SortKey(path: "createdAt", descending: true)], limit: 5, readers: nil)
        #expect(try db.explain(byPointer).contains("i_WallImage_user_objectId"))
        #expect(try db.count(byPointer) == 10)
    }

    @Test func filesMetadata() throws {
        let r = FileRecord(name: "abc_x.jpg", contentType: "image/jpeg", byteCount: 3, sha256: "00", createdAt: ParseDate(millisecondsSince1970: 5))
        try db.insertFile(r)
        #expect(try db.file(named: "abc_x.jpg") == r)
        do {
            try db.insertFile(r)
            Issue.record("expected a duplicate")
        } catch {
            #expect(error.code == .duplicateValue)
        }
        #expect(try db.deleteFile(named: "abc_x.jpg"))
        #expect(try db.file(named: "abc_x.jpg") == nil)
        // The client's own name and a declared type its bytes contradicted are kept.
        let named = FileRecord(name: "def_y.jpg", contentType: "image/gif", byteCount: 1, sha256: "01", createdAt: ParseDate(millisecondsSince1970: 6),
                               originalName: "y (1) 灯泡.jpg", declaredType: "image/jpeg", owner: "u1", unclaimed: true)
        try db.insertFile(named)
        #expect(try db.file(named: "def_y.jpg") == named)
        #expect(try !db.deleteFile(named: "abc_x.jpg"))
    }

    @Test func feedThresholdGrowsWithTheSquareRootOfTheImages() throws {
        #expect(PostgresAdapter.feedThreshold(images: 0) == 50)
        #expect(PostgresAdapter.feedThreshold(images: 1_000_000) == 212)
        #expect(PostgresAdapter.feedThreshold(images: 10_000_000) == 670)
        // A new database has no WallImage statistics yet: the floor.
        #expect(db.suggestedFeedThreshold() == 50)
    }

    @Test func uploadRecordsAndTheirLease() throws {
        try UploadRecordContract.run(db)
    }

    @Test func friendGraph() throws {
        #expect(try db.friendsSyncedAt("1") == nil)
        try db.replaceFriends(of: "1", with: ["2", "3", "3", "1"], syncedAt: ParseDate(millisecondsSince1970: 10))
        #expect(try db.friends(of: "1").sorted() == ["2", "3"])
        #expect(try db.isFriend("2", of: "1"))
        #expect(try !db.isFriend("1", of: "2"))
        try db.replaceFriends(of: "1", with: ["4"], syncedAt: ParseDate(millisecondsSince1970: 20))
        #expect(try db.friends(of: "1") == ["4"])
        #expect(try db.friendsSyncedAt("1") == ParseDate(millisecondsSince1970: 20))
    }

    @Test func deleteAllAndBadRegex() throws {
        for i in 0..<5 { try db.insert(object("D", ["n": .number(Double(i)), "s": .string("v\(i)")])) }
        #expect(try db.deleteAll(className: "D", predicate: .compare("n", .lt, .number(2))) == 2)
        #expect(try db.count(StoredQuery(className: "D", readers: nil)) == 3)
        do {
            _ = try db.find(StoredQuery(className: "D", predicate: .regex("s", pattern: "(", options: ""), readers: nil))
            Issue.record("expected an invalid regex error")
        } catch {
            #expect(error.code == .invalidQuery)
        }
        #expect(try db.count(StoredQuery(className: "D", predicate: .regex("s", pattern: "\\bV[34]\\b", options: "i"), readers: nil)) == 2)
    }
}

/// Two adapters on one database, as two PhotoWall processes sharing PostgreSQL.
@Suite(.enabled(if: TestPostgres.adminURL != nil, TestPostgres.skipNote))
struct PostgresSharedDatabaseTests {
    @Test func aFieldAddedByAnotherProcessComparesByItsType() throws {
        let url = try TestPostgres.freshDatabase()
        let a = try PostgresAdapter(url: url, maxConnections: 2)
        let b = try PostgresAdapter(url: url, maxConnections: 2)
        let now = ParseDate.now()
        try a.insert(StoredObject(className: "S", objectId: "sObject001", createdAt: now, updatedAt: now, fields: ["x": 1], acl: nil))
        #expect(try b.schema(of: "S")?.fields["x"] == .number)  // b learns the class on first use
        try a.insert(StoredObject(className: "S", objectId: "sObject002", createdAt: now, updatedAt: now,
                                  fields: ["when": ["__type": "Date", "iso": "2024-05-01T00:00:00.000Z"]], acl: nil))
        // b's cache lacks "when"; the query still compares it as a Date.
        let q = StoredQuery(className: "S", predicate: .compare("when", .gt, .date(ParseDate(iso: "2024-01-01T00:00:00.000Z")!)), readers: nil)
        #expect(try b.find(q).map(\.objectId) == ["sObject002"])
        // And b's write with another type is refused against a's committed schema.
        do {
            try b.insert(StoredObject(className: "S", objectId: "sObject003", createdAt: now, updatedAt: now, fields: ["when": "soon"], acl: nil))
            Issue.record("expected a schema mismatch")
        } catch {
            #expect(error.code == .incorrectType)
        }
    }

    @Test func nulCharactersAreAClientError() throws {
        let db = try PostgresAdapter(url: try TestPostgres.freshDatabase(), maxConnections: 1)
        let now = ParseDate.now()
        do {
            try db.insert(StoredObject(className: "N", objectId: "nObject001", createdAt: now, updatedAt: now, fields: ["s": "a\u{0}b"], acl: nil))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidJSON)
        }
    }
}
