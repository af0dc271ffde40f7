import Foundation
import PhotoWallTesting
import PhotoWallCore
import PhotoWallCrypto

/// Files for upload tests, written under a temporary directory.
enum TestFiles {
    /// `count` random bytes (from the system CSPRNG, fast).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for i in 0..<words.count { words[i] = g.next() }
            for i in (words.count * 8)..<count { raw[i] = UInt8(truncatingIfNeeded: g.next()) }
        }
        return out
    }

    /// Writes `bytes` to a new file in `dir`. - Returns: its path.
    @discardableResult
    static func write(_ bytes: [UInt8], named name: String, in dir: String) throws -> String {
        let path = dir + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A valid 16×16 RGB PNG padded to about `totalBytes` with a private ancillary chunk (`pwPd`,
    /// which decoders skip) of random bytes: the server can decode it quickly, and its bytes are
    /// random, so a corrupted upload can't go unnoticed.
    static func paddedPNG(totalBytes: Int) -> [UInt8] {
        let side = 16
        var png = PNGContainer.head(width: side, height: side, bitDepth: 8, colourType: 2 /* RGB */)
        // Raw scanlines (filter 0 + RGB), in one zlib stored block.
        var raw: [UInt8] = []
        for y in 0..<side {
            raw.append(0)
            for x in 0..<side { raw += [UInt8(x * 16), UInt8(y * 16), 128] }
        }
        png += PNGContainer.chunk("IDAT", PNGContainer.storedZlib(raw))
        let padding = max(0, totalBytes - png.count - 12 - 12)
        png += PNGContainer.chunk("pwPd", randomBytes(padding))
        png += PNGContainer.chunk("IEND", [])
        return png
    }

    /// Lowercase hex SHA-256 of a file's bytes.
    static func sha256(ofFile path: String) throws -> String {
        Digest.hash(.sha256, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))).hexString
    }

    static func sha256(_ bytes: some Collection<UInt8>) -> String {
        Digest.hash(.sha256, bytes).hexString
    }

}

/// Progress callbacks recorded from the upload thread, checked by the test afterwards.
final class ProgressLog: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var calls: [(sent: Int64, total: Int64, time: Double)] = []

    func record(_ sent: Int64, _ total: Int64) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock(); calls.append((sent, total, now)); lock.unlock()
    }

    var entries: [(sent: Int64, total: Int64, time: Double)] { lock.lock(); defer { lock.unlock() }; return calls }

    /// The promises of `TusClient.upload`'s progress callback, as a list of broken ones (empty when kept).
    func violations(total: Int64, minimumInterval: Double = 0.05) -> [String] {
        let e = entries
        var out: [String] = []
        guard let last = e.last else { return ["no progress callback"] }
        if last.sent != total || last.total != total { out.append("last call is \(last.sent)/\(last.total), not \(total)/\(total)") }
        if e.filter({ $0.sent == total }).count != 1 { out.append("\(e.filter { $0.sent == total }.count) calls at 100%") }
        for i in 1..<max(1, e.count) {
            if e[i].sent <= e[i - 1].sent { out.append("not increasing at call \(i): \(e[i - 1].sent) then \(e[i].sent)") }
            // The final 100% call is exempt from throttling; allow 5 ms of timer slack.
            if i < e.count - 1, e[i].time - e[i - 1].time < minimumInterval - 0.005 {
                out.append("calls \(i - 1) and \(i) only \(Int((e[i].time - e[i - 1].time) * 1000)) ms apart")
            }
        }
        if e.contains(where: { $0.total != total }) { out.append("a call with another total") }
        return out
    }
}
