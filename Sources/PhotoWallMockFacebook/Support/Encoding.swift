// Small text encodings the mock needs: hex, base64url, URL query components, HTML escaping.
// No Foundation: these are a few lines each and keep the module light.

enum Encoding {
    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Lower-case hex of `bytes` (two characters per byte).
    static func hex(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 4648 §5 base64url without padding.
    static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(base64URLAlphabet[Int(b0 >> 2)])
            out.append(base64URLAlphabet[Int((b0 & 3) << 4 | b1 >> 4)])
            if i + 1 < bytes.count { out.append(base64URLAlphabet[Int((b1 & 15) << 2 | b2 >> 6)]) }
            if i + 2 < bytes.count { out.append(base64URLAlphabet[Int(b2 & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded (or padded) base64url; nil on any other character.
    static func base64URLDecode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for c in text.utf8 where c != UInt8(ascii: "=") {
            guard let v = base64URLAlphabet.firstIndex(of: c) else { return nil }
            values.append(UInt8(v))
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
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

    /// Percent-encodes a query-string component: everything but RFC 3986 unreserved characters.
    static func queryComponent(_ text: String) -> String {
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(b)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(Array("0123456789ABCDEF".utf8)[Int(b >> 4)])
                out.append(Array("0123456789ABCDEF".utf8)[Int(b & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `a=1&b=2`, each name and value percent-encoded, in the given order.
    static func query(_ pairs: [(String, String)]) -> String {
        pairs.map { queryComponent($0.0) + "=" + queryComponent($0.1) }.joined(separator: "&")
    }

    /// Escapes `& < > " '` for HTML text and attribute values.
    static func html(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(ch)
            }
        }
        return out
    }
}
