import Foundation
import PhotoWallCore
import PhotoWallTesting
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 (random port) that forwards to `upstreamPort` and cuts connections
/// at random points, the way a phone's connection drops.
///
/// Each of the first `cuts` connections is cut once it has carried a random number of
/// client→server bytes in `minBytes...maxBytes`: either in the middle of the request (the rest
/// never arrives), or — with probability `responseCutShare` — by dropping the server's next
/// answer after that point (the server did the work, the client never hears of it). Later
/// connections pass through untouched, so an upload always ends. The random seed is in `seed`
/// (for reproducing a failure).
final class CuttingProxy: @unchecked Sendable {
    // @unchecked Sendable: mutable state (`remainingCuts`, `sockets`, `rng`, counters) is only
    // touched under `lock`; `listenFD`, `port` and the settings are immutable after init.
    let port: Int
    /// Where connections go; settable later (a server whose public URL names this proxy starts after it).
    var upstreamPort: Int {
        get { lock.lock(); defer { lock.unlock() }; return upstream }
        set { lock.lock(); upstream = newValue; lock.unlock() }
    }
    private var upstream: Int
    let minBytes: Int
    let maxBytes: Int
    let responseCutShare: Double
    let seed: UInt64
    private let listenFD: Int32
    private let lock = NSLock()
    private var remainingCuts: Int
    private var rng: SplitMix64
    private var sockets: Set<Int32> = []
    private var stopped = false
    private(set) var connections = 0
    private(set) var cutsMade = 0

    init(upstreamPort: Int = 0, cuts: Int, minBytes: Int, maxBytes: Int, responseCutShare: Double = 0.3,
         seed: UInt64 = UInt64.random(in: 1...UInt64.max)) throws {
        upstream = upstreamPort; self.minBytes = minBytes; self.maxBytes = maxBytes
        self.responseCutShare = responseCutShare; self.seed = seed
        remainingCuts = cuts
        rng = SplitMix64(seed: seed)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestServerError(description: "proxy socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = Self.loopback(port: 0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, len) == 0 && listen(fd, 128) == 0 && getsockname(fd, sa, &len) == 0
            }
        }
        guard ok else { Glibc.close(fd); throw TestServerError(description: "proxy bind/listen: errno \(errno)") }
        listenFD = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
        let t = Thread { [self] in acceptLoop() }
        t.name = "proxy-accept"
        t.start()
    }

    deinit { stop() }

    /// Stops accepting and cuts every open connection.
    func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        let open = sockets
        lock.unlock()
        if wasStopped { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
        Glibc.close(listenFD)
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    var summary: String { lock.lock(); defer { lock.unlock() }; return "\(connections) connections, \(cutsMade) cut (seed \(seed))" }

    // MARK: -

    enum Plan { case pass, cutRequest(after: Int), dropResponse(after: Int) }

    private func acceptLoop() {
        while true {
            let client = accept(listenFD, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return  // closed by stop()
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var addr = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else {
                Glibc.close(upstream)
                Glibc.close(client)
                continue
            }
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(upstream, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            lock.lock()
            connections += 1
            var plan = Plan.pass
            if remainingCuts > 0 {
                remainingCuts -= 1
                let at = minBytes + Int(rng.next() % UInt64(max(1, maxBytes - minBytes + 1)))
                plan = Double(rng.next() % 1000) / 1000 < responseCutShare ? .dropResponse(after: at) : .cutRequest(after: at)
            }
            sockets.insert(client)
            sockets.insert(upstream)
            let isStopped = stopped
            lock.unlock()
            if isStopped { shutdown(client, Int32(SHUT_RDWR)); shutdown(upstream, Int32(SHUT_RDWR)) }
            let link = Link(client: client, upstream: upstream, plan: plan, proxy: self)
            let up = Thread { link.pumpUp() }
            let down = Thread { link.pumpDown() }
            up.start()
            down.start()
        }
    }

    fileprivate func cut(_ link: Link) {
        lock.lock()
        cutsMade += 1
        lock.unlock()
        // RST, not FIN: SO_LINGER 0 then shutdown, like a dropped radio link seen by the kernel.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(link.client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        shutdown(link.client, Int32(SHUT_RDWR))
        shutdown(link.upstream, Int32(SHUT_RDWR))
    }

    fileprivate func finished(_ link: Link) {
        lock.lock()
        sockets.remove(link.client)
        sockets.remove(link.upstream)
        lock.unlock()
        Glibc.close(link.client)
        Glibc.close(link.upstream)
    }

    static func loopback(port: Int) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return a
    }
}

/// One proxied connection: two pump threads; the second to finish closes both sockets.
private final class Link: @unchecked Sendable {
    // @unchecked Sendable: `requestBytes` and `done` are only touched under `lock`.
    let client: Int32
    let upstream: Int32
    let plan: CuttingProxy.Plan
    let proxy: CuttingProxy  // strong: the proxy outlives its links (the test calls stop())
    private let lock = NSLock()
    private var requestBytes = 0
    private var done = 0
    private var wasCut = false

    init(client: Int32, upstream: Int32, plan: CuttingProxy.Plan, proxy: CuttingProxy) {
        self.client = client; self.upstream = upstream; self.plan = plan; self.proxy = proxy
    }

    /// client → server, cutting mid-request when planned.
    func pumpUp() {
        var buf = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
            var forward = n
            var cutNow = false
            lock.lock()
            if case .cutRequest(let after) = plan, !wasCut, requestBytes + n >= after {
                forward = max(0, after - requestBytes)
                cutNow = true
                wasCut = true
            }
            requestBytes += forward
            lock.unlock()
            if forward > 0, !sendAll(upstream, buf, forward) { break }
            if cutNow { proxy.cut(self); break }
        }
        shutdown(upstream, Int32(SHUT_WR))
        end()
    }

    /// server → client, dropping the answer after the planned point when planned.
    func pumpDown() {
        var buf = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(upstream, $0.baseAddress, $0.count, 0) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
            lock.lock()
            var drop = false
            if case .dropResponse(let after) = plan, !wasCut, requestBytes >= after {
                drop = true
                wasCut = true
            }
            lock.unlock()
            if drop { proxy.cut(self); break }
            if !sendAll(client, buf, n) { break }
        }
        shutdown(client, Int32(SHUT_WR))
        end()
    }

    private func end() {
        lock.lock()
        done += 1
        let last = done == 2
        lock.unlock()
        if last { proxy.finished(self) }
    }

    private func sendAll(_ fd: Int32, _ buf: [UInt8], _ count: Int) -> Bool {
        var off = 0
        while off < count {
            let n = buf.withUnsafeBytes { send(fd, $0.baseAddress! + off, count - off, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            off += n
        }
        return true
    }
}
