/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Strict where Foundation's decoder is lenient (it accepts `[1,]`); nesting is capped at
/// `maxDepth` so hostile input can't exhaust the stack; strings must be valid UTF-8.
/// Object keys that repeat keep the last value (as JavaScript does).
struct JSONParser {
    static let maxDepth = 256

    struct Failure: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSON {
        var p = JSONParser(buffer)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == buffer.count else { throw Failure() }
        return v
    }

    mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    mutating func expect(_ literal: StaticString) throws(Failure) {
        let n = literal.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw Failure() }
        let p = literal.utf8Start
        for k in 0..<n where bytes[i + k] != p[k] { throw Failure() }
        i += n
    }

    mutating func value(depth: Int) throws(Failure) -> JSON {
        guard i < bytes.count, depth < Self.maxDepth else { throw Failure() }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return .number(try number())
        }
    }

    mutating func object(depth: Int) throws(Failure) -> JSON {
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object([:]) }
        // Room for 6 members (8 buckets) at once: stored objects are mostly small (a pointer, an ACL,
        // a comment), and growing from empty rehashed them 2–3 times (25% of a parse). (The initializer
        // is specialized here; `reserveCapacity` was not and looked up generic metadata per object.)
        var o = [String: JSON](minimumCapacity: 6)
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Failure() }
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw Failure() }
            i += 1
            skipSpace()
            o[key] = try value(depth: depth + 1)
            skipSpace()
            guard i < bytes.count else { throw Failure() }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
            throw Failure()
        }
    }

    mutating func array(depth: Int) throws(Failure) -> JSON {
        i += 1
        var a: [JSON] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
        while true {
            skipSpace()
            a.append(try value(depth: depth + 1))
            skipSpace()
            guard i < bytes.count else { throw Failure() }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
            throw Failure()
        }
    }

    mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 <= bytes.count else { throw Failure() }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 65...70: d = UInt32(c - 55)
            case 97...102: d = UInt32(c - 87)
            default: throw Failure()
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    /// A string from UTF-8 bytes, or nil when they are not valid UTF-8. ASCII (the common case)
    /// takes the fast path: checked here, then decoded without the generic validator.
    static func makeString(_ u: UnsafeBufferPointer<UInt8>) -> String? {
        var ascii = true
        for b in u where b >= 0x80 { ascii = false; break }
        if ascii { return String(decoding: u, as: UTF8.self) }
        return String(validating: u, as: UTF8.self)
    }

    mutating func string() throws(Failure) -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                let s = Self.makeString(UnsafeBufferPointer(rebasing: bytes[start..<i]))
                i += 1
                guard let s else { throw Failure() }
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw Failure() }
            i += 1
        }
        var out = Array(bytes[start..<i])
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                guard let s = out.withUnsafeBufferPointer({ Self.makeString($0) }) else { throw Failure() }
                return s
            }
            if c < 0x20 { throw Failure() }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw Failure() }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { throw Failure() }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw Failure() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw Failure()
                }
                guard let u = Unicode.Scalar(scalar) else { throw Failure() }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw Failure()
            }
        }
        throw Failure()
    }

    mutating func number() throws(Failure) -> Double {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { throw Failure() }
        func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else if isDigit(bytes[i]) {
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        } else {
            throw Failure()
        }
        var integral = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            integral = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw Failure() }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            integral = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw Failure() }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<i])
        if integral, text.count <= 15 {
            var v = 0
            var neg = false
            for c in text { if c == UInt8(ascii: "-") { neg = true } else { v = v * 10 + Int(c - 48) } }
            return Double(neg ? -v : v)
        }
        guard let d = Double(String(decoding: text, as: UTF8.self)), d.isFinite else { throw Failure() }
        return d
    }
}
