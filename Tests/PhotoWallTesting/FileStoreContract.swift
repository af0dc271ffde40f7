import Foundation
import PhotoWallCore
import PhotoWallStorage

/// The `FileStore` contract, run against every adapter (filesystem, S3): two-phase writes never
/// show a partial file, abort leaves nothing, read/location/delete agree, import is idempotent.
/// Throws `ContractFailure` naming the first broken rule.
public enum FileStoreContract {
    public struct ContractFailure: Error, CustomStringConvertible {
        public var description: String
    }

    static func check(_ ok: Bool, _ rule: String) throws {
        if !ok { throw ContractFailure(description: "FileStore contract: \(rule)") }
    }

    /// Runs every rule on `store`. `scratch` is a local folder for source files of `importFile`.
    /// Names are random, so stores may be shared between runs.
    public static func run(_ store: any FileStore, scratch: String) throws {
        let p = ParseIdentifier.hex(byteCount: 8)
        let name = "\(p)_photo.jpg"
        let bytes = (0..<1000).map { UInt8($0 % 251) }

        try check(try store.location(of: name) == nil, "a missing file has no location")
        let w = try store.makeWriter(for: name)
        try bytes.withUnsafeBytes { try w.write(UnsafeRawBufferPointer(rebasing: $0[0..<300])) }
        try bytes.withUnsafeBytes { try w.write(UnsafeRawBufferPointer(rebasing: $0[300...])) }
        try check(w.byteCount == 1000, "byteCount counts written bytes")
        try check(try store.location(of: name) == nil, "not visible before commit")
        try w.commit()
        let loc = try store.location(of: name)
        try check(loc?.byteCount == 1000, "location has the size after commit")
        try check(loc.flatMap { FileManager.default.contents(atPath: $0.path) }.map { [UInt8]($0) } == bytes, "location's path holds the bytes")
        try check(try store.read(name) == bytes, "read returns the bytes")

        // abort: nothing visible, also after writing.
        let gone = "\(p)_gone.jpg"
        let a = try store.makeWriter(for: gone)
        try bytes.withUnsafeBytes { try a.write($0) }
        a.abort()
        a.abort()
        try check(try store.location(of: gone) == nil, "an aborted file is not visible")
        try check(!(try store.delete(gone)), "deleting an aborted file reports false")

        // empty file
        let empty = "\(p)_empty.txt"
        let e = try store.makeWriter(for: empty)
        try e.commit()
        try check(try store.location(of: empty)?.byteCount == 0, "an empty file is stored")
        try check(try store.read(empty) == [], "an empty file reads empty")

        // import, twice
        let source = scratch + "/\(p).src"
        let imported = (0..<70_000).map { UInt8(($0 * 7) % 256) }
        try check(FileManager.default.createFile(atPath: source, contents: Data(imported)), "test setup: could not write the file")
        let importedName = "\(p)_imported.bin"
        try store.importFile(at: source, as: importedName)
        try store.importFile(at: source, as: importedName)
        try check(try store.read(importedName) == imported, "an imported file reads back")
        try check(FileManager.default.fileExists(atPath: source), "import leaves the source")

        // delete
        try check(try store.delete(name), "delete reports true for a stored file")
        try check(!(try store.delete(name)), "a second delete reports false")
        try check(try store.location(of: name) == nil, "a deleted file has no location")
        do {
            _ = try store.read(name)
            try check(false, "reading a deleted file throws")
        } catch let error as ParseError {
            try check(error.code == .objectNotFound, "reading a deleted file throws 101, got \(error.code)")
        }
        for n in [empty, importedName] { _ = try store.delete(n) }
    }
}
