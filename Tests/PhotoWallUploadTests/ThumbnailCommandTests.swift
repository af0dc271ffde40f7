import Foundation
import PhotoWallTesting
import Testing

/// `photowall thumbnail` as a user runs it: `photowall` executes `photowall-thumbnail` from its own
/// folder, a program that maps only the imaging libraries (no Foundation, libpq, libcurl, …) and reads
/// a JPEG in 64 KiB blocks, so its memory is the imaging code's, not the server runtime's.
@Suite("photowall thumbnail",
       .enabled(if: TestPaths.corpus != nil, "image corpus not found: set PHOTOWALL_CORPUS or provide ../shared/imagecorpus"))
struct ThumbnailCommandTests {
    static let tool = URL(fileURLWithPath: TestPaths.binary).deletingLastPathComponent()
        .appendingPathComponent("photowall-thumbnail").path
    static let olympus = TestPaths.corpus!.appendingPathComponent("photos/olympus_e-p3_4032x3024.jpg").path   // 2.9 MB

    @Test("photowall thumbnail writes what photowall-thumbnail writes; errors come from the tool")
    func executesTheTool() throws {
        try withTemporaryDirectory { dir in
            let viaPhotowall = try spawn(TestPaths.binary, ["thumbnail", Self.olympus, dir + "/a.jpg", "--size", "200"])
            let direct = try spawn(Self.tool, [Self.olympus, dir + "/b.jpg", "--size", "200"])
            #expect(viaPhotowall.status == 0 && direct.status == 0)
            let a = try Data(contentsOf: URL(fileURLWithPath: dir + "/a.jpg"))
            let b = try Data(contentsOf: URL(fileURLWithPath: dir + "/b.jpg"))
            #expect(a.count > 1000 && a == b)
            let missing = try spawn(TestPaths.binary, ["thumbnail", dir + "/none.jpg", dir + "/c.jpg"])
            #expect(missing.status == 1)
        }
    }

    /// Peak RSS, not time, and relative: a 2.9 MB JPEG must cost no more than a 150 KB one plus
    /// libjpeg's blocks (the absolute figures, 13 MiB against Pillow's 17-20, are `make bench`'s).
    @Test("photowall-thumbnail never holds the file whole in memory")
    func memory() throws {
        try withTemporaryDirectory { dir in
            // The baseline: a small JPEG of the same photo (the tool's own 1080 px thumbnail, about 150 KB).
            let small = try spawn(Self.tool, [Self.olympus, dir + "/small.jpg", "--size", "1080"])
            #expect(small.status == 0)
            let base = try spawn(Self.tool, [dir + "/small.jpg", dir + "/out1.jpg"])
            let large = try spawn(Self.tool, [Self.olympus, dir + "/out2.jpg"])
            #expect(base.status == 0 && large.status == 0)
            // Reading the 2.9 MB file whole would add its size; streaming adds libjpeg's 64 KiB blocks.
            #expect(large.maxRSSKiB - base.maxRSSKiB < 1536, "\(large.maxRSSKiB) KiB vs \(base.maxRSSKiB) KiB")
        }
    }
}

/// Exit status and peak RSS of a finished process.
private struct Spawned {
    var status: Int32
    /// `ru_maxrss` in KiB, as GNU time reports it.
    var maxRSSKiB: Int
}

/// Runs the command under GNU time (`time -f %M`). Not from this process directly: a child started by
/// fork or posix_spawn begins as a copy of (or inside) the test process's address space, and Linux
/// counts that in the child's ru_maxrss; time, a small process, starts the command afresh.
private func spawn(_ executable: String, _ arguments: [String]) throws -> Spawned {
    try withTemporaryDirectory { dir in
        let report = dir + "/rss"
        let r = try runProcess("/usr/bin/time", ["-f", "%M", "-o", report, executable] + arguments)
        let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n")
        return Spawned(status: r.status, maxRSSKiB: Int(lines.last ?? "") ?? -1)
    }
}
