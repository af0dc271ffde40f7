/// Lowercase hexadecimal for digests, ids and saved states.
extension Collection<UInt8> {
    /// Lowercase hex, two digits per byte.
    public var hexString: String {
        let digits = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(count * 2)
        for b in self { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
        return s
    }
}

public enum HexBytes {
    /// Bytes from hex text (either case). - Returns: nil for an odd length or a non-hex digit.
    public static func decode(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}
