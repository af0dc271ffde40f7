import Foundation
import Testing
import PhotoWallStorage
import PhotoWallTesting

/// The filesystem file store: the shared `FileStoreContract` and its own folder layout.
@Suite struct FileSystemStoreTests {
    @Test func contract() throws {
        let dir = NSTemporaryDirectory() + "pw-fs-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileStoreContract.run(try FileSystemStore(root: dir), scratch: dir)
    }

    @Test func commitMakesVisibleAbortLeavesNothing() throws {
        let dir = NSTemporaryDirectory() + "pw-fs-\(UUID().uuidString)"
        let store = try FileSystemStore(root: dir)
        let w = try store.makeWriter(for: "0123abcd_photo.jpg")
        try [UInt8](repeating: 7, count: 1000).withUnsafeBytes { try w.write($0) }
        #expect(try store.location(of: "0123abcd_photo.jpg") == nil, "not visible before commit")
        try w.commit()
        #expect(try store.location(of: "0123abcd_photo.jpg")?.byteCount == 1000)
        #expect(try store.location(of: "0123abcd_photo.jpg")?.path.hasSuffix("/files/01/23/0123abcd_photo.jpg") == true)
        #expect(try store.read("0123abcd_photo.jpg") == [UInt8](repeating: 7, count: 1000))

        let a = try store.makeWriter(for: "ffff_gone.jpg")
        try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try a.write($0) }
        a.abort()
        #expect(try store.location(of: "ffff_gone.jpg") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/tmp").isEmpty)
        #expect(try store.delete("0123abcd_photo.jpg"))
        #expect(try !store.delete("0123abcd_photo.jpg"))
    }

    @Test func staleTemporariesAreRemovedAtOpen() throws {
        let dir = NSTemporaryDirectory() + "pw-fs-\(UUID().uuidString)"
        _ = try FileSystemStore(root: dir)
        try #require(FileManager.default.createFile(atPath: dir + "/tmp/crashed.part", contents: Data([1, 2, 3])), "test setup: could not write the file")
        _ = try FileSystemStore(root: dir)
        #expect(!FileManager.default.fileExists(atPath: dir + "/tmp/crashed.part"))
    }
}
