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

    /// Peak RSS, not time: `photowall thumbnail` made this thumbnail in process at 30-32 MiB (release), of
    /// which about 20 MiB were `photowall`'s libraries; `photowall-thumbnail` needs about 13 MiB.
    @Test("photowall-thumbnail makes a 12 MP thumbnail in under 20 MiB, the file never whole in memory")
    func memory() throws {
        try withTemporaryDirectory { dir in
            // The baseline: a small JPEG of the same photo (the tool's own 1080 px thumbnail, about 150 KB).
            let small = try spawn(Self.tool, [Self.olympus, dir + "/small.jpg", "--size", "1080"])
            #expect(small.status == 0)
            let base = try spawn(Self.tool, [dir + "/small.jpg", dir + "/out1.jpg"])
            let large = try spawn(Self.tool, [Self.olympus, dir + "/out2.jpg"])
            #expect(base.status == 0 && large.status == 0)
            #expect(large.maxRSSKiB < 20 << 10, "peak RSS \(large.maxRSSKiB) KiB")
            // Reading the 2.9 MB file whole would add its size; streaming adds libjpeg's 64 KiB blocks.
            #expect(large.maxRSSKiB - base.maxRSSKiB < 1536, "\(large.maxRSSKiB) KiB vs \(base.maxRSSKiB) KiB")
        }
    }
}

/// Exit status and peak RSS (`wait4`'s `ru_maxrss`, KiB) of a finished process.
private struct Spawned {
    var status: Int32
    var maxRSSKiB: Int
}

/// fork + execv, not posix_spawn: glibc's posix_spawn starts the child in the parent's address space
/// (CLONE_VM | CLONE_VFORK), and Linux then counts the test process's own peak in the child's ru_maxrss.
private func spawn(_ executable: String, _ arguments: [String]) throws -> Spawned {
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let devNull = open("/dev/null", O_WRONLY)
    defer { close(devNull) }
    let pid = fork()
    if pid == 0 {                                   // the child: async-signal-safe calls only
        dup2(devNull, 2)
        execv(executable, argv)
        _exit(127)
    }
    guard pid > 0 else { throw TestServerError(description: "fork failed") }
    var status: Int32 = 0
    var usage = rusage()
    guard wait4(pid, &status, 0, &usage) == pid else { throw TestServerError(description: "wait4 failed") }
    let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return Spawned(status: exitStatus, maxRSSKiB: usage.ru_maxrss)
}
