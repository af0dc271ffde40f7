import Foundation
import PhotoWallCore
import PhotoWallCrypto
@testable import PhotoWallServices
import PhotoWallStorage
import PhotoWallTesting
import Synchronization
import Testing

/// `ReadBackDigests` on real files (a `FileSystemUploadParts` part, a `FileSystemStore` temporary): the
/// digests of a chain of ranges written one behind the other, read back on the digest pool or hashed
/// as written.
@Suite struct ReadBackDigestsTests {
    /// Random bytes (not a pattern a wrong offset could still hash right).
    static func bytes(_ count: Int) -> [UInt8] { Crypto.randomBytes(count) }

    /// Writes `bytes` through `writer` in pieces of `piece` bytes, telling `digests` after each (as
    /// `UploadAppend.write` does). - Returns: where the range's bytes end.
    static func write(_ bytes: ArraySlice<UInt8>, _ writer: any UploadPartWriter, _ digests: ReadBackDigests,
                      _ segment: ReadBackDigests.Segment, piece: Int = 48 << 10) throws -> Int64 {
        try write(bytes, { (b) throws(ParseError) in try writer.write(b) }, digests, segment, piece: piece)
    }

    static func write(_ bytes: ArraySlice<UInt8>, _ write: (UnsafeRawBufferPointer) throws(ParseError) -> Void, _ digests: ReadBackDigests,
                      _ segment: ReadBackDigests.Segment, piece: Int = 48 << 10) throws -> Int64 {
        var at = bytes.startIndex
        while at < bytes.endIndex {
            let next = min(at + piece, bytes.endIndex)
            try bytes[at..<next].withUnsafeBytes { b in
                try write(b)
                digests.wrote(b, to: segment, endingAt: segment.start + Int64(next - bytes.startIndex))
            }
            at = next
        }
        return segment.start + Int64(bytes.count)
    }

    static func sha256State(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let d = ResumableSHA256()
        bytes.withUnsafeBytes { d.update($0) }
        return d.state
    }

    static func finalized(_ state: [UInt8]?) -> [UInt8]? { state.flatMap { ResumableSHA256(state: $0) }?.finalize() }

    /// Two ranges written before either is awaited (the second as a pipelined PATCH writes behind the
    /// first): each gets its own checksum digest, and the running SHA-256 state at its own end,
    /// continued from the state saved for the bytes before the chain. The same with and without
    /// read-back.
    @Test(arguments: [true, false])
    func eachRangeGetsItsDigestAndTheRunningStateAtItsEnd(readBack: Bool) throws {
        try withTemporaryDirectory { dir in
            let parts = try FileSystemUploadParts(root: dir)
            _ = try parts.create("a", finalName: "a.bin")
            let all = Self.bytes(7 << 20 + 12_345)
            let before = 1 << 20 + 7, firstEnd = before + 3 << 20 + 17
            // The bytes before the chain, committed by an earlier PATCH: only their saved state is known.
            let earlier = try parts.openForAppend("a", at: 0, state: "")
            try all[..<before].withUnsafeBytes { try earlier.write($0) }
            _ = try earlier.sync()
            earlier.close()

            let digests = ReadBackDigests(startingAt: Int64(before), runningState: Self.sha256State(all[..<before]),
                                      reader: readBack ? try parts.openForReading("a", state: "") : nil)
            let one = digests.addSegment(start: Int64(before), length: Int64(firstEnd - before), chunk: Digest(.sha256))
            let w1 = try parts.openForAppend("a", at: Int64(before), state: "")
            let end1 = try Self.write(all[before..<firstEnd], w1, digests, one)
            let two = digests.addSegment(start: end1, length: Int64(all.count - firstEnd), chunk: Digest(.sha1))
            let w2 = try parts.openForAppend("a", at: end1, state: "")
            let end2 = try Self.write(all[firstEnd...], w2, digests, two)
            // Awaited in order, after both are written: the hashing has (or may have) moved on past the first's end.
            let first = try digests.digests(of: one, endingAt: end1)
            let second = try digests.digests(of: two, endingAt: end2)
            #expect(first.chunk == Digest.hash(.sha256, all[before..<firstEnd]))
            #expect(Self.finalized(first.running) == Digest.hash(.sha256, all[..<firstEnd]), "the running digest at the first range's end")
            #expect(second.chunk == Digest.hash(.sha1, all[firstEnd...]))
            #expect(Self.finalized(second.running) == Digest.hash(.sha256, all), "the running digest of the whole part")
            // Asked again: the same answer.
            #expect(try digests.digests(of: one, endingAt: end1).running == first.running)
        }
    }

    /// A `POST /files` body: the file store's temporary read back (`FileWriter.openReader`) gives the
    /// body's SHA-256, and the committed file is the body.
    @Test func aFileStoreTemporaryIsReadBack() throws {
        try withTemporaryDirectory { dir in
            let store = try FileSystemStore(root: dir)
            let writer = try store.makeWriter(for: "0123456789abcdef0123456789abcdef_big.bin")
            let reader = try #require(try writer.openReader())
            let all = Self.bytes(4 << 20 + 999)
            let digests = ReadBackDigests(startingAt: 0, runningState: ResumableSHA256().state, reader: reader)
            let body = digests.addSegment(start: 0, length: nil, chunk: nil)
            let end = try Self.write(all[...], { (b) throws(ParseError) in try writer.write(b) }, digests, body)
            let sums = try digests.digests(of: body, endingAt: end)
            #expect(Self.finalized(sums.running) == Digest.hash(.sha256, all))
            try writer.commit()
            #expect(try store.read("0123456789abcdef0123456789abcdef_big.bin") == all)
        }
    }

