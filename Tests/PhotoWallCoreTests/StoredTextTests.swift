import PhotoWallCore
import Testing

/// `JSON.parse` of a buffer (the stored-row readers' form, with its plain-string shortcut) against
/// the generic parse, and `bytesEqual`.
@Suite struct StoredTextTests {
    /// The generic parse's answer, or nil where it throws.
    func generic(_ bytes: [UInt8]) -> JSON? { try? JSON.parse(bytes[...]) }
    func buffered(_ bytes: [UInt8]) -> JSON? { bytes.withUnsafeBufferPointer { try? JSON.parse($0) } }

    @Test func bufferParseAgreesWithTheGenericParse() {
        let texts: [[UInt8]] = [
            Array(#""plain""#.utf8), Array(#""""#.utf8), Array(#"""#.utf8), Array("\"é ü 😀\"".utf8),
            Array(#""a\"b""#.utf8), Array(#""tab\tnew\n""#.utf8), Array(#""\u00e9""#.utf8),
            [0x22, 0x61, 0x09, 0x62, 0x22],                 // a raw control byte: invalid
            [0x22, 0xFF, 0xFE, 0x22], [0x22, 0xC3, 0x22],    // invalid UTF-8
            [0x22, 0xED, 0xA0, 0x80, 0x22],                  // an encoded surrogate: invalid
            Array(#""unterminated"#.utf8), Array(#"x""#.utf8), Array(#""a" "#.utf8), Array(#""a""b""#.utf8),
            Array("12".utf8), Array("-1.5e3".utf8), Array("true".utf8), Array("null".utf8),
            Array(#"{"__type":"Pointer","className":"_User","objectId":"abc"}"#.utf8), Array("[1,\"x\"]".utf8), [],
        ]
        for t in texts {
            #expect(buffered(t) == generic(t), "\(t)")
        }
        #expect(buffered(Array(#""plain""#.utf8)) == .string("plain"))
        #expect(buffered(Array(#""a\"b""#.utf8)) == .string("a\"b"))
        #expect(buffered([0x22, 0xFF, 0x22]) == nil)
        #expect(buffered([0x22, 0x61, 0x0A, 0x22]) == nil)
    }

    @Test func bytesEqualComparesLengthAndEveryByte() {
        func eq(_ a: String, _ b: StaticString) -> Bool { Array(a.utf8).withUnsafeBufferPointer { $0.bytesEqual(b) } }
        #expect(eq("read", "read"))
        #expect(!eq("rea", "read"))
        #expect(!eq("reads", "read"))
        #expect(!eq("reaD", "read"))
        #expect(!eq("Read", "read"))
        #expect(eq("", ""))
        #expect(!eq("", "x"))
    }
}
