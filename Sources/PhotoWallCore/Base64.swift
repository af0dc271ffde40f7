/// Base64 (RFC 4648 §4, alphabet `A–Z a–z 0–9 + /`, `=` padding) and base64url (§5, `-` and `_`
/// instead of `+` and `/`): tus `Upload-Metadata`/`Upload-Checksum`, HTTP Basic credentials, feed
/// cursors, the mock provider's tokens and signed requests. The one Base64 codec of the project.
public enum Base64 {
    static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Standard base64 with `=` padding (`"foob"` → `"Zm9vYg=="`).
    public static func encode(_ bytes: some Collection<UInt8>) -> String { encode(Array(bytes), alphabet: standard, pad: true) }

    /// base64url without padding (`"foob"` → `"Zm9vYg"`), as JWTs and Facebook's signed requests use it.
    public static func urlEncode(_ bytes: some Collection<UInt8>) -> String { encode(Array(bytes), alphabet: url, pad: false) }

    /// Decodes standard base64. The length must be a multiple of 4 with `=` padding only at the end.
    /// - Parameter ignoringUnknownCharacters: skip bytes outside the alphabet (white space, line
    ///   breaks) first, as Foundation's `.ignoreUnknownCharacters` does.
    /// - Returns: nil for text that is not base64.
    public static func decode(_ text: some StringProtocol, ignoringUnknownCharacters: Bool = false) -> [UInt8]? {
        var u = Array(text.utf8)
        if ignoringUnknownCharacters { u.removeAll { $0 != 61 && value(of: $0, in: standard) == nil } }
        guard u.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 2, padding < u.count, u[u.count - 1 - padding] == 61 { padding += 1 }
        return decodeValues(u.dropLast(padding), alphabet: standard)
    }

    /// Decodes base64url, padded or not. - Returns: nil for any byte outside the alphabet or a
    /// length that no byte string encodes to.
    public static func urlDecode(_ text: some StringProtocol) -> [UInt8]? {
        var u = Array(text.utf8)
        if u.count % 4 == 0 {
            var padding = 0
            while padding < 2, padding < u.count, u[u.count - 1 - padding] == 61 { padding += 1 }
            u.removeLast(padding)
        }
        return decodeValues(u[...], alphabet: url)
    }

    static func encode(_ b: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((b.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= b.count {
            let v = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
            out += [alphabet[Int(v >> 18 & 63)], alphabet[Int(v >> 12 & 63)], alphabet[Int(v >> 6 & 63)], alphabet[Int(v & 63)]]
            i += 3
        }
        switch b.count - i {
        case 1:
            let v = UInt32(b[i]) << 16
            out += [alphabet[Int(v >> 18 & 63)], alphabet[Int(v >> 12 & 63)]]
            if pad { out += [61, 61] }
        case 2:
            let v = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8
            out += [alphabet[Int(v >> 18 & 63)], alphabet[Int(v >> 12 & 63)], alphabet[Int(v >> 6 & 63)]]
            if pad { out.append(61) }
        default: break
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func value(of c: UInt8, in alphabet: [UInt8]) -> UInt8? {
        switch c {
        case 65...90: return c - 65
        case 97...122: return c - 71
        case 48...57: return c + 4
        default:
            if c == alphabet[62] { return 62 }
            if c == alphabet[63] { return 63 }
            return nil
        }
    }

    /// Unpadded characters to bytes; nil for a foreign byte or a length of 1 mod 4.
    static func decodeValues(_ u: ArraySlice<UInt8>, alphabet: [UInt8]) -> [UInt8]? {
        guard u.count % 4 != 1 else { return nil }
        var values: [UInt8] = []
        values.reserveCapacity(u.count)
        for c in u {
            guard let v = value(of: c, in: alphabet) else { return nil }
            values.append(v)
        }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i < values.count {
            let v0 = values[i], v1 = values[i + 1]
            out.append(v0 << 2 | v1 >> 4)
            if i + 2 < values.count { out.append((v1 & 15) << 4 | values[i + 2] >> 2) }
            if i + 3 < values.count { out.append((values[i + 2] & 3) << 6 | values[i + 3]) }
            i += 4
        }
        return out
    }
}
