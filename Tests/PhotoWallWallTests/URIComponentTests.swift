import Testing
import PhotoWallCore
import PhotoWallServices

/// File URLs percent-encode names as JavaScript's `encodeURIComponent` does (parse-server's URLs).
@Suite struct URIComponentTests {
    /// Every code point up to U+00FF: the unreserved ASCII set stays, everything else becomes its UTF-8
    /// bytes as `%XX` (upper-case hex).
    @Test func everyByteAsJavaScriptEncodesIt() {
        for value in UInt32(0)...0xFF {
            let text = String(Unicode.Scalar(value)!)
            let expected = javaScriptEncoded(text.utf8)
            #expect(ServerConfig.encodeURIComponent(text) == expected, "U+\(String(value, radix: 16))")
            #expect(ServerConfig.encodeURIComponent("a\(text)b") == "a\(expected)b", "U+\(String(value, radix: 16))")
        }
    }

    /// `writeFileURL` (which tests eight bytes at a time) writes what `encodeURIComponent` gives, for
    /// every byte at every place of an 8-byte word, in names of 1 to 40 bytes.
    @Test func fileURLsEncodeEveryByteAtEveryPlace() {
        let prefix: [UInt8] = Array("\"p/".utf8)
        var mismatches: [String] = []
        for length in 1...40 {
            for place in 0..<min(length, 17) {
                for byte in UInt8(0)...0xFF {
                    var name = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    name[place] = byte
                    if place != length - 1 { name[length - 1] = UInt8(ascii: "_") }
                    var out = ByteWriter(capacity: 64)
                    name.withUnsafeBufferPointer { n in
                        prefix.withUnsafeBufferPointer { ServerConfig.writeFileURL(name: n, prefix: $0, into: &out) }
                    }
                    // Byte by byte: a name's bytes need not be UTF-8.
                    let expected = "\"p/" + javaScriptEncoded(name) + "\""
                    let written = String(decoding: out.bytes, as: UTF8.self)
                    if written != expected { mismatches.append("length \(length) place \(place) byte \(byte): \(written)") }
                }
            }
        }
        let wrong = mismatches.count
        #expect(wrong == 0, "\(mismatches.prefix(5).joined(separator: "; "))")
    }

    /// The JSON prefix file URLs are written from is the quoted `fileURL` up to the name, and follows
    /// `publicServerURL` and `appId` when either changes (it is made when they are set, not per use).
    @Test func fileURLPrefixFollowsTheServerURLAndAppId() {
        func check(_ c: ServerConfig) {
            var quoted: [UInt8] = []
            JSON.writeString(c.fileURL("n"), into: &quoted)
            #expect(c.fileURLJSONPrefix() + Array("n\"".utf8) == quoted, "\(c.publicServerURL) \(c.appId)")
        }
        var c = ServerConfig(appId: "app", publicServerURL: "http://127.0.0.1:1/parse")
        check(c)
        c.publicServerURL = "https://photos.example/\"p\""
        check(c)
        c.appId = "my app/é"
        check(c)
        #expect(String(decoding: c.fileURLJSONPrefix(), as: UTF8.self).hasSuffix("/files/my%20app%2F%C3%A9/"))
    }
}

/// JavaScript's `encodeURIComponent` rule, written out here independently of the code under test: the
/// unreserved ASCII set stays, every other byte becomes `%XX` (upper-case hex).
private func javaScriptEncoded(_ bytes: some Sequence<UInt8>) -> String {
    let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()".utf8)
    return bytes.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : "%" + String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
