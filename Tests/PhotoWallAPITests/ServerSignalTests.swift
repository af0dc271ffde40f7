import Foundation
import PhotoWallTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `photowall serve` stops on SIGTERM whichever of its threads the kernel hands the signal to.
///
/// A process-directed signal goes to any thread that doesn't block it, and threads started by
/// Foundation (`Thread`: the stdin watcher of `--stop-on-stdin-eof`, the upload reaper) block
/// nothing. The server used to ignore the signal and wait for it through a Dispatch source, so a
/// SIGTERM taken by such a thread was dropped and the server never stopped (a test run hung in
/// `ParseTestServer.stop`). Sending it to each kind of thread directly makes that deterministic.
@Suite struct ServerSignalTests {
    /// glibc's `tgkill(tgid, tid, sig)` (2.30+; not in Swift's Glibc module): a signal to one thread of another process.
    static func tgkill(_ pid: Int32, _ tid: Int32, _ signal: Int32) -> Int32 {
        typealias TGKill = @convention(c) (Int32, Int32, Int32) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "tgkill") else { return -1 }
        return unsafeBitCast(symbol, to: TGKill.self)(pid, tid, signal)
    }

    /// The server's threads other than its main thread that don't block SIGTERM (`SigBlk` in
    /// `/proc/PID/task/TID/status`, hex, bit N-1 = signal N), by name.
    static func threadsTakingSIGTERM(pid: Int32) throws -> [(name: String, tid: Int32)] {
        var out: [(name: String, tid: Int32)] = []
        for tid in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            guard let id = Int32(tid), id != pid,
                  let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8),
                  let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
                  let blocked = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16),
                  blocked & (1 << (UInt64(SIGTERM) - 1)) == 0 else { continue }
            out.append((name.trimmingCharacters(in: .whitespacesAndNewlines), id))
        }
        return out
    }

    /// Gone, or a zombie not yet reaped by its `Child`.
    static func hasExited(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // "pid (comm) S …": the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    @Test("SIGTERM stops the server whichever thread takes it")
    func sigtermToAnyThreadStopsTheServer() async throws {
        let probe = try ParseTestServer()
        #expect(try await probe.request("GET", "/health").status == 200)
        let takers = try Self.threadsTakingSIGTERM(pid: probe.pid)
        probe.stop()
        // One server per thread that may take a process-directed SIGTERM (the stdin watcher of
        // --stop-on-stdin-eof is one: Foundation's threads block nothing), sent to it directly;
        // then one more sent to the process as `kill` does.
        var targets: [String?] = Array(Set(takers.map(\.name))).sorted().map { Optional($0) }
        targets.append(nil)
        for kind in targets {
            let server = try ParseTestServer()
            #expect(try await server.request("GET", "/health").status == 200)
            let pid = server.pid
            if let kind {
                guard let tid = try Self.threadsTakingSIGTERM(pid: pid).first(where: { $0.name == kind })?.tid else { continue }
                #expect(Self.tgkill(pid, tid, SIGTERM) == 0)
            } else {
                #expect(kill(pid, SIGTERM) == 0)
            }
            // Stopping takes well under a second; 20 s only tells a lost signal from a slow machine.
            var exited = false
            for _ in 0..<200 where !exited {
                exited = Self.hasExited(pid)
                if !exited { try await Task.sleep(nanoseconds: 100_000_000) }
            }
            #expect(exited, "the server ignored a SIGTERM sent to \(kind.map { "its thread " + $0 } ?? "the process")")
            if !exited { server.kill() }
        }
    }
}
