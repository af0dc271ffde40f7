import Testing
import PhotoWallCore

/// `JSON.forEachMember` skips strings eight bytes at a time; quotes and backslashes at every offset of
/// those words (and near the text's end) must still end each string where it ends.
@Suite struct MemberScanningTests {
    /// Every split of a member list whose string values hold escaped quotes and backslashes at each
    /// position from 0 to 20, so an escape falls at every offset of an 8-byte word.
    @Test func stringsEndWhereTheyEndAtEveryWordOffset() throws {
        for pad in 0...20 {
            for escape in [#"\""#, #"\\"#, #"\\\""#, #"\u0022"#] {
                let filler = String(repeating: "a", count: pad)
                let text = #"{"k\"\#(filler)":"\#(filler)\#(escape)\#(filler)","n":[\#(pad),"\#(escape)x"],"t":"\#(filler)"}"#
                var members: [(String, String)] = []
                let whole = Array(text.utf8).withUnsafeBufferPointer { buffer in
                    JSON.forEachMember(ofObjectText: buffer) { key, value in
                        members.append((String(decoding: key, as: UTF8.self), String(decoding: value, as: UTF8.self)))
                    }
                }
                #expect(whole, "\(text)")
                #expect(members.map(\.0) == [#"k\"\#(filler)"#, "n", "t"], "\(text)")
                #expect(members.map(\.1) == [#""\#(filler)\#(escape)\#(filler)""#, #"[\#(pad),"\#(escape)x"]"#, #""\#(filler)""#],
                        "\(text)")
            }
        }
    }

    /// A quote or a backslash is found at every offset of every 8-byte word and in the bytes after the
    /// last whole word, beside bytes that differ from them by one bit or are above 0x7F.
    @Test func aQuoteOrBackslashIsFoundAtEveryOffset() {
        for length in 0...20 {
            let plain = (0..<length).map { [UInt8(ascii: "#"), UInt8(ascii: "]"), 0xA2, 0xDC, UInt8(ascii: "a")][$0 % 5] }
            #expect(!plain.withUnsafeBufferPointer(JSON.containsQuoteOrBackslash), "\(plain)")
            for at in 0..<length {
                for mark in [UInt8(ascii: "\""), UInt8(ascii: "\\")] {
                    var bytes = plain
                    bytes[at] = mark
                    #expect(bytes.withUnsafeBufferPointer(JSON.containsQuoteOrBackslash), "\(bytes)")
                }
            }
        }
    }

    /// A string that never ends (its last quote escaped) is not a member list, whatever its length.
    @Test func anUnendedStringIsRefused() {
        for pad in 0...20 {
            let text = #"{"k":"\#(String(repeating: "b", count: pad))\"}"#
            let whole = Array(text.utf8).withUnsafeBufferPointer { JSON.forEachMember(ofObjectText: $0) { _, _ in } }
            #expect(!whole, "\(text)")
        }
    }
}

@Suite struct TrimmingTests {
    @Test(arguments: [("abc", "abc"), (" abc", "abc"), ("abc\t", "abc"), (" \t a b \t", "a b"), ("", ""), ("  ", ""),
                      ("é", "é"), (" é ", "é"), ("-createdAt", "-createdAt")])
    func trimsSpacesAndTabsOnly(text: String, trimmed: String) {
        #expect(text.trimmingWhitespace() == trimmed)
        #expect(text[...].trimmingWhitespace() == trimmed)
    }

    /// A space that a combining mark joins is part of that Character, not whitespace: kept, as before.
    @Test func aSpaceJoinedByACombiningMarkStays() {
        #expect("a \u{301}".trimmingWhitespace() == "a \u{301}")
        #expect(" \u{301}a".trimmingWhitespace() == " \u{301}a")
    }
}
