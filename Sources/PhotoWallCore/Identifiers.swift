/// Random identifiers in Parse's formats, drawn from the system CSPRNG (`getrandom(2)` on Linux).
public enum ParseIdentifier {
    static let alphanumerics: [Character] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// `length` characters from `[A-Za-z0-9]`: 10 for an `objectId`, 25 for an authData username.
    public static func alphanumeric(_ length: Int = 10) -> String {
        var rng = SystemRandomNumberGenerator()
        var out = ""
        out.reserveCapacity(length)
        var word: UInt64 = 0, bitsLeft = 0
        while out.count < length {
            if bitsLeft < 6 { word = rng.next(); bitsLeft = 64 }  // one getrandom(2) per ~10 characters
            let v = Int(word & 63)
            word >>= 6; bitsLeft -= 6
            if v < alphanumerics.count { out.append(alphanumerics[v]) }  // rejection keeps it uniform
        }
        return out
    }

    /// `2 * byteCount` lowercase hex digits; 16 bytes give the 32 hex of file names and session tokens.
    public static func hex(byteCount: Int = 16) -> String {
        var rng = SystemRandomNumberGenerator()
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: byteCount * 2) { out in
            var word: UInt64 = 0
            for i in 0..<byteCount {
                if i % 8 == 0 { word = rng.next() }  // one getrandom(2) per 8 bytes
                let b = UInt8(truncatingIfNeeded: word >> (8 * UInt64(i % 8)))
                out[2 * i] = digits.utf8Start[Int(b >> 4)]
                out[2 * i + 1] = digits.utf8Start[Int(b & 15)]
            }
            return byteCount * 2
        }
    }
}
