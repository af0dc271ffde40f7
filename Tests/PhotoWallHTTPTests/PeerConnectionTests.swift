import PhotoWallCore
@testable import PhotoWallHTTP
import PhotoWallTesting
import Testing
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// `PeerConnection`, which a streamed body's sink gets before its first `write`: it tells whether the
/// client hung up from the socket itself, at once, also while the engine has not read the FIN yet
/// (here: its event thread is held inside the sink's `write`, as a busy or edge-triggered engine may
/// leave a FIN unread), and stops answering once the request is over.
@Suite struct PeerConnectionTests {
    @Test func tellsAHangUpTheEngineHasNotReadYet() throws {
        let sink = HoldingSink()
        var router = Router()
        router.add("PUT", "/body") { _ in
            .streamed(maxBodyBytes: 1 << 20, open: { _ -> StreamOpenResult<HoldingSink> in .sink(sink) },
                      handler: { _, _ in .text("done", status: 200) })
        }
        try withServer(router) { _, port, log in
            let client = try TestHTTPClient(port: port)
            try client.sendHead("PUT", "/body", headers: [("Content-Length", "1000")])
            try client.send(Array(repeating: UInt8(1), count: 600))
            // The engine is inside `write` with the 600 bytes, and stays there until `release`.
            #expect(sink.entered.wait(timeout: .now() + 5) == .success)
            let peer = try #require(sink.peer.value)
            #expect(!peer.hasHungUp(), "the client is still there")
            // Bytes before a FIN are left to the engine: not hung up while they are unread.
            try client.send(Array(repeating: UInt8(2), count: 100))
            client.close()
            usleep(200_000)
            #expect(!peer.hasHungUp(), "100 bytes wait in the socket before the FIN")
            // The engine reads them (held again in `write`); the FIN alone is left: hung up.
            sink.release.signal()
            #expect(sink.entered.wait(timeout: .now() + 5) == .success)
            #expect(eventually { peer.hasHungUp() }, "the client closed; the engine has not read the FIN yet")
            // Let the engine go on: it reads the FIN and ends the request, and the probe is detached.
            sink.holding.update { $0 = false }
            sink.release.signal()
            #expect(log.wait(forCount: 1).count == 1)
            #expect(eventually { sink.aborted.value })
            #expect(!peer.hasHungUp(), "detached once the request completed")
        }
    }
}

/// A sink whose `write` signals `entered` and then waits for `release` (10 s at most) while `holding`,
/// keeping the engine's event thread from reading the socket further; it keeps the `PeerConnection`.
final class HoldingSink: RequestBodySink {
    let peer = Box<PeerConnection?>(nil)
    let holding = Box(true)
    let aborted = Box(false)
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    func attach(_ peer: PeerConnection) { self.peer.update { $0 = peer } }
    func write(_ piece: UnsafeRawBufferPointer) throws {
        guard holding.value else { return }
        entered.signal()
        _ = release.wait(timeout: .now() + 10)
    }
    func abort() { aborted.update { $0 = true } }
}
