internal import CXCrypt
#if canImport(Glibc)
import Glibc
#endif

/// bcrypt (`$2b$`) password hashing through libxcrypt's `crypt_r`, the format parse-server stores
/// in `_hashed_password`, so databases can move between the two.
public enum PasswordHasher {
    /// bcrypt cost factor (2^cost rounds). 10 is parse-server's (bcryptjs) default.
    public static let defaultCost = 10

    /// Hashes `password` with a fresh random salt.
    /// - Returns: a 60-character `$2b$10$…` string.
    /// - Throws: `PasswordHasherError` if libxcrypt refuses (never for ordinary input).
    public static func hash(_ password: String, cost: Int = defaultCost) throws -> String {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        let random = Crypto.randomBytes(16)
        let ok = random.withUnsafeBufferPointer { rp in
            rp.withMemoryRebound(to: CChar.self) { r in
                crypt_gensalt_rn("$2b$", UInt(cost), r.baseAddress, Int32(r.count), &salt, Int32(salt.count))
            }
        }
        guard ok != nil else { throw PasswordHasherError(message: "crypt_gensalt_rn failed") }
        let setting = String(decoding: salt.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return try crypt(password, setting: setting)
    }

    /// Checks `password` against a stored hash in constant time.
    public static func verify(_ password: String, hash: String) -> Bool {
        guard hash.hasPrefix("$2"), let computed = try? crypt(password, setting: hash) else { return false }
        return Crypto.constantTimeEquals(Array(computed.utf8), Array(hash.utf8))
    }

    static func crypt(_ password: String, setting: String) throws -> String {
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer {
            memset(data, 0, MemoryLayout<crypt_data>.size)
            data.deallocate()
        }
        memset(data, 0, MemoryLayout<crypt_data>.size)
        guard let out = crypt_r(password, setting, data) else { throw PasswordHasherError(message: "crypt_r failed") }
        let s = String(cString: out)
        guard !s.hasPrefix("*") else { throw PasswordHasherError(message: "invalid hash setting") }
        return s
    }
}

public struct PasswordHasherError: Error, Sendable {
    public var message: String
}
