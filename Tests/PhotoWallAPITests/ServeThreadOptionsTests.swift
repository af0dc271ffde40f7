import Foundation
import PhotoWallTesting
import Testing

/// `serve --local-threads N` sizes the local pool (the threads that run SQLite queries first in,
/// first out), `--thumbnail-threads N` the render pool, and a bad N is refused at start instead of
/// being ignored.
@Suite struct ServeThreadOptionsTests {
    /// The names of the server's threads (`/proc/PID/task/TID/comm`).
    static func threadNames(pid: Int32) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").compactMap { tid in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func localThreadsSizeTheLocalPool() async throws {
        let server = try ParseTestServer(extraArgs: ["--local-threads", "3"])
        defer { server.stop() }
        #expect(try await server.request("GET", "/classes/Nothing", key: .master(nil)).status == 200)
        let local = try Self.threadNames(pid: server.pid).filter { $0.hasPrefix("http-local-") && $0 != "http-local-w" }
        #expect(local.sorted() == ["http-local-0", "http-local-1", "http-local-2"], "\(local)")
    }

    @Test func thumbnailThreadsSizeTheRenderPool() throws {
        let server = try ParseTestServer(extraArgs: ["--thumbnail-threads", "3"])
        defer { server.stop() }
        let renderers = try Self.threadNames(pid: server.pid).filter { $0.hasPrefix("thumbnail-") && $0 != "thumbnail-w" }
        #expect(renderers.sorted() == ["thumbnail-0", "thumbnail-1", "thumbnail-2"], "\(renderers)")
    }

    /// `--render-wait-limit` takes seconds from above 0 to 3600: the same three values are refused.
    @Test(arguments: ["local-threads", "thumbnail-threads", "render-wait-limit"], ["0", "many", "5000"])
    func aBadCountIsRefused(_ option: String, _ value: String) throws {
        let error = #expect(throws: TestServerError.self) { try ParseTestServer(extraArgs: ["--\(option)", value]) }
        #expect(error?.description.contains("bad --\(option) '\(value)'") == true, "\(String(describing: error))")
    }
}
