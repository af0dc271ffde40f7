/// JSON text written member by member into a byte buffer, for a response whose shape the caller
/// knows: no `JSON` tree is built, hashed, sorted and torn down on the way (the feed page renders
/// this way). The writer puts the commas; the caller writes keys in the order it wants them (the
/// feed writes them sorted, as `JSON.serialized` does, so the bytes are the same).
///
/// Strings go through `JSON.writeString` and values through `JSON.write`, so the text is what
/// `JSON.serialized` gives for the same value. The writer does not check the nesting: a caller
/// that ends an object it did not begin writes invalid JSON.
public struct JSONWriter: Sendable {
    /// The UTF-8 text written so far.
    public private(set) var bytes: [UInt8]
    /// Whether the next value or key follows another in the same object or array (a comma first).
    var follows = false

    /// An empty text with room for `capacity` bytes.
    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// `{`; the members that follow until `endObject` are this object's.
    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); follows = false }
    /// `}`.
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); follows = true }
    /// `[`; the values that follow until `endArray` are this array's.
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); follows = false }
    /// `]`.
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); follows = true }

    /// A member's key and colon; the next call writes its value. `key` is written as it is (it must
    /// need no escaping: a literal name such as `"objectId"`).
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        follows = false
    }

    /// A string value, quoted and escaped.
    public mutating func string(_ s: String) { separate(); JSON.writeString(s, into: &bytes); follows = true }
    /// A number value (integers without a fractional part, as `JSON.serialized`).
    public mutating func number(_ n: Int) { separate(); JSON.writeNumber(Double(n), into: &bytes); follows = true }
    /// `null`.
    public mutating func null() { separate(); bytes.append(contentsOf: "null".utf8); follows = true }
    /// Any value, as `JSON.serialized` writes it.
    public mutating func value(_ v: JSON) { separate(); v.write(into: &bytes); follows = true }
    /// A value given as JSON text (e.g. as a database stored it): appended as it is; nil writes `null`.
    public mutating func text(_ utf8: [UInt8]?) {
        separate()
        if let utf8 { bytes.append(contentsOf: utf8) } else { bytes.append(contentsOf: "null".utf8) }
        follows = true
    }

    /// A string value whose text `body` appends to `bytes` between the quotes: only string content,
    /// escaped (`JSON.writeEscaped`) or known to need none (e.g. ASCII letters, digits, `%`, `&`, `=`).
    /// For a value of many parts written without joining them (the feed's signed file URLs).
    public mutating func string(writing body: (inout [UInt8]) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        body(&bytes)
        bytes.append(UInt8(ascii: "\""))
        follows = true
    }

    private mutating func separate() {
        if follows { bytes.append(UInt8(ascii: ",")) }
    }
}
