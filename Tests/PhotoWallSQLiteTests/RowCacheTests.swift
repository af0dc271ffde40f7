import Foundation
import Testing
import PhotoWallCore
import PhotoWallStorage
import PhotoWallSQL
@testable import PhotoWallSQLite
import PhotoWallTesting

/// `SQLiteAdapter`'s rows by objectId (`CachedRow`), on a real database file: kept, forgotten after every
/// write of the process whoever wrote it, bypassed inside a read snapshot, and checked against the
/// readers of every read exactly as the SQL checks them.
@Suite struct RowCacheTests {
    let dir: String
    let path: String
    /// Rows read by objectId are kept for a minute (so only invalidation can end them here).
    let cached: SQLiteAdapter
    /// Another adapter on the same file, keeping nothing: another process's writes and the SQL's answers.
    let other: SQLiteAdapter

    init() throws {
        dir = NSTemporaryDirectory() + "pw-rowcache-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        path = dir + "/db.sqlite"
        cached = try SQLiteAdapter(path: path, rowCacheSeconds: 60)
        other = try SQLiteAdapter(path: path)
        try cached.ensureClass("Note", fields: ["text": .string], indexedFields: [], uniqueFields: [])
        try cached.ensureClass("Other", fields: [:], indexedFields: [], uniqueFields: [])
        try other.ensureClass("Note", fields: ["text": .string], indexedFields: [], uniqueFields: [])
    }

    func note(_ id: String, _ text: String, acl: ACL? = nil) -> StoredObject {
        let now = ParseDate.now()
        return StoredObject(className: "Note", objectId: id, createdAt: now, updatedAt: now, fields: ["text": .string(text)], acl: acl)
    }

    /// The `text` field of the row `db` finds for `id` with `readers` (as `GET` asks: objectId alone),
    /// or nil when it finds none.
    func text(_ db: SQLiteAdapter, _ id: String, readers: PermissionSet = nil) throws -> String? {
        var found: [String] = []
        _ = try db.forEachStoredRow(StoredQuery(className: "Note", predicate: .compare("objectId", .eq, .string(id)), limit: 1,
                                                readers: readers)) { row in
            found.append((try? JSON.parse(row.fieldsText))?["text"]?.stringValue ?? "?")
        }
        #expect(found.count <= 1)
        return found.first
    }

    @Test func aRowIsKeptUntilAnyWriteOfTheProcess() throws {
        try cached.insert(note("n1", "one"))
        #expect(try text(cached, "n1") == "one")
        // Changed by another process: this one keeps serving what it read (so the read above was kept).
        _ = try other.update(className: "Note", objectId: "n1", writers: nil) { $0.fields["text"] = .string("two") }
        #expect(try text(cached, "n1") == "one")
        #expect(try text(other, "n1") == "two")
        // Any write of this process, to any class, forgets every kept row.
        try cached.insert(StoredObject(className: "Other", objectId: "o1", createdAt: .now(), updatedAt: .now(), fields: [:], acl: nil))
        #expect(try text(cached, "n1") == "two")
        // Its own writes of the row, of course.
        _ = try cached.update(className: "Note", objectId: "n1", writers: nil) { $0.fields["text"] = .string("three") }
        #expect(try text(cached, "n1") == "three")
        _ = try cached.update(className: "Note", objectId: "n1", writers: nil) { $0.acl = ACL(entries: ["u1": .init(read: true, write: true)]) }
        #expect(try text(cached, "n1", readers: ["*", "u2"]) == nil, "a tightened ACL holds at the very next read")
        #expect(try text(cached, "n1", readers: ["*", "u1"]) == "three")
        try cached.delete(className: "Note", objectId: "n1", writers: nil)
        #expect(try text(cached, "n1") == nil)
        // A predicate delete, and a write that fails, forget too.
        try cached.insert(note("n2", "four"))
        #expect(try text(cached, "n2") == "four")
        _ = try other.update(className: "Note", objectId: "n2", writers: nil) { $0.fields["text"] = .string("five") }
        #expect(throws: ParseError.self) { try cached.insert(note("n2", "dup")) }
        #expect(try text(cached, "n2") == "five")
        _ = try cached.deleteAll(className: "Note", predicate: .compare("objectId", .eq, .string("n2")))
        #expect(try text(cached, "n2") == nil)
    }

