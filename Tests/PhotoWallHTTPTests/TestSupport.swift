import PhotoWallCore
@testable import PhotoWallHTTP
import PhotoWallTesting
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Starts a server on 127.0.0.1:0 with quiet logging, runs `body`, and shuts the server down (also on
/// failure). `AccessRecorder` sees every completed request.
func withServer<T>(_ router: Router, configure: (inout HTTPServer.Configuration) -> Void = { _ in },
                   _ body: (_ server: HTTPServer, _ port: Int, _ log: AccessRecorder) throws -> T) throws -> T {
    var configuration = HTTPServer.Configuration(logger: Logger(label: "http-test", level: .warning))
    configuration.eventThreads = 2
    configuration.workerThreads = 8
    let recorder = AccessRecorder()
    configuration.onRequestCompleted = { recorder.append($0) }
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, router: router)
    let port = try server.start()
    defer { server.shutdown(gracePeriodSeconds: 2) }
    return try body(server, port, recorder)
}

/// Collects `AccessLogEntry` values from `Configuration.onRequestCompleted`.
final class AccessRecorder: Sendable {
    private let entries = Mutex<[AccessLogEntry]>([])

    func append(_ entry: AccessLogEntry) { entries.withLock { $0.append(entry) } }

    var all: [AccessLogEntry] { entries.withLock { $0 } }

    /// Waits up to `timeoutSeconds` until at least `count` entries arrived; returns them all.
    @discardableResult
    func wait(forCount count: Int, timeoutSeconds: Double = 5) -> [AccessLogEntry] {
        let deadline = monotonicSeconds() + timeoutSeconds
        while monotonicSeconds() < deadline {
            let now = all
            if now.count >= count { return now }
            usleep(2_000)
        }
        return all
    }
}

/// A thread-safe counter/box for values observed inside handlers.
final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update<R: Sendable>(_ body: @Sendable (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}

/// Polls `condition` every 2 ms for up to `timeoutSeconds`.
func eventually(timeoutSeconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeoutSeconds
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// Runs `body` on a new OS thread (not the Swift cooperative pool, which blocking client calls would stall).
final class TestThread: Sendable {
    private let done = Mutex(false)
    private let start: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        start = body
        let box = Unmanaged.passRetained(self).toOpaque() // released by the thread
        var thread = pthread_t()
        precondition(pthread_create(&thread, nil, testThreadMain, box) == 0)
        pthread_detach(thread)
    }

    fileprivate func run() {
        start()
        done.withLock { $0 = true }
    }

    /// Waits until the body returned. - Returns: false on timeout.
    @discardableResult
    func join(timeoutSeconds: Double = 10) -> Bool { eventually(timeoutSeconds: timeoutSeconds) { done.withLock { $0 } } }
}

private func testThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    Unmanaged<TestThread>.fromOpaque(argument!).takeRetainedValue().run()
    return nil
}

/// Streams a request body into a file; counts pieces, aborts and finishes.
final class FileSink: RequestBodySink, Sendable {
    struct Stats: Sendable {
        var writes = 0
        var bytes = 0
        var largestPiece = 0
        var aborts = 0
    }

    let path: String
    private let fd: Int32
    let stats = Mutex(Stats())

    init(path: String) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0, "cannot create \(path)")
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            guard n > 0 else { throw TestHTTPClientError("write failed", systemError: errno) }
            offset += n
        }
        stats.withLock {
            $0.writes += 1
            $0.bytes += bytes.count
            $0.largestPiece = max($0.largestPiece, bytes.count)
        }
    }

    /// Removes the partial file.
    func abort() {
        stats.withLock { $0.aborts += 1 }
        close(fd)
        unlink(path)
    }

    /// Flushes and closes; returns the byte count.
    func finish() -> Int {
        fsync(fd)
        close(fd)
        return stats.withLock { $0.bytes }
    }

    var snapshot: Stats { stats.withLock { $0 } }
}

/// Deterministic test bytes: `count` bytes of a xorshift stream seeded by `seed`.
func testBytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    var out = [UInt8](repeating: 0, count: count)
    out.withUnsafeMutableBytes { raw in
        var i = 0
        while i < count {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            var word = state
            for _ in 0..<8 where i < count {
                raw[i] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                i += 1
            }
        }
    }
    return out
}

/// Reads a whole file (nil if missing).
func readFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    fstat(fd, &info)
    var out = [UInt8](repeating: 0, count: Int(info.st_size))
    var offset = 0
    while offset < out.count {
        let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 { break }
        offset += n
    }
    return out
}

/// Byte equality via memcmp (fast in debug builds).
func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.count == b.count && (a.isEmpty || a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } })
}

func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// True for 16 lowercase hex digits.
func isGeneratedRequestID(_ id: String?) -> Bool {
    guard let id, id.utf8.count == 16 else { return false }
    return id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
}
