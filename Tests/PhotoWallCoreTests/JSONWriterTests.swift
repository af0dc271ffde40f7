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
        w.key("url"); w.string("http://h/files/a b", "?", "exp=1&sig=\"")
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
