import Foundation
import Testing
import PhotoWallCore
import PhotoWallStorage
import PhotoWallTesting

/// The `ObjectStore` contract on every adapter: schema checks and their rollback, unique indexes,
/// ACL filtering, atomic updates, housekeeping deletes and query errors.
@Suite struct ObjectStoreContractTests {
    @Test(arguments: Backend.allCases)
    func schemaMismatchIs111AndRollsBack(_ backend: Backend) throws {
        let (db, reopen) = try backend.open()
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
        #expect(try reopen().schema(of: "T")?.fields["b"] == nil)
        #expect(try db.count(StoredQuery(className: "T", readers: nil)) == 1)
        try db.insert(object("T", ["b": "now a string"]))
        #expect(try db.schema(of: "T")?.fields["b"] == .string)
        #expect(try reopen().schema(of: "T")?.fields["b"] == .string)
    }

    @Test(arguments: Backend.allCases)
    func mismatchInsideUpdateRollsBackTheChange(_ backend: Backend) throws {
        let db = try backend.open().db
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

    @Test(arguments: Backend.allCases)
    func uniqueIndexIs137(_ backend: Backend) throws {
        let db = try backend.open().db
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
        #expect(try db.count(StoredQuery(className: "U", readers: nil)) == 1)
        // Missing and null values are not duplicates of each other.
        try db.insert(object("U", ["name": "c"]))
        try db.insert(object("U", ["name": "d", "authData": .null]))
        #expect(try db.count(StoredQuery(className: "U", readers: nil)) == 3)
    }

    @Test(arguments: Backend.allCases)
    func permissionsFilterReadsAndWrites(_ backend: Backend) throws {
        let db = try backend.open().db
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
        // A caller with many roles (more than the filter texts an adapter may make ahead), and one
        // without `*`: still exactly the rows they may read.
        let many = ["*", "bob"] + (1...38).map { "role:R\($0)" } + ["role:Mods"]
        #expect(try db.find(StoredQuery(className: "P", order: order, readers: many)).map(\.objectId) == ["pubObject1", "roleObject"])
        #expect(try db.find(StoredQuery(className: "P", order: order, readers: Array(many.dropLast()))).map(\.objectId) == ["pubObject1"])
        #expect(try db.find(StoredQuery(className: "P", order: order, readers: ["bob", "role:Mods"])).map(\.objectId) == ["pubObject1", "roleObject"])
        #expect(throws: ParseError.self) { try db.delete(className: "P", objectId: "privObject", writers: ["*", "bob"]) }
        #expect(throws: ParseError.self) {
            _ = try db.update(className: "P", objectId: "roleObject", writers: ["*", "role:Mods"]) { (_: inout StoredObject) throws(ParseError) in }
        }
        try db.delete(className: "P", objectId: "privObject", writers: ["*", "alice"])
        #expect(try db.count(StoredQuery(className: "P", readers: nil)) == 2)
        // ACL round trip.
        #expect(try db.find(StoredQuery(className: "P", predicate: .compare("objectId", .eq, .string("roleObject")), readers: nil)).first?.acl == role.acl)
    }

