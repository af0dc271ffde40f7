import Foundation
import PhotoWallTesting
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
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let side = 16
        png += chunk("IHDR", be32(UInt32(side)) + be32(UInt32(side)) + [8, 2, 0, 0, 0])
        // Raw scanlines (filter 0 + RGB), in one zlib stored block.
        var raw: [UInt8] = []
        for y in 0..<side {
            raw.append(0)
            for x in 0..<side { raw += [UInt8(x * 16), UInt8(y * 16), 128] }
        }
        let n = UInt16(raw.count)
        png += chunk("IDAT", [0x78, 0x01, 0x01, UInt8(n & 255), UInt8(n >> 8), UInt8(~n & 255), UInt8(~n >> 8)] + raw + be32(adler32(raw)))
        let padding = max(0, totalBytes - png.count - 12 - 12)
        png += chunk("pwPd", randomBytes(padding))
        png += chunk("IEND", [])
        return png
    }

    /// Lowercase hex SHA-256 of a file's bytes.
    static func sha256(ofFile path: String) throws -> String {
        Digest.hash(.sha256, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))).hexString
    }

    static func sha256(_ bytes: some Collection<UInt8>) -> String {
        Digest.hash(.sha256, bytes).hexString
    }

    // MARK: PNG pieces

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typeAndData + be32(crc32(typeAndData))
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        let table = crcTable
        var c: UInt32 = 0xFFFF_FFFF
        bytes.withUnsafeBufferPointer { p in
            for b in p { c = table[Int((c ^ UInt32(b)) & 255)] ^ (c >> 8) }
        }
        return ~c
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for x in bytes { a = (a + UInt32(x)) % 65521; b = (b + a) % 65521 }
        return b << 16 | a
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
