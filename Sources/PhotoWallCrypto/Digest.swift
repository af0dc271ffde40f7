internal import CCrypto
import PhotoWallCore

/// Hashes, HMAC and random bytes from OpenSSL libcrypto.
public enum Crypto {
    /// `count` bytes from OpenSSL's CSPRNG (`RAND_bytes`). Traps if the CSPRNG fails (a broken system).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let rc = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(rc == 1, "RAND_bytes failed")
        return out
    }

    /// HMAC-SHA256 of `message` keyed by `key`, as 32 raw bytes (RFC 2104).
    public static func hmacSHA256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        let k = Array(key), m = Array(message)
        var out = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 32
        _ = k.withUnsafeBufferPointer { kp in
            m.withUnsafeBufferPointer { mp in
                out.withUnsafeMutableBufferPointer { op in
                    HMAC(EVP_sha256(), kp.baseAddress, Int32(kp.count), mp.baseAddress, mp.count, op.baseAddress, &len)
                }
            }
        }
        return out
    }

    /// Compares two byte strings in time independent of where they differ (`CRYPTO_memcmp`).
    public static func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        let x = Array(a), y = Array(b)
        guard x.count == y.count else { return false }
        if x.isEmpty { return true }
        return x.withUnsafeBytes { xp in y.withUnsafeBytes { yp in CRYPTO_memcmp(xp.baseAddress, yp.baseAddress, x.count) == 0 } }
    }
}

/// An incremental message digest (SHA-1, SHA-256, MD5) over OpenSSL's EVP interface.
///
/// Not Sendable: use from one thread at a time (e.g. inside one upload's body sink).
public final class Digest {
    public enum Algorithm: Sendable { case sha1, sha256, md5 }
    private let ctx: OpaquePointer
    public let algorithm: Algorithm

    public init(_ algorithm: Algorithm) {
        self.algorithm = algorithm
        ctx = EVP_MD_CTX_new()!
        let md: OpaquePointer?
        switch algorithm {
        case .sha1: md = EVP_sha1()
        case .sha256: md = EVP_sha256()
        case .md5: md = EVP_md5()
        }
        precondition(EVP_DigestInit_ex(ctx, md, nil) == 1, "EVP_DigestInit_ex failed")
    }

    deinit { EVP_MD_CTX_free(ctx) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        EVP_DigestUpdate(ctx, bytes.baseAddress, bytes.count)
    }

    public func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest; the object must not be used afterwards.
    public func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var len: UInt32 = 0
        out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(ctx, $0.baseAddress, &len) }
        return Array(out.prefix(Int(len)))
    }

    public static func hash(_ algorithm: Algorithm, _ bytes: some Collection<UInt8>) -> [UInt8] {
        let d = Digest(algorithm)
        d.update(Array(bytes))
        return d.finalize()
    }
}

@available(*, unavailable)
extension Digest: Sendable {}

/// A SHA-256 whose intermediate state can be saved and restored, so a digest over a resumable
/// upload can be continued by another process (or another server instance) chunk by chunk,
/// never re-reading the bytes already hashed.
///
/// Uses OpenSSL's `SHA256_CTX` (FIPS 180-4 state: eight 32-bit words, the bit count and the
/// unprocessed partial block). `state` is 112 bytes: `h[0..7]`, `Nl`, `Nh` as little-endian 32-bit
/// words, the 64-byte block buffer as stored, then `num` and `md_len`; it is meaningful only to
/// this layout (x86_64/arm64 OpenSSL 3), and `init?(state:)` refuses anything malformed.
/// Not Sendable: one thread at a time.
public final class ResumableSHA256 {
    private var ctx = SHA256_CTX()
    /// Size of `state` in bytes.
    public static let stateSize = 112

    public init() { SHA256_Init(&ctx) }

    /// Restores a digest saved with `state`. - Returns: nil when `state` is not a saved state.
    public init?(state: [UInt8]) {
        guard state.count == Self.stateSize else { return nil }
        func word(_ i: Int) -> UInt32 {
            UInt32(state[i]) | UInt32(state[i + 1]) << 8 | UInt32(state[i + 2]) << 16 | UInt32(state[i + 3]) << 24
        }
        withUnsafeMutableBytes(of: &ctx.h) { h in
            for i in 0..<8 { h.storeBytes(of: word(i * 4), toByteOffset: i * 4, as: UInt32.self) }
        }
        ctx.Nl = word(32); ctx.Nh = word(36)
        withUnsafeMutableBytes(of: &ctx.data) { d in
            for i in 0..<64 { d[i] = state[40 + i] }
        }
        ctx.num = word(104); ctx.md_len = word(108)
        guard ctx.num < 64, ctx.md_len == 32 else { return nil }
    }

    /// Hashes more bytes.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        SHA256_Update(&ctx, bytes.baseAddress, bytes.count)
    }

    /// The saved form of the digest so far (see the type's documentation).
    public var state: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.stateSize)
        func put(_ w: UInt32) { out.append(contentsOf: [UInt8(w & 0xff), UInt8(w >> 8 & 0xff), UInt8(w >> 16 & 0xff), UInt8(w >> 24)]) }
        withUnsafeBytes(of: ctx.h) { h in for i in 0..<8 { put(h.load(fromByteOffset: i * 4, as: UInt32.self)) } }
        put(ctx.Nl); put(ctx.Nh)
        withUnsafeBytes(of: ctx.data) { out.append(contentsOf: $0) }
        put(ctx.num); put(ctx.md_len)
        return out
    }

    /// The 32-byte digest of everything hashed (the object stays usable; further updates continue
    /// from the same state).
    public func finalize() -> [UInt8] {
        var copy = ctx
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBufferPointer { _ = SHA256_Final($0.baseAddress, &copy) }
        return out
    }
}
