#if canImport(Glibc)
import Glibc
#endif
import PhotoWallCore
import PhotoWallStorage

/// Reads answered as JSON text, rendered straight into the response's bytes: `GET` of one object and
/// queries. Where `wireObject`'s rules reduce to the ones every class has (`rendersStoredText`), each
/// stored row is rendered once from the text the database holds, without decoding it into values and
/// encoding them again; otherwise objects go through `render` (`wireObject`) and `JSON.write`.
extension ObjectService {
    /// `get` as JSON text (the same object, ACL, read scope and field rules).
    /// - Throws: what `get` throws.
    public func getRendered(className: String, objectId: String, options: FindOptions = FindOptions(),
                            auth: AuthContext) throws(ParseError) -> [UInt8] {
        let query = try getQuery(className: className, objectId: objectId, options: options, auth: auth)
        if rendersStoredText(className: className, options: options, auth: auth) {
            var out = ByteWriter(capacity: 2048)
            if let n = try writeStoredRows(query, into: &out) {
                guard n == 1 else { throw ParseError.objectNotFound() }
                return out.bytes
            }
        }
        guard let object = try store.find(query).first else { throw ParseError.objectNotFound() }
        return JSON.object(try render([object], options: options, auth: auth)[0]).serialized
    }

    /// `find` as JSON text: `{"count":N,"results":[…]}` (`count` when asked).
    /// - Throws: what `find` throws.
    public func findRendered(className: String, options: FindOptions, auth: AuthContext,
                             extraPredicate: Predicate? = nil) throws(ParseError) -> [UInt8] {
        let (query, limit) = try findQuery(className: className, options: options, auth: auth, extraPredicate: extraPredicate)
        // About 1 KiB per object (a wall photo with its file URLs is ~780 B), so a full page is written
        // without the buffer regrowing (each regrowth copies all written so far).
        var out = ByteWriter(capacity: 1024 * max(1, min(limit, 1000)))
        out.append("{")
        if options.count {
            out.append(#""count":"#)
            out.append(Array(String(try store.count(query)).utf8))
            out.append(UInt8(ascii: ","))
        }
        out.append(#""results":["#)
        if limit > 0 {
            let rendered = rendersStoredText(className: className, options: options, auth: auth) ? try writeStoredRows(query, into: &out) : nil
            if rendered == nil {
                var objects: [UInt8] = []
                for (i, object) in try render(try store.find(query), options: options, auth: auth).enumerated() {
                    if i > 0 { objects.append(UInt8(ascii: ",")) }
                    JSON.object(object).write(into: &objects)
                }
                out.append(objects)
            }
        }
        out.append("]}")
        return out.bytes
    }

    /// Whether `wireObject` reduces, for these options and this caller, to the rules every class has
    /// (no `_` column; Files get their URL; the extension's `render`): no field rule applies
    /// (`fieldRulesApply`, the test `wireObject` itself takes) and there is no `include`, `keys` or
    /// `excludeKeys`.
    func rendersStoredText(className: String, options: FindOptions, auth: AuthContext) -> Bool {
        options.include.isEmpty && options.keys == nil && options.excludeKeys.isEmpty
            && !fieldRulesApply(className: className, auth: auth)
    }

    /// Writes the objects of `query`, comma-separated, as `wireObject` renders them when
    /// `rendersStoredText` holds.
    /// - Returns: how many; nil when the store hands out no stored text (nothing was written).
    /// - Throws: 1 for a stored row that is not a JSON object (as decoding it would).
    func writeStoredRows(_ query: StoredQuery, into out: inout ByteWriter) throws(ParseError) -> Int? {
        var count = 0, malformed = false
        // Whether the extension's `render` may change the class's objects: asked once for all the rows.
        let plainFiles = !(installed?.renders(className: query.className) ?? false)
        // The file URLs' prefix, read once and lent to every row as a pointer: passing the array itself
        // retained and released it per File, and that array is the configuration's, shared by every
        // worker thread, so each retain fought over one cache line (5% of a 100-object query's CPU).
        let supported = try coding.config.fileURLJSONPrefix().withUnsafeBufferPointer { (fileURLPrefix) throws(ParseError) -> Bool in
            try store.forEachStoredRow(query) { row in
                guard !malformed else { return }
                if count > 0 { out.append(UInt8(ascii: ",")) }
                malformed = !writeStoredRow(row, plainFiles: plainFiles, into: &out, fileURLPrefix: fileURLPrefix)
                count += 1
            }
        }
        if malformed { throw ParseError(.internalServerError, "Internal server error.") }
        return supported ? count : nil
    }

    /// One stored row as `wireObject` renders it when `rendersStoredText` holds. Each stored value's
    /// bytes are copied as they are, except `_` columns (left out) and values holding a File: those
    /// are decoded, given their URL (`ValueCoding.toWire`) and passed together through the
    /// extension's `render` (the only fields it is given here). For a class whose objects `render`
    /// leaves alone (`plainFiles`: `renders(className:)` false), a File stored plain gets its URL written
    /// next to its stored bytes, and any other value holding a File is decoded where it is written: one
    /// pass. Keys come out in the stored order (sorted, as `JSON.serialized` writes them) with `ACL`,
    /// `createdAt`, `objectId` and `updatedAt` merged in, so the bytes are the ones `wireObject` +
    /// `JSON.serialized` give.
    /// `fileURLPrefix` is `ServerConfig.fileURLJSONPrefix()`'s bytes (callers read it once for all rows).
    /// - Returns: false when the row's fields are not a JSON object (nothing of it is left in `out`).
    func writeStoredRow(_ row: StoredRowView, plainFiles: Bool, into out: inout ByteWriter, fileURLPrefix: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = out.count
        // Other values holding a File, decoded and rendered together before writing (only when the row
        // has any and `render` may change them; otherwise each is decoded where it is written, below).
        var decoded: [String: JSON] = [:]
        if !plainFiles, Self.contains(row.fieldsText, #""File""#) {
            let whole = JSON.forEachMember(ofObjectText: row.fieldsText) { key, value in
                guard key.first != UInt8(ascii: "_"), value.first == UInt8(ascii: "{") || value.first == UInt8(ascii: "["),
                      Self.contains(value, #""File""#), let v = try? JSON.parse(value) else { return }
                decoded[Self.keyString(key)] = coding.toWire(v)
            }
            guard whole else { return false }
            if !decoded.isEmpty { installed?.render(&decoded, className: row.className) }
        }
        // The four fields every object has, merged in sorted order (`writeSystemFields`).
        var nextSystem = 0
        out.append(UInt8(ascii: "{"))
        let whole = JSON.forEachMember(ofObjectText: row.fieldsText) { key, value in
            guard key.first != UInt8(ascii: "_"), !Self.isSystemField(key) else { return }
            if nextSystem < 4 { Self.writeSystemFields(of: row, upTo: key, next: &nextSystem, into: &out, start: start) }
            if plainFiles, let name = StoredRowView.storedFileName(value) {
                if out.count != start + 1 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\""))
                out.append(key)
                out.append(#"":{"__type":"File","name":""#)
                out.append(name)
                out.append(#"","url":"#)
                ServerConfig.writeFileURL(name: name, prefix: fileURLPrefix, into: &out)
                out.append(UInt8(ascii: "}"))
                return
            }
            if plainFiles, value.first == UInt8(ascii: "{") || value.first == UInt8(ascii: "["), Self.contains(value, #""File""#),
               let v = try? JSON.parse(value) {
                // Holds a File not stored plain (nested, or with more keys): its URL needs the decoded value.
                Self.writeMember(Self.keyString(key), coding.toWire(v), into: &out, first: out.count == start + 1)
                return
            }
            if !decoded.isEmpty, value.first == UInt8(ascii: "{") || value.first == UInt8(ascii: "["), Self.contains(value, #""File""#) {
                guard let v = decoded.removeValue(forKey: Self.keyString(key)) else { return }  // render removed it
                Self.writeMember(Self.keyString(key), v, into: &out, first: out.count == start + 1)
                return
            }
            if out.count != start + 1 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(key)
            out.append("\":")
            out.append(value)
        }
        guard whole else {
            out.removeSuffix(from: start)
            return false
        }
        Self.writeSystemFields(of: row, upTo: nil, next: &nextSystem, into: &out, start: start)
        // Fields the extension's `render` added (none on the wall), after the stored ones.
        for (k, v) in decoded.sorted(by: { $0.key < $1.key }) {
            Self.writeMember(k, v, into: &out, first: false)
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// A member whose key and value are decoded (the rarer values holding a File), as `JSON.serialized`
    /// writes it, after a comma unless `first`.
    static func writeMember(_ key: String, _ value: JSON, into out: inout ByteWriter, first: Bool) {
        var text: [UInt8] = []
        if !first { text.append(UInt8(ascii: ",")) }
        JSON.writeString(key, into: &text)
        text.append(UInt8(ascii: ":"))
        value.write(into: &text)
        out.append(text)
    }

    /// System field `i` of `ACL`, `createdAt`, `objectId`, `updatedAt` (sorted, as `JSON.serialized`
    /// orders keys). A switch, not an array in a global, whose lazy-initialisation check ran per key.
    static func systemField(_ i: Int) -> StaticString {
        switch i {
        case 0: return "ACL"
        case 1: return "createdAt"
        case 2: return "objectId"
        default: return "updatedAt"
        }
    }

    /// Whether a stored key is one of the four system fields (a stored row's own copy is left out).
    static func isSystemField(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        switch key.count {
        case 3: return equal("ACL", key)
        case 8: return equal("objectId", key)
        case 9: return equal("createdAt", key) || equal("updatedAt", key)
        default: return false
        }
    }

    /// Writes the system fields from `next` on that sort before `key` (all that are left when `key` is
    /// nil), advancing `next`; `ACL` only when the row has one. `start` is where the row's `{` is in `out`.
    /// (A static function with its state passed in, not a nested one capturing it: the captures cost a
    /// dynamic exclusivity check per stored key.)
    static func writeSystemFields(of row: StoredRowView, upTo key: UnsafeBufferPointer<UInt8>?, next: inout Int,
                                  into out: inout ByteWriter, start: Int) {
        while next < 4 {
            if let key, !less(systemField(next), key) { return }
            next += 1
            switch next {
            case 1:
                guard let acl = row.aclText else { continue }
                writeMember("ACL", into: &out, first: out.count == start + 1)
                out.append(acl)
            case 2: writeMember("createdAt", into: &out, first: out.count == start + 1)
                row.createdAt.writeJSONString(into: &out)
            case 3: writeMember("objectId", into: &out, first: out.count == start + 1)
                JSON.writeString(utf8: row.objectId, into: &out)
            default: writeMember("updatedAt", into: &out, first: out.count == start + 1)
                row.updatedAt.writeJSONString(into: &out)
            }
        }
    }

    static func writeMember(_ name: StaticString, into out: inout ByteWriter, first: Bool) {
        if !first { out.append(UInt8(ascii: ",")) }
        out.append(UInt8(ascii: "\""))
        out.append(name)
        out.append("\":")
    }

    /// A stored key's text (its bytes between the quotes, escapes decoded).
    static func keyString(_ key: UnsafeBufferPointer<UInt8>) -> String {
        if !key.contains(UInt8(ascii: "\\")) { return String(decoding: key, as: UTF8.self) }
        return (try? JSON.parse([UInt8(ascii: "\"")] + key + [UInt8(ascii: "\"")]))?.stringValue ?? String(decoding: key, as: UTF8.self)
    }

    static func equal(_ a: StaticString, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.utf8CodeUnitCount == b.count else { return false }
        for i in 0..<b.count where a.utf8Start[i] != b[i] { return false }
        return true
    }

    /// Byte order, as `String`'s `<` orders ASCII keys.
    static func less(_ a: StaticString, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = min(a.utf8CodeUnitCount, b.count)
        for i in 0..<n where a.utf8Start[i] != b[i] { return a.utf8Start[i] < b[i] }
        return a.utf8CodeUnitCount < b.count
    }

    /// Whether `needle` occurs in `haystack`: candidates found with `memchr` (vectorised) on the needle's
    /// second byte, not its first. The needles here open with a quote (`"File"`), and a stored object
    /// is mostly quotes: anchored on the quote, a Pointer value gave about ten candidates, each a
    /// `memcmp` call (3% of a 100-object query's CPU); anchored on `F`, almost none.
    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: StaticString) -> Bool {
        let n = needle.utf8CodeUnitCount, p = needle.utf8Start
        guard n > 0, haystack.count >= n, let base = haystack.baseAddress else { return false }
        let anchor = n > 1 ? 1 : 0
        // Candidate starts run from 0 to `last`; the anchor byte of a candidate at `i` is at `i + anchor`.
        var i = 0
        let last = haystack.count - n
        while i <= last {
            guard let hit = memchr(base + i + anchor, Int32(p[anchor]), last - i + 1) else { return false }
            i = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) - base - anchor
            var k = 0
            while k < n, base[i + k] == p[k] { k += 1 }
            if k == n { return true }
            i += 1
        }
        return false
    }
}
