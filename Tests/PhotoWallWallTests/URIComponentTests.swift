import Testing
import PhotoWallServices

/// File URLs percent-encode names as JavaScript's `encodeURIComponent` does (parse-server's URLs).
@Suite struct URIComponentTests {
    /// Every code point up to U+00FF: the unreserved ASCII set stays, everything else becomes its UTF-8
    /// bytes as `%XX` (upper-case hex).
    @Test func everyByteAsJavaScriptEncodesIt() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()".utf8)
        for value in UInt32(0)...0xFF {
            let text = String(Unicode.Scalar(value)!)
            let expected = text.utf8.count == 1 && unreserved.contains(text.utf8.first!)
                ? text : text.utf8.map { "%" + String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
            #expect(ServerConfig.encodeURIComponent(text) == expected, "U+\(String(value, radix: 16))")
            #expect(ServerConfig.encodeURIComponent("a\(text)b") == "a\(expected)b", "U+\(String(value, radix: 16))")
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
