#if canImport(Glibc)
import Glibc
#endif

/// Reading a JSON object text member by member without decoding its values: the stored-row renderer
/// (`ObjectService`) copies each stored value's bytes straight into the response, decoding only the
/// few that change on the way out.
extension JSON {
    /// Calls `body` with each member of the JSON object in `text` (UTF-8): the key's bytes between its
    /// quotes (escapes as written) and the value's bytes, in order.
    ///
    /// - Returns: false when `text` is not one JSON object (members before the fault were passed to
    ///   `body`). Values are delimited, not validated: `text` must come from a JSON writer (a stored row).
    public static func forEachMember(ofObjectText text: UnsafeBufferPointer<UInt8>,
                                     _ body: (_ key: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        var i = skipSpace(text, 0)
        guard i < text.count, text[i] == UInt8(ascii: "{") else { return false }
        i = skipSpace(text, i + 1)
        if i < text.count, text[i] == UInt8(ascii: "}") { return skipSpace(text, i + 1) == text.count }
        while true {
            guard i < text.count, text[i] == UInt8(ascii: "\""), let keyEnd = endOfString(text, i) else { return false }
            let key = UnsafeBufferPointer(rebasing: text[(i + 1)..<(keyEnd - 1)])
            i = skipSpace(text, keyEnd)
            guard i < text.count, text[i] == UInt8(ascii: ":") else { return false }
            i = skipSpace(text, i + 1)
            guard let valueEnd = endOfValue(text, i) else { return false }
            body(key, UnsafeBufferPointer(rebasing: text[i..<valueEnd]))
            i = skipSpace(text, valueEnd)
            guard i < text.count else { return false }
            if text[i] == UInt8(ascii: ",") { i = skipSpace(text, i + 1); continue }
            guard text[i] == UInt8(ascii: "}") else { return false }
            return skipSpace(text, i + 1) == text.count
        }
    }

    private static func skipSpace(_ t: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var i = start
        while i < t.count, t[i] == 0x20 || t[i] == 0x09 || t[i] == 0x0A || t[i] == 0x0D { i += 1 }
        return i
    }

    /// The index after the closing quote of the string starting at `start` (a quote).
    private static func endOfString(_ t: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var i = start + 1
        while i < t.count {
            // Eight bytes at a time: the lowest byte of the word that is a quote or a backslash is found
            // from the word's match mask, so a string ends without a byte loop over its last word.
            if i + 8 <= t.count {
                // Read as little-endian, so the word's first byte is its lowest on any machine.
                let word = UInt64(littleEndian: UnsafeRawPointer(t.baseAddress! + i).loadUnaligned(as: UInt64.self))
                let found = matchMask(word, UInt8(ascii: "\"")) | matchMask(word, UInt8(ascii: "\\"))
                if found == 0 { i += 8; continue }
                i += found.trailingZeroBitCount / 8
            }
            switch t[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""): return i + 1
            default: i += 1
            }
        }
        return nil
    }

    /// Whether `bytes` hold a quote or a backslash (eight bytes at a time).
    public static func containsQuoteOrBackslash(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while i + 8 <= bytes.count {
            let word = UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)
            if matchMask(word, UInt8(ascii: "\"")) | matchMask(word, UInt8(ascii: "\\")) != 0 { return true }
            i += 8
        }
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "\\") { return true }
            i += 1
        }
        return false
    }

    /// The bytes of `word` (read little-endian: the first byte lowest) equal to `byte`, each marked by its top
    /// bit (the classic has-a-zero-byte test on `word ^ byte…`). A byte above a match may be marked
    /// falsely (a borrow), never one below it: the lowest mark is exact, and the mask is zero only when
    /// no byte matches.
    @inline(__always)
    private static func matchMask(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let x = word ^ (0x0101_0101_0101_0101 &* UInt64(byte))
        return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
    }

    /// The index after the value starting at `start`.
    private static func endOfValue(_ t: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        guard start < t.count else { return nil }
        switch t[start] {
        case UInt8(ascii: "\""):
            return endOfString(t, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0, i = start
            while i < t.count {
                switch t[i] {
                case UInt8(ascii: "\""):
                    guard let end = endOfString(t, i) else { return nil }
                    i = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default:
                    break
                }
                i += 1
            }
            return nil
        default:
            var i = start
            while i < t.count {
                switch t[i] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
                    return i > start ? i : nil
                default:
                    i += 1
                }
            }
            return i > start ? i : nil
        }
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether these bytes are `other`'s (`memcmp`): a stored member's key or value against a name.
    @inlinable
    public func bytesEqual(_ other: UnsafeBufferPointer<UInt8>) -> Bool {
        count == other.count && (count == 0 || memcmp(baseAddress!, other.baseAddress!, count) == 0)
    }

    /// Whether these bytes are `other`'s UTF-8.
    @inlinable
    public func bytesEqual(_ other: StaticString) -> Bool {
        bytesEqual(UnsafeBufferPointer(start: other.utf8Start, count: other.utf8CodeUnitCount))
    }
}
