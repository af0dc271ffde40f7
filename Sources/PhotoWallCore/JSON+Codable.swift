import Foundation

extension JSON: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null; return }
        if let b = try? c.decode(Bool.self) { self = .bool(b); return }
        if let n = try? c.decode(Double.self) { self = .number(n); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        if let a = try? c.decode([JSON].self) { self = .array(a); return }
        self = .object(try c.decode([String: JSON].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

extension JSON {
    /// Parses UTF-8 JSON text strictly (RFC 8259), nesting at most 256 deep.
    ///
    /// - Throws: `ParseError` 107 (`invalidJSON`) when the text is not valid JSON.
    public static func parse(_ data: some Collection<UInt8>) throws(ParseError) -> JSON {
        let result: JSON? = data.withContiguousStorageIfAvailable { try? JSONParser.parse($0) }
            ?? Array(data).withUnsafeBufferPointer { try? JSONParser.parse($0) }
        guard let result else { throw ParseError(.invalidJSON, "Invalid JSON.") }
        return result
    }

    /// `parse(_:)` for text already in contiguous memory (a stored row's member): the same result,
    /// without the generic collection's indirection, which a caller in another module pays per call.
    /// A plain ASCII string (no escape, no control byte) becomes `.string` without the parser.
    /// - Throws: `ParseError` 107 (`invalidJSON`) when the text is not valid JSON.
    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(ParseError) -> JSON {
        if buffer.count >= 2, buffer[0] == UInt8(ascii: "\""), buffer[buffer.count - 1] == UInt8(ascii: "\"") {
            let inner = UnsafeBufferPointer(rebasing: buffer[1..<(buffer.count - 1)])
            // ASCII only, so the bytes are valid UTF-8 as they are; anything else is the parser's to
            // validate (or refuse).
            if !inner.contains(where: { needsEscape($0) || $0 >= 0x80 }) {
                return .string(String(decoding: inner, as: UTF8.self))
            }
        }
        guard let result = try? JSONParser.parse(buffer) else { throw ParseError(.invalidJSON, "Invalid JSON.") }
        return result
    }

    /// Parses a JSON text held in a string.
    public static func parse(_ text: String) throws(ParseError) -> JSON {
        try parse(Array(text.utf8))
    }

    /// Compact UTF-8 serialisation; object keys are written in sorted order so output is stable.
    public var serialized: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(into: &out)
        return out
    }

    /// The serialised text as a `String`.
    public var text: String { String(decoding: serialized, as: UTF8.self) }

    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): JSON.writeNumber(n, into: &out)
        case .string(let s): JSON.writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            for (i, (k, v)) in o.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(k, into: &out)
                out.append(UInt8(ascii: ":"))
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeNumber(_ n: Double, into out: inout [UInt8]) {
        if !n.isFinite { out.append(contentsOf: "null".utf8); return }
        if n.rounded() == n, abs(n) < 9.0e15 {
            // The digits of the integer straight into `out` (as `String(Int64(n))` spells it, without the String).
            var v = Int64(n)
            if v < 0 { out.append(UInt8(ascii: "-")); v = -v }
            var digits: (UInt64, UInt64) = (0, 0)  // 16 bytes: |v| < 9e15 has at most 16 digits
            withUnsafeMutableBytes(of: &digits) { buf in
                var i = 16
                repeat {
                    i -= 1
                    buf[i] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                } while v > 0
                out.append(contentsOf: buf[i...])
            }
        } else {
            out.append(contentsOf: "\(n)".utf8)
        }
    }

    /// Writes `s` as a JSON string (quoted and escaped).
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { writeString(utf8: $0, into: &out) }
    }

    /// Writes the UTF-8 bytes `u` as a JSON string (quoted, `"`, `\\` and control bytes escaped).
    public static func writeString(utf8 u: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        writeEscaped(utf8: u, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// `writeString(utf8:into:)` for a `ByteWriter`: bytes that need no escape are copied as they are.
    public static func writeString(utf8 u: UnsafeBufferPointer<UInt8>, into out: inout ByteWriter) {
        guard u.contains(where: needsEscape) else {
            out.append(UInt8(ascii: "\""))
            out.append(u)
            out.append(UInt8(ascii: "\""))
            return
        }
        var escaped: [UInt8] = []
        writeString(utf8: u, into: &escaped)
        out.append(escaped)
    }

    /// Whether a JSON string must escape this byte: `"`, `\\` and the control bytes (RFC 8259 §7).
    @inline(__always)
    static func needsEscape(_ b: UInt8) -> Bool { b == 0x22 || b == 0x5C || b < 0x20 }

    /// Writes the UTF-8 bytes `u` as the inside of a JSON string (`writeString` without the quotes).
    public static func writeEscaped(utf8 u: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        do {
            var runStart = 0
            for i in 0..<u.count {
                let b = u[i]
                guard needsEscape(b) else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: u[runStart..<i]))
                runStart = i + 1
                switch b {
                case 0x22: out.append(contentsOf: [92, 34])
                case 0x5C: out.append(contentsOf: [92, 92])
                case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex.utf8Start[Int(b >> 4)], hex.utf8Start[Int(b & 15)]])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: u[runStart..<u.count]))
        }
    }
}
