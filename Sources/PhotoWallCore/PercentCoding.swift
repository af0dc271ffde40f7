/// The non-empty `/`-separated segments of a URL path (still percent-encoded), split on its UTF-8 bytes:
/// a `/` is a separator whatever follows it (a combining mark after it does not glue it to the next
/// segment, as splitting by `Character` does), and the split costs no grapheme breaking. The one
/// splitter behind routing, the REST layer's segments and `/batch` sub-request paths.
public func pathSegments(_ path: Substring) -> [Substring] {
    path.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
}

/// `pathSegments` of a whole `String`.
public func pathSegments(_ path: String) -> [Substring] { pathSegments(path[...]) }

/// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`); invalid escapes are kept as written.
public func percentDecode(_ s: some StringProtocol, plusAsSpace: Bool = false) -> String {
    percentDecode(String(s), plusAsSpace: plusAsSpace)
}

/// `percentDecode` of a `String`: on its contiguous UTF-8, and the string itself when it has no escape
/// (the common case on every request path).
public func percentDecode(_ s: String, plusAsSpace: Bool = false) -> String {
    var text = s
    let decoded: String? = text.withUTF8 { b in
        guard b.contains(where: { $0 == 37 || (plusAsSpace && $0 == 43) }) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            if b[i] == 37, i + 2 < b.count, let h = HexBytes.nibble(b[i + 1]), let l = HexBytes.nibble(b[i + 2]) {
                out.append(h << 4 | l); i += 3
            } else if plusAsSpace && b[i] == 43 {
                out.append(32); i += 1
            } else {
                out.append(b[i]); i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
    return decoded ?? text
}

/// Percent-encodes every UTF-8 byte of `s` that `keep` refuses, as `%XX` with upper-case hex (RFC 3986
/// §2.1). The one encoder behind file URLs (`encodeURIComponent`'s set) and `Content-Disposition`
/// `filename*` (RFC 8187's `attr-char` set).
///
/// Works on the contiguous UTF-8 bytes (not through the generic collection, which cost a file URL
/// several microseconds), and returns the string itself when no byte needs escaping.
public func percentEncode(_ s: some StringProtocol, keeping keep: (UInt8) -> Bool) -> String {
    percentEncode(String(s), keeping: keep)
}

/// `percentEncode` of a `String` (no generic conversion on the way).
public func percentEncode(_ s: String, keeping keep: (UInt8) -> Bool) -> String {
    var text = s
    let encoded: String? = text.withUTF8 { u in
        var escaped = 0
        for b in u where !keep(b) { escaped += 1 }
        guard escaped > 0 else { return nil }
        let hex: StaticString = "0123456789ABCDEF"
        return String(unsafeUninitializedCapacity: u.count + 2 * escaped) { out in
            var j = 0
            for b in u {
                if keep(b) {
                    out[j] = b
                    j += 1
                } else {
                    out[j] = UInt8(ascii: "%")
                    out[j + 1] = hex.utf8Start[Int(b >> 4)]
                    out[j + 2] = hex.utf8Start[Int(b & 15)]
                    j += 3
                }
            }
            return j
        }
    }
    return encoded ?? text
}

/// RFC 3986 §2.3 unreserved bytes `A–Z a–z 0–9 - . _ ~`: what `percentEncode(_:keeping:)` keeps for a
/// query component, a SigV4 `UriEncode` or a form value.
public func isUnreservedURIByte(_ b: UInt8) -> Bool {
    switch b {
    case 65...90, 97...122, 48...57, 45, 46, 95, 126: return true
    default: return false
    }
}

/// `name=value&…` in the given order, each name and value percent-encoded but for unreserved bytes
/// (so `+`, `&`, `=` and spaces inside a value survive any form or query decoder).
public func percentEncodedQuery(_ pairs: [(String, String)]) -> String {
    pairs.map { percentEncode($0.0, keeping: isUnreservedURIByte) + "=" + percentEncode($0.1, keeping: isUnreservedURIByte) }
        .joined(separator: "&")
}