    @Test(arguments: Backend.allCases)
    func updateIsAtomicUnderConcurrency(_ backend: Backend) async throws {
        let db = try backend.open().db
        try db.insert(object("C", ["n": 0], id: "counter001"))
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

    @Test(arguments: Backend.allCases)
    func concurrentFirstUseOfAFieldAgreesOnOneType(_ backend: Backend) async throws {
        let db = try backend.open().db
        try db.insert(object("R", ["x": "seed"]))
        let results = await withTaskGroup(of: Bool.self) { g in
            for i in 0..<8 {
                g.addTask {
                    let value: JSON = i % 2 == 0 ? "text" : 7
                    return (try? db.insert(object("R", ["race": value]))) != nil
                }
            }
            return await g.reduce(into: [Bool]()) { $0.append($1) }
        }
        let type = try #require(try db.schema(of: "R")?.fields["race"])
        let stored = try db.count(StoredQuery(className: "R", predicate: .exists("race", true), readers: nil))
        #expect(stored == results.filter { $0 }.count)
        #expect(stored == 4, "one type won (\(type)), its four inserts landed")
    }

    @Test(arguments: Backend.allCases)
    func deleteAllAndBadRegex(_ backend: Backend) throws {
        let db = try backend.open().db
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

    /// `find(_:members:)` answers as `find` does, cut to the named fields: the same objects in the same
    /// order, their whole ACLs, the `readers` filter applied (streamed from the rows' text on SQLite,
    /// read whole and cut on PostgreSQL).
    @Test(arguments: Backend.allCases)
    func findWithMembersIsFindCutToThem(_ backend: Backend) throws {
        let db = try backend.open().db
        let mine = ACL(entries: ["u1": ACL.Access(read: true, write: true)])
        try db.insert(object("P", ["name": "a", "fbId": "1", "authData": ["facebook": ["id": "1", "access_token": "secret"]], "n": 1], id: "p1"))
        try db.insert(object("P", ["name": "b", "n": 2, "o": ["x": [1, 2]]], acl: mine, id: "p2"))
        try db.insert(object("P", ["fbId": "3", "n": 3], id: "p3"))
        let members: Set<String> = ["name", "fbId", "o"]
        for readers in [nil, ["*"], ["*", "u1"]] as [PermissionSet] {
            let q = StoredQuery(className: "P", order: [SortKey(path: "n", descending: true)], readers: readers)
            let whole = try db.find(q)
            let cut = try db.find(q, members: members)
            #expect(cut.map(\.objectId) == whole.map(\.objectId), "\(String(describing: readers))")
            #expect(cut.map(\.acl) == whole.map(\.acl))
            #expect(cut.map(\.fields) == whole.map { $0.fields.filter { members.contains($0.key) } })
            #expect(cut.map(\.createdAt) == whole.map(\.createdAt))
        }
        #expect(try db.find(StoredQuery(className: "P", readers: ["*"]), members: ["name"]).map(\.objectId).sorted() == ["p1", "p3"])
    }

    /// `ACL(storedText:)` reads what `ACL(json: JSON.parse(text))` reads, and refuses what it refuses:
    /// stored texts as the adapters write them, escaped entries and unusual spacing (the JSON path),
    /// and malformed ones.
    @Test func aclFromStoredTextIsTheJSONReading() throws {
        let texts = [#"{}"#, #"{"*":{"read":true}}"#, #"{"*":{"read":true},"u1":{"read":true,"write":true}}"#,
                     #"{"role:Mods":{"write":true},"u2":{"read":false,"write":true}}"#, #"{"u1":{}}"#,
                     #"{ "u1" : { "read" : true } }"#, #"{"u\u0031":{"read":true}}"#, #"{"u1":{"read":true,"read":false}}"#]
        for text in texts {
            let fast = try Array(text.utf8).withUnsafeBufferPointer { u throws(ParseError) in try ACL(storedText: u) }
            #expect(fast == (try ACL(json: JSON.parse(text))), "\(text)")
        }
        #expect(try Array(#"{"u\u0031":{"read":true}}"#.utf8).withUnsafeBufferPointer { u throws(ParseError) in try ACL(storedText: u) }
            .entries == ["u1": ACL.Access(read: true, write: false)])
        for bad in [#"{"u1":{"read":1}}"#, #"{"u1":{"delete":true}}"#, #"{"":{"read":true}}"#, #"{"u1":true}"#, #"[]"#, #"{"u1":{"read":tru}}"#, #"{"#] {
            #expect(throws: ParseError.self, "\(bad)") {
                try Array(bad.utf8).withUnsafeBufferPointer { u throws(ParseError) in try ACL(storedText: u) }
            }
        }
    }
}
