import Foundation
import Testing
import PhotoWallStorage

/// The local writers flush ahead (`WritebackStarter`: an `fdatasync` every 16 MiB on another thread)
/// while bytes stream in: a file or part over several steps commits whole, in order, and closing or
/// discarding with a flush still running is safe.
@Suite struct FlushAheadWriterTests {
    /// `count` bytes whose every 4-byte word is its own offset: a piece out of place shows.
    static func pattern(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { raw in
            for word in 0..<count / 4 { raw.storeBytes(of: UInt32(word * 4).littleEndian, toByteOffset: word * 4, as: UInt32.self) }
        }
        return bytes
    }

    /// Writes `bytes` in 32 KiB pieces, as the engine hands a body over.
    static func stream(_ bytes: [UInt8], into write: (UnsafeRawBufferPointer) throws -> Void) throws {
        try bytes.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(offset + 32 << 10, all.count)
                try write(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                offset = end
            }
        }
    }

    @Test func aFileOverSeveralFlushStepsCommitsWhole() throws {
        let dir = NSTemporaryDirectory() + "pw-flush-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try FileSystemStore(root: dir)
        let bytes = Self.pattern(40 << 20 + 12_345)
        let w = try store.makeWriter(for: "0123abcd_big.bin")
        try Self.stream(bytes) { try w.write($0) }
        try w.commit()
        #expect(try store.location(of: "0123abcd_big.bin")?.byteCount == Int64(bytes.count))
        #expect(try store.read("0123abcd_big.bin") == bytes)

        let gone = try store.makeWriter(for: "0123abcd_gone.bin")
        try Self.stream(Self.pattern(20 << 20)) { try gone.write($0) }
        gone.abort()  // a flush ahead may still be running: it closes the descriptor when it ends
        #expect(try store.location(of: "0123abcd_gone.bin") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/tmp").isEmpty)
    }

    @Test func aPartOverSeveralFlushStepsSyncsWholeFromItsOffset() throws {
        let dir = NSTemporaryDirectory() + "pw-flush-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let parts = try FileSystemUploadParts(root: dir)
        _ = try parts.create("upload1", finalName: "big.bin")
        let bytes = Self.pattern(50 << 20)
        let first = try parts.openForAppend("upload1", at: 0, state: "")
        try Self.stream(Array(bytes[..<(18 << 20)])) { try first.write($0) }
        #expect(try first.sync().size == 18 << 20)
        first.close()
        let second = try parts.openForAppend("upload1", at: 18 << 20, state: "")
        try Self.stream(Array(bytes[(18 << 20)...])) { try second.write($0) }
        try second.syncAhead()
        #expect(try second.sync().size == Int64(bytes.count))
        second.close()
        #expect(FileManager.default.contents(atPath: parts.path(of: "upload1")).map { [UInt8]($0) } == bytes)

        // A rejected chunk over a flush step: discarded back to where it was opened.
        let third = try parts.openForAppend("upload1", at: Int64(bytes.count), state: "")
        try Self.stream(Self.pattern(20 << 20)) { try third.write($0) }
        try third.discard()
        third.close()
        #expect(parts.size(of: "upload1") == Int64(bytes.count))
    }
}
