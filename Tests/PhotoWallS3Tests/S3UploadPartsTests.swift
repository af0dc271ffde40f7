import Foundation
import Testing
import PhotoWallCore
import PhotoWallS3
import PhotoWallStorage

/// `S3UploadParts` against a real S3 server (skipped without one): the state committed with each
/// offset is all that counts, whichever "instance" (a separate `S3UploadParts`) writes next.
@Suite struct S3UploadPartsTests {
    static let part = S3Client.minimumPartBytes

    /// Two part stores over one bucket and prefix, as two instances would have.
    static func withInstances(_ body: (S3UploadParts, S3UploadParts, S3FileStore) throws -> Void) throws {
        let dir = NSTemporaryDirectory() + "pw-s3parts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = S3TestEnv.prefix() + "files/"
        let store = try S3FileStore(client: S3TestEnv.client(), keyPrefix: prefix, cacheDirectory: dir + "/cache")
        let a = try S3UploadParts(store: store, spoolDirectory: dir + "/a", partBytes: Int64(part))
        let b = try S3UploadParts(store: try S3FileStore(client: S3TestEnv.client(), keyPrefix: prefix, cacheDirectory: dir + "/cache-b"),
                                  spoolDirectory: dir + "/b", partBytes: Int64(part))
        try body(a, b, store)
    }

    static func append(_ parts: S3UploadParts, _ id: String, at offset: Int64, state: String, _ bytes: ArraySlice<UInt8>) throws -> (Int64, String) {
        let w = try parts.openForAppend(id, at: offset, state: state)
        defer { w.close() }
        try bytes.withUnsafeBytes { try w.write($0) }
        return try w.sync()
    }

    @Test func chunksFromAlternatingInstancesBecomeOneFile() throws {
        if S3TestEnv.skipNote() { return }
        try Self.withInstances { a, b, store in
            let id = "0123456789abcdef0123456789abcdef"
            let name = id + "_big.bin"
            let data = testBytes(2 * Self.part + 1_234_567, seed: 7)
            var state = try a.create(id, finalName: name)
            var offset: Int64 = 0
            // Chunks smaller and larger than a part, alternating instances: tails carry the rest.
            let cuts = [300_000, Self.part + 300_010, Self.part + 1_000_000, data.count]
            var start = 0
            for (i, end) in cuts.enumerated() {
                (offset, state) = try Self.append(i % 2 == 0 ? a : b, id, at: offset, state: state, data[start..<end])
                #expect(offset == Int64(end))
                start = end
            }
            // A writer that synced beyond the committed state (a crash before the database commit)
            // leaves nothing that counts: the next open from the committed state ignores it.
            let committed = state
            _ = try Self.append(a, id, at: offset, state: committed, [9, 9, 9][...])
            #expect(try store.client.headObject(key: store.key(name)) == nil, "nothing visible before completion")
            try b.complete(id, length: offset, state: committed, as: name, into: store)
            #expect(try store.read(name) == data)
            // Completing again (an interrupted completion redone) is a no-op.
            try a.complete(id, length: offset, state: committed, as: name, into: store)
            b.remove(id, state: committed)
            #expect(try store.client.listAllObjects(prefix: a.tailPrefix).isEmpty, "tails are removed")
            #expect(try store.read(name) == data)
        }
    }

    @Test func discardKeepsTheOpenedStateAndSmallOrEmptyUploadsComplete() throws {
        if S3TestEnv.skipNote() { return }
        try Self.withInstances { a, b, store in
            let id = "fedcba9876543210fedcba9876543210"
            var state = try a.create(id, finalName: id + "_small.txt")
            var offset: Int64 = 0
            (offset, state) = try Self.append(a, id, at: 0, state: state, Array("hello ".utf8)[...])
            // A rejected chunk (checksum mismatch) is dropped; the part stays at 6 bytes.
            let w = try b.openForAppend(id, at: offset, state: state)
            try Array("WRONG".utf8).withUnsafeBytes { try w.write($0) }
            try w.discard()
            try Array("world".utf8).withUnsafeBytes { try w.write($0) }
            (offset, state) = try w.sync()
            w.close()
            #expect(offset == 11)
            try a.complete(id, length: offset, state: state, as: id + "_small.txt", into: store)
            #expect(try store.read(id + "_small.txt") == Array("hello world".utf8))

            let empty = "00000000000000000000000000000000"
            let s0 = try b.create(empty, finalName: empty + "_empty.bin")
            try b.complete(empty, length: 0, state: s0, as: empty + "_empty.bin", into: store)
            #expect(try store.read(empty + "_empty.bin").isEmpty)
            // A state that doesn't match the offset is refused, not trusted.
            #expect(throws: ParseError.self) { _ = try a.openForAppend(id, at: 5, state: state) }
        }
    }
}
