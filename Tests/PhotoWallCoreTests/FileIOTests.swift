import Testing
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

@Suite struct FileIOTests {
    /// A fresh directory under /tmp, removed with its files by `cleanUp`.
    static func makeDirectory() throws -> String {
        var template = Array("/tmp/photowall-core-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return try #require(made.map { String(cString: $0) })
    }

    static func cleanUp(_ dir: String) {
        for name in entries(dir) { unlink(dir + "/" + name) }
        rmdir(dir)
    }

    static func entries(_ dir: String) -> [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { out.append(name) }
        }
        return out.sorted()
    }

    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = [], buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out += buf[..<n]
        }
    }

    @Test func writeAllWritesEveryByteThroughAPipe() async throws {
        // More than a pipe's 64 KiB buffer: the writer sees short writes while the reader drains.
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let reader = fds[0], writer = fds[1]
        let received = Task.detached { () -> [UInt8] in
            var out: [UInt8] = [], buf = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buf.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, $0.count) }
                if n <= 0 { return out }
                out += buf[..<n]
            }
        }
        #expect(bytes.withUnsafeBytes { writeAll(writer, $0) })
        close(writer)
        #expect(await received.value == bytes)
        close(reader)
        #expect(writeAll(-1, UnsafeRawBufferPointer(start: nil, count: 0)))  // nothing to write: no call made
        #expect([1, 2].withUnsafeBytes { writeAll(-1, $0) } == false && errno == EBADF)
    }

    @Test func pwriteAllWritesAtTheOffset() throws {
        let dir = try Self.makeDirectory()
        defer { Self.cleanUp(dir) }
        let fd = open(dir + "/f", O_RDWR | O_CREAT, 0o600)
        #expect(Array("hello world".utf8).withUnsafeBytes { writeAll(fd, $0) })
        #expect(Array("W".utf8).withUnsafeBytes { pwriteAll(fd, $0, at: 6) })
        close(fd)
        #expect(Self.read(dir + "/f") == Array("hello World".utf8))
    }

    @Test func writebackStartsOnceAStepIsWrittenAndLeavesTheBytesAlone() throws {
        let dir = try Self.makeDirectory()
        defer { Self.cleanUp(dir) }
        let fd = open(dir + "/f", O_RDWR | O_CREAT, 0o600)
        var writeback = WritebackStarter(offset: 10, stepBytes: 4)
        #expect(writeback.startedUpTo == 10 && writeback.writtenUpTo == 10, "starts at the writer's offset")
        #expect([UInt8]([0, 1, 2]).withUnsafeBytes { pwriteAll(fd, $0, at: 10) })
        writeback.wrote(3, fd: fd)
        #expect(writeback.startedUpTo == 10 && writeback.writtenUpTo == 13, "below a step: nothing started")
        #expect([UInt8]([3, 4]).withUnsafeBytes { pwriteAll(fd, $0, at: 13) })
        writeback.wrote(2, fd: fd)
        #expect(writeback.startedUpTo == 15 && writeback.writtenUpTo == 15, "a step reached: the pending range started")
        writeback.wrote(0, fd: -1)  // a bad descriptor is only a missed hint
        #expect(writeback.startedUpTo == 15)
        close(fd)
        #expect(Self.read(dir + "/f") == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4])
    }

    @Test func flushesAheadEveryStepOneAtATimeAndSettleWaitsForThem() throws {
        let dir = try Self.makeDirectory()
        defer { Self.cleanUp(dir) }
        let fd = open(dir + "/f", O_RDWR | O_CREAT, 0o600)
        let piece = 256 << 10
        var writeback = WritebackStarter(stepBytes: nil, flushStepBytes: Int64(2 * piece))
        for n in 0..<6 {
            #expect([UInt8](repeating: UInt8(n), count: piece).withUnsafeBytes { writeAll(fd, $0) })
            writeback.wrote(piece, fd: fd)
        }
        #expect(writeback.startedUpTo == 0, "no writeback started from the writing thread without a step")
        #expect(writeback.flushStartedAt >= Int64(2 * piece), "a flush started once a step was written")
        usleep(1_000)  // most often a flush (of up to 1.5 MiB, a few ms here) is running now: settle must wait for it
        #expect(writeback.settle() == nil)
        let finished = writeback.flushesFinished
        #expect(finished <= 3, "at most one per step (one still queued at settle never runs): \(finished)")
        usleep(100_000)
        #expect(writeback.flushesFinished == finished, "settle waited for the running flush; none ran after it")
        close(fd)
        #expect(Self.read(dir + "/f") == (0..<6).flatMap { [UInt8](repeating: UInt8($0), count: piece) })
    }

    @Test func aFailedFlushAheadIsReportedBySettleAndStopsTheFlushes() async throws {
        // A descriptor fdatasync refuses (EBADF) stands in for a disk that failed: the error reaches
        // the writer through `settle` only, since Linux reports a writeback error once per open file.
        var writeback = WritebackStarter(stepBytes: nil, flushStepBytes: 1)
        writeback.wrote(1, fd: -1)
        #expect(writeback.flushStartedAt == 1)
        for _ in 0..<500 where writeback.flushesFinished == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try #require(writeback.flushesFinished == 1, "the flush ran")
        writeback.wrote(1, fd: -1)
        #expect(writeback.flushStartedAt == 1, "no flush after one failed")
        #expect(writeback.settle() == EBADF)
        #expect(writeback.settle() == EBADF, "still reported")
    }

    @Test func aFlushStillQueuedAtSettleNeverRuns() throws {
        // `settle` races the flush thread here: either the flush began first (settle waited for it and
        // reports its EBADF), or it was still queued and is dropped for good (its descriptor may be
        // closed and reused after `settle`): then no flush ever ends and no failure appears later.
        var writeback = WritebackStarter(stepBytes: nil, flushStepBytes: 1)
        writeback.wrote(1, fd: -1)
        if let failure = writeback.settle() {
            #expect(failure == EBADF && writeback.flushesFinished == 1)
        } else {
            usleep(200_000)
            #expect(writeback.settle() == nil && writeback.flushesFinished == 0)
        }
    }

    /// Closed at once (no flush running yet) or by the flush when it ends: either way the descriptor is
    /// closed, once, and the bytes stay.
    @Test func closeLeavesTheDescriptorToARunningFlush() throws {
        let dir = try Self.makeDirectory()
        defer { Self.cleanUp(dir) }
        let fd = open(dir + "/f", O_RDWR | O_CREAT, 0o600)
        var own = stat()
        #expect(fstat(fd, &own) == 0)
        /// Whether `fd` is still this file (closed, it fails, or names another file opened since).
        func stillOurs() -> Bool {
            var st = stat()
            return fstat(fd, &st) == 0 && st.st_ino == own.st_ino && st.st_dev == own.st_dev
        }
        var writeback = WritebackStarter(stepBytes: nil, flushStepBytes: 1)
        #expect([UInt8](repeating: 9, count: 1 << 20).withUnsafeBytes { writeAll(fd, $0) })
        writeback.wrote(1 << 20, fd: fd)
        usleep(2_000)  // most often the flush runs by now, and `close` leaves the descriptor to it
        writeback.close(fd)
        for _ in 0..<500 where stillOurs() { usleep(10_000) }
        #expect(!stillOurs(), "closed now, or by the flush once it ended")
        #expect(Self.read(dir + "/f") == [UInt8](repeating: 9, count: 1 << 20))
    }

    @Test func atomicWriteReplacesTheFileWithExactModeAndLeavesNoTemporary() throws {
        let dir = try Self.makeDirectory()
        defer { Self.cleanUp(dir) }
        let path = dir + "/settings.json"
        try AtomicFile.write(Array("first".utf8), to: path, mode: 0o600)
        let old = umask(0o077)
        defer { umask(old) }
        try AtomicFile.write(Array("second, longer".utf8), to: path, mode: 0o644)
        #expect(Self.read(path) == Array("second, longer".utf8))
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o644)  // the umask removed no bits
        #expect(Self.entries(dir) == ["settings.json"])
    }

    @Test func atomicWriteFailureNamesTheCallAndLeavesNothing() throws {
        let dir = try Self.makeDirectory()
        defer { Self.cleanUp(dir) }
        let error = #expect(throws: POSIXFailure.self) { try AtomicFile.write([1], to: dir + "/missing/f") }
        #expect(error?.code == ENOENT)
        #expect(error?.call.hasPrefix("open ") == true)
        // A directory in the way: the rename fails, and the temporary file is removed.
        #expect(mkdir(dir + "/taken", 0o700) == 0)
        #expect(mkdir(dir + "/taken/x", 0o700) == 0)
        let renameError = #expect(throws: POSIXFailure.self) { try AtomicFile.write([1], to: dir + "/taken") }
        #expect(renameError?.call.hasPrefix("rename ") == true)
        rmdir(dir + "/taken/x"); rmdir(dir + "/taken")
        #expect(Self.entries(dir).isEmpty)
    }
}