    /// A request cut mid-body (its declared length never arrived) ends where its bytes end.
    @Test func aRangeCutShortEndsWhereItsBytesEnd() throws {
        try withTemporaryDirectory { dir in
            let parts = try FileSystemUploadParts(root: dir)
            _ = try parts.create("b", finalName: "b.bin")
            let all = Self.bytes(3 << 20)
            let digests = ReadBackDigests(startingAt: 0, runningState: ResumableSHA256().state, reader: try parts.openForReading("b", state: ""))
            let one = digests.addSegment(start: 0, length: 5 << 20, chunk: nil)
            let writer = try parts.openForAppend("b", at: 0, state: "")
            let end = try Self.write(all[...], writer, digests, one)
            let sums = try digests.digests(of: one, endingAt: end)
            #expect(sums.chunk == nil)
            #expect(Self.finalized(sums.running) == Digest.hash(.sha256, all))
        }
    }

    /// The bytes are hashed on the digest pool as they are written, with no one waiting for them:
    /// a commit then finds them hashed.
    @Test func writtenBytesAreHashedWithoutAWaiter() async throws {
        try await withTemporaryDirectory { dir in
            let parts = try FileSystemUploadParts(root: dir)
            _ = try parts.create("c", finalName: "c.bin")
            let all = Self.bytes(6 << 20)
            let digests = ReadBackDigests(startingAt: 0, runningState: ResumableSHA256().state, reader: try parts.openForReading("c", state: ""))
            let one = digests.addSegment(start: 0, length: Int64(all.count), chunk: Digest(.sha256))
            let writer = try parts.openForAppend("c", at: 0, state: "")
            let end = try Self.write(all[...], writer, digests, one)
            var hashed: Int64 = 0
            for _ in 0..<500 {
                hashed = digests.hashedOffset
                if hashed == end { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(hashed == end, "the pool hashed every written byte")
            #expect(try digests.digests(of: one, endingAt: end).chunk == Digest.hash(.sha256, all))
        }
    }

    /// A part shorter than the bytes reported written (cut under the request) fails the digests with
    /// 130 instead of waiting for bytes that will never come.
    @Test func aPartShorterThanWrittenFails() throws {
        try withTemporaryDirectory { dir in
            let parts = try FileSystemUploadParts(root: dir)
            _ = try parts.create("d", finalName: "d.bin")
            let all = Self.bytes(300_000)  // under `batchSize`: nothing is hashed before the wait
            let digests = ReadBackDigests(startingAt: 0, runningState: ResumableSHA256().state, reader: try parts.openForReading("d", state: ""))
            let one = digests.addSegment(start: 0, length: nil, chunk: nil)
            let writer = try parts.openForAppend("d", at: 0, state: "")
            let end = try Self.write(all[...], writer, digests, one)
            #expect(truncate(parts.path(of: "d"), 100_000) == 0)
            let error = #expect(throws: ParseError.self) { try digests.digests(of: one, endingAt: end) }
            #expect(error?.code == .fileSaveError)
        }
    }

    /// A reader of the file that records the thread of each read.
    final class ThreadRecordingReader: WrittenBytesReader {
        let inner: any WrittenBytesReader
        let threads = Mutex<[pthread_t]>([])
        init(_ inner: any WrittenBytesReader) { self.inner = inner }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ParseError) -> Int {
            threads.withLock { $0.append(pthread_self()) }
            return try inner.read(at: offset, into: buffer)
        }
    }

    /// What is left of a range when its request commits is hashed on the committing thread when it is
    /// small (`inlineBytes` at most: no hand-off to the pool and back), on the digest pool otherwise;
    /// the digests are the same either way.
    @Test(arguments: [(4_321, true), (Int(ReadBackDigests.inlineBytes), true), (600_000, false)])
    func whatIsLeftIsHashedByTheCommitterWhenSmall(size: Int, onCommitter: Bool) throws {
        try withTemporaryDirectory { dir in
            let parts = try FileSystemUploadParts(root: dir)
            _ = try parts.create("e", finalName: "e.bin")
            let all = Self.bytes(size)  // under `batchSize`: nothing is hashed before the wait
            let reader = ThreadRecordingReader(try #require(try parts.openForReading("e", state: "")))
            let digests = ReadBackDigests(startingAt: 0, runningState: ResumableSHA256().state, reader: reader)
            let one = digests.addSegment(start: 0, length: Int64(size), chunk: Digest(.sha256))
            let writer = try parts.openForAppend("e", at: 0, state: "")
            let end = try Self.write(all[...], writer, digests, one)
            let sums = try digests.digests(of: one, endingAt: end)
            #expect(sums.chunk == Digest.hash(.sha256, all))
            #expect(Self.finalized(sums.running) == Digest.hash(.sha256, all))
            let threads = reader.threads.withLock { $0 }
            #expect(!threads.isEmpty)
            let me = pthread_self()
            if onCommitter {
                #expect(threads.allSatisfy { pthread_equal($0, me) != 0 }, "read back on the committing thread")
            } else {
                #expect(threads.allSatisfy { pthread_equal($0, me) == 0 }, "read back on the digest pool")
            }
        }
    }
}
