/// Lowercase hexadecimal (RFC 4648 §8, "base16") for digests, ids, SigV4 signatures and saved states.
/// The one hex codec of the project: encode with `hexString`, decode with `HexBytes.decode`.
extension Collection<UInt8> {
    /// Lowercase hex, two digits per byte (`[0xde, 0xad]` → `"dead"`; no bytes → `""`).
    /// Inlinable so each caller gets it specialized for its collection (unspecialized, every byte went
    /// through the generic witnesses: 60% of a feed page's URL signing).
    @inlinable
    public var hexString: String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: count * 2) { out in
            var i = 0
            for b in self {
                out[i] = digits.utf8Start[Int(b >> 4)]
                out[i + 1] = digits.utf8Start[Int(b & 15)]
                i += 2
            }
            return i
        }
    }

    /// `hexString`'s digits appended to `out` as UTF-8, without a `String` (the feed's URL signatures
    /// are written straight into its page).
    @inlinable
    public func appendHex(to out: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        for b in self {
            out.append(digits.utf8Start[Int(b >> 4)])
            out.append(digits.utf8Start[Int(b & 15)])
        }
    }
}

public enum HexBytes {
    /// Bytes from hex text (either case). - Returns: nil for an odd length or a non-hex digit.
    public static func decode(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
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

    /// The value of one hex digit (`0-9`, `a-f`, `A-F`), nil for any other byte.
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
