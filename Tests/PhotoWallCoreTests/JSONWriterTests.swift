import PhotoWallCore
import Testing

/// `JSONWriter` writes the bytes `JSON.serialized` writes for the same value when keys come in sorted
/// order: commas, nesting, escapes, numbers, null, text given as it is, a string made of parts.
@Suite struct JSONWriterTests {
    @Test func writesWhatSerializedWrites() throws {
        var w = JSONWriter(capacity: 16)
        w.beginObject()
        w.key("a"); w.number(1)
        w.key("empty"); w.beginArray(); w.endArray()
        w.key("list")
        w.beginArray()
        w.beginObject(); w.key("n"); w.null(); w.endObject()
        w.string("quote \" back\\slash \u{1F600} tab\t")
        w.value(["x": [1.5, true], "y": .null])
        w.text(Array("[2,3]".utf8))
        w.text(nil)
        w.endArray()
        w.key("url")
        w.string { text in
            for part in ["http://h/files/a b", "?", "exp=1&sig=\""] {
                Array(part.utf8).withUnsafeBufferPointer { JSON.writeEscaped(utf8: $0, into: &text) }
            }
        }
        w.endObject()
        let expected: JSON = [
            "a": 1, "empty": [],
            "list": [["n": .null], .string("quote \" back\\slash \u{1F600} tab\t"), ["x": [1.5, true], "y": .null], [2, 3], .null],
            "url": .string("http://h/files/a b?exp=1&sig=\""),
        ]
        #expect(w.bytes == expected.serialized, "\(String(decoding: w.bytes, as: UTF8.self))")
        #expect(try JSON.parse(w.bytes) == expected)
    }
}

/// `ByteWriter` keeps every byte in order as it grows from a small buffer, whatever the size of the
/// pieces (stored byte by byte up to 16, copied above), and `write(upTo:)`, `removeSuffix` and the
/// JSON string and date writers give the bytes their `[UInt8]` forms give.
@Suite struct ByteWriterTests {
    @Test func keepsEveryPieceInOrderAcrossGrowth() {
        var w = ByteWriter(capacity: 1)
        var expected: [UInt8] = []
        for n in [0, 1, 2, 15, 16, 17, 100, 5000, 3] {
            let piece = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
            piece.withUnsafeBufferPointer { w.append($0) }
            expected += piece
            w.append(UInt8(n & 0xFF))
            expected.append(UInt8(n & 0xFF))
        }
        w.append("literal \u{E9}")
        expected += Array("literal \u{E9}".utf8)
        w.append([9, 8, 7])
        expected += [9, 8, 7]
        #expect(w.count == expected.count)
        #expect(w.bytes == expected)

        w.write(upTo: 10) { p in p[0] = 1; p[1] = 2; return 2 }
        expected += [1, 2]
        #expect(w.bytes == expected)
        w.removeSuffix(from: 5)
        #expect(w.bytes == Array(expected.prefix(5)))
        w.removeSuffix(from: 0)
        #expect(w.bytes.isEmpty)
    }

    @Test func stringsAndDatesAsTheArrayWritersGiveThem() {
        for text in ["plain", "", "quote \" back\\slash", "tab\t newline\n \u{1} é ✓", String(repeating: "x", count: 40) + "\""] {
            var w = ByteWriter(capacity: 4)
            var a: [UInt8] = []
            Array(text.utf8).withUnsafeBufferPointer {
                JSON.writeString(utf8: $0, into: &w)
                JSON.writeString(utf8: $0, into: &a)
            }
            #expect(w.bytes == a, "\(text)")
        }
        for ms: Int64 in [0, 1_457_740_308_050, -1, 253_402_300_799_999] {
            var w = ByteWriter(capacity: 4)
            var a: [UInt8] = []
            ParseDate(millisecondsSince1970: ms).writeJSONString(into: &w)
            ParseDate(millisecondsSince1970: ms).writeJSONString(into: &a)
            #expect(w.bytes == a)
            #expect(String(decoding: w.bytes, as: UTF8.self) == "\"\(ParseDate(millisecondsSince1970: ms).iso)\"")
        }
    }
}
