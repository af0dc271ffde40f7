import PhotoWallCore

// Small text encodings the mock needs beyond PhotoWallCore's hex, Base64 and percent-encoding: URL
// query strings, HTML escaping. No Foundation: these are a few lines each and keep the module light.

enum Encoding {
    /// Percent-encodes a query-string component: everything but RFC 3986 unreserved characters.
    static func queryComponent(_ text: String) -> String { percentEncode(text, keeping: isUnreservedURIByte) }

    /// `a=1&b=2`, each name and value percent-encoded, in the given order.
    static func query(_ pairs: [(String, String)]) -> String { percentEncodedQuery(pairs) }

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
