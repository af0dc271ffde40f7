internal import CCrypto

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

extension Collection<UInt8> {
    /// Lowercase hex.
    public var hexString: String {
        let digits = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(count * 2)
        for b in self { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
        return s
    }
}
