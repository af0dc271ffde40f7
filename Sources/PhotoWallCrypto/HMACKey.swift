internal import CCrypto

/// HMAC-SHA256 (RFC 2104) under one fixed key, for many short messages: the key's inner and outer
/// padded blocks are hashed once, at init, and each `mac` continues from copies of those two
/// states (plain `SHA256_CTX` values, copied by assignment) — no allocation and no OpenSSL 3
/// provider fetch per message, which the one-shot `HMAC()` (`Crypto.hmacSHA256`) does each call
/// (about 30 µs apiece; the feed signs three file URLs per image).
/// Equal to `Crypto.hmacSHA256(key:message:)` for every key and message.
public struct HMACSHA256Key: Sendable {
    private let inner: SHA256_CTX
    private let outer: SHA256_CTX

    /// - Parameter key: any length (longer than the 64-byte block: hashed first, per RFC 2104 §2).
    public init(_ key: some Collection<UInt8>) {
        var k = Array(key)
        if k.count > 64 { k = Digest.hash(.sha256, k) }
        k += [UInt8](repeating: 0, count: 64 - k.count)
        var i = SHA256_CTX(), o = SHA256_CTX()
        SHA256_Init(&i); SHA256_Init(&o)
        let ipad = k.map { $0 ^ 0x36 }, opad = k.map { $0 ^ 0x5c }
        ipad.withUnsafeBytes { _ = SHA256_Update(&i, $0.baseAddress, 64) }
        opad.withUnsafeBytes { _ = SHA256_Update(&o, $0.baseAddress, 64) }
        inner = i; outer = o
    }

    /// The HMAC-SHA256 of the message `first` followed by `second` under the key, written to the first
    /// 32 bytes of `digest` (at least 32 bytes long): `mac(first + second)` without joining the parts or
    /// allocating.
    public func mac(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= 32, "an HMAC-SHA256 digest is 32 bytes")
        var i = inner, o = outer
        _ = SHA256_Update(&i, first.baseAddress, first.count)
        _ = SHA256_Update(&i, second.baseAddress, second.count)
        let d = digest.baseAddress!.assumingMemoryBound(to: UInt8.self)
        _ = SHA256_Final(d, &i)
        _ = SHA256_Update(&o, d, 32)
        _ = SHA256_Final(d, &o)
    }

    /// The 32-byte HMAC-SHA256 of `message` under the key.
    public func mac(_ message: some Collection<UInt8>) -> [UInt8] {
        var i = inner, o = outer
        var digest = [UInt8](repeating: 0, count: 32)
        let m = Array(message)
        m.withUnsafeBytes { _ = SHA256_Update(&i, $0.baseAddress, $0.count) }
        digest.withUnsafeMutableBufferPointer { _ = SHA256_Final($0.baseAddress, &i) }
        digest.withUnsafeBytes { _ = SHA256_Update(&o, $0.baseAddress, 32) }
        digest.withUnsafeMutableBufferPointer { _ = SHA256_Final($0.baseAddress, &o) }
        return digest
    }
}