    @Test func aReadInsideASnapshotSeesTheSnapshotNotTheCache() throws {
        try cached.insert(note("s1", "one"))
        #expect(try text(cached, "s1") == "one")
        _ = try other.update(className: "Note", objectId: "s1", writers: nil) { $0.fields["text"] = .string("two") }
        let inSnapshot = try cached.readingOneSnapshot { () throws(ParseError) -> String? in try? text(cached, "s1") }
        #expect(inSnapshot == "two", "the snapshot reads the database")
        #expect(try text(cached, "s1") == "one", "and neither used nor replaced the kept row")
    }

    /// Every ACL shape against every kind of reader (a look-alike entry among them): the kept row is served to exactly those the SQL
    /// serves it to (`CachedRow.isReadable` against `SQLiteQueryCompiler.permissionFilter`).
    @Test func keptRowsAreReadableByExactlyThoseTheSQLAdmits() throws {
        let acls: [ACL?] = [nil, ACL(entries: [:]), ACL(entries: ["*": .init(read: true, write: false)]),
                            ACL(entries: ["u1": .init(read: true, write: true)]), ACL(entries: ["u1": .init(read: false, write: true)]),
                            ACL(entries: ["role:admin": .init(read: true, write: false)]),
                            ACL(entries: ["u1": .init(read: true, write: false), "u2": .init(read: true, write: false)]),
                            ACL(entries: ["x\"*": .init(read: true, write: false)]),
                            // U+212A KELVIN SIGN: Swift's == calls it `K`, SQLite's IN compares bytes.
                            ACL(entries: ["\u{212A}ab": .init(read: true, write: false)])]
        let readers: [PermissionSet] = [nil, [], ["*"], ["*", "u1"], ["*", "u2"], ["*", "u3", "role:admin"], ["u1"], ["*", "x\"*"],
                                        ["*", "Kab"]]
        var checked = 0
        for (i, acl) in acls.enumerated() {
            let id = "a\(i)"
            try cached.insert(note(id, "t\(i)", acl: acl))
            #expect(try text(cached, id) == "t\(i)", "the master key's read keeps the row")
            for r in readers {
                let sql = try text(other, id, readers: r)
                #expect(try text(cached, id, readers: r) == sql, "ACL \(String(describing: acl?.entries)), readers \(String(describing: r))")
                checked += 1
            }
            // Still kept: a write by the other adapter is not seen, so the answers above came from memory.
            _ = try other.update(className: "Note", objectId: id, writers: nil) { $0.fields["text"] = .string("changed") }
            #expect(try text(cached, id) == "t\(i)")
        }
        #expect(checked == acls.count * readers.count)
    }

    /// Swift's `==` on strings is canonical equivalence; SQLite's `objectId = ?` compares bytes. A kept row
    /// answers only for its own objectId's bytes.
    @Test func aKeptRowAnswersOnlyForItsOwnBytes() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        try cached.insert(note(composed, "composed"))
        #expect(try text(cached, composed) == "composed")
        #expect(try text(other, decomposed) == nil)
        #expect(try text(cached, decomposed) == nil, "not the kept row of the other objectId")
        try cached.insert(note(decomposed, "decomposed"))
        #expect(try text(cached, decomposed) == "decomposed")
        #expect(try text(cached, decomposed) == "decomposed")
        #expect(try text(cached, composed) == "composed")
    }

    @Test func offByDefault() throws {
        try other.insert(note("d1", "one"))
        #expect(try text(other, "d1") == "one")
        _ = try cached.update(className: "Note", objectId: "d1", writers: nil) { $0.fields["text"] = .string("two") }
        #expect(try text(other, "d1") == "two")
    }
}
