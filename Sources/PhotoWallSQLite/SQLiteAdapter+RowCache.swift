import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// The rows that reads of one object by its objectId found, kept in memory (`SQLiteAdapter.rowsById`):
/// what the database holds, never an answer. Which caller may read a row is decided per read, by the
/// same rule as the SQL's (`CachedRow.isReadable`), and everything after that (field rules, rendering)
/// happens above the store as for any row.
///
/// Forgotten, all of it, after every write of this process's database, whatever it wrote and whichever
/// store or service wrote it (`SQLiteDatabase.afterEachWrite`): a row can't outlive a change made here.
/// A read that began before a write can't store what it read (`ExpiringCache`'s generation). Reads
/// inside a read snapshot (`readingOneSnapshot`: the feed's page) neither use nor fill it, since they
/// must see the snapshot's rows. Writes by another process (the CLI's `seed-demo`, which only inserts)
/// are seen when an entry ends: `rowCacheSeconds` (5 with `photowall serve`).
struct CachedRow: Sendable {
    /// Larger `doc`s are not kept (they are not the small objects that are read again and again), so the
    /// cache holds at most `capacity × maxFieldBytes` of row text.
    static let maxFieldBytes = 4096
    /// At most this many rows (emptied when full).
    static let capacity = 2048

    struct Key: Hashable, Sendable {
        var className: String
        var objectId: String
    }

    var objectId: [UInt8]
    var createdAt: ParseDate
    var updatedAt: ParseDate
    var fields: [UInt8]
    var acl: [UInt8]?
    /// `rperm` as stored: the ACL entries that may read the row; nil (SQL NULL) when everyone may.
    var readers: [String]?

    /// A copy of `view`, with its `rperm` column; nil for a row not kept (its `doc` too large, or an
    /// `rperm` that is not an array of strings, which `encodeRow` never writes).
    init?(_ view: StoredRowView, rperm: UnsafeBufferPointer<UInt8>?) {
        guard view.fieldsText.count <= Self.maxFieldBytes else { return nil }
        if let rperm {
            guard let entries = (try? JSON.parse(rperm))?.arrayValue else { return nil }
            var readers: [String] = []
            for entry in entries {
                guard let name = entry.stringValue else { return nil }
                readers.append(name)
            }
            self.readers = readers
        } else {
            readers = nil
        }
        objectId = Array(view.objectId)
        createdAt = view.createdAt
        updatedAt = view.updatedAt
        fields = Array(view.fieldsText)
        acl = view.aclText.map { Array($0) }
    }

    /// Whether a read with `perms` finds this row: `SQLiteQueryCompiler.permissionFilter(column: "rperm", perms)`
    /// in memory. Everyone reads a row without `rperm`, and the master key (nil) every row; otherwise
    /// one of `perms` must be one of the row's readers, byte for byte (`permissionsAdmit`; `*` is among
    /// them when the ACL is public-read, and every caller's `perms` hold `*`).
    func isReadable(by perms: PermissionSet) -> Bool {
        guard let readers else { return true }
        return permissionsAdmit(perms, readers)
    }

    /// `body` with the row as a `StoredRowView` of `className` (valid during the call).
    func withView(className: String, _ body: (StoredRowView) -> Void) {
        objectId.withUnsafeBufferPointer { id in
            fields.withUnsafeBufferPointer { text in
                guard let acl else {
                    return body(StoredRowView(className: className, objectId: id, createdAt: createdAt, updatedAt: updatedAt,
                                              fieldsText: text, aclText: nil))
                }
                acl.withUnsafeBufferPointer { aclText in
                    body(StoredRowView(className: className, objectId: id, createdAt: createdAt, updatedAt: updatedAt,
                                       fieldsText: text, aclText: aclText))
                }
            }
        }
    }
}

extension SQLiteAdapter {
    /// The objectId a query asks for when it names one object by it and nothing else (a `GET` of one
    /// object by a caller no read scope applies to); nil for any other query.
    static func objectIdAlone(_ query: StoredQuery) -> String? {
        guard query.skip == 0, query.limit != 0, case .compare("objectId", .eq, .string(let id)) = query.predicate else { return nil }
        return id
    }
}

extension ExpiringCache where Key == CachedRow.Key, Value == CachedRow {
    /// The row kept for `key`, only when its objectId has `key.objectId`'s very bytes. Keys compare as
    /// Swift strings (canonical equivalence); SQLite's `objectId = ?` compares bytes, and so does this.
    func exactLookup(_ key: Key) -> CachedRow? {
        guard let row = lookup(key), row.objectId.elementsEqual(key.objectId.utf8) else { return nil }
        return row
    }
}
