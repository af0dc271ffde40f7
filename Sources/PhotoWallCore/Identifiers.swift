/// Random identifiers in Parse's formats, drawn from the system CSPRNG (`getrandom(2)` on Linux).
public enum ParseIdentifier {
    static let alphanumerics: [Character] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// `length` characters from `[A-Za-z0-9]`: 10 for an `objectId`, 25 for an authData username.
    public static func alphanumeric(_ length: Int = 10) -> String {
        var rng = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphanumerics[Int(rng.next(upperBound: UInt64(alphanumerics.count)))] })
    }

    /// `2 * byteCount` lowercase hex digits; 16 bytes give the 32 hex of file names and session tokens.
    public static func hex(byteCount: Int = 16) -> String {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(byteCount * 2)
        for _ in 0..<byteCount {
            let b = UInt8.random(in: 0...255, using: &rng)
            s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)])
        }
        return s
    }
}
