import Testing
import PhotoWallCore

/// RFC 4648 §10 test vectors for the one hex and Base64 codec.
@Suite struct EncodingTests {
    static let vectors: [(text: String, base64: String, base16: String)] = [
        ("", "", ""), ("f", "Zg==", "66"), ("fo", "Zm8=", "666F"), ("foo", "Zm9v", "666F6F"),
        ("foob", "Zm9vYg==", "666F6F62"), ("fooba", "Zm9vYmE=", "666F6F6261"), ("foobar", "Zm9vYmFy", "666F6F626172"),
    ]

    @Test(arguments: vectors)
    func base64(text: String, base64: String, base16: String) {
        let bytes = Array(text.utf8)
        #expect(Base64.encode(bytes) == base64)
        #expect(Base64.decode(base64) == bytes)
        let unpadded = String(base64.prefix { $0 != "=" })
        #expect(Base64.urlEncode(bytes) == unpadded)
        #expect(Base64.urlDecode(unpadded) == bytes)
        #expect(Base64.urlDecode(base64) == bytes)  // padded base64url is accepted too
    }

    @Test(arguments: vectors)
    func base16(text: String, base64: String, base16: String) {
        let bytes = Array(text.utf8)
        #expect(bytes.hexString == base16.lowercased())
        #expect(HexBytes.decode(base16) == bytes)
        #expect(HexBytes.decode(base16.lowercased()) == bytes)
    }

    @Test func urlAlphabetDiffersInTwoCharacters() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.urlEncode(bytes) == "-_-_")
        #expect(Base64.decode("+/+/") == bytes)
        #expect(Base64.urlDecode("-_-_") == bytes)
        #expect(Base64.decode("-_-_") == nil)
        #expect(Base64.urlDecode("+/+/") == nil)
        #expect([UInt8](0...255).hexString.count == 512)
        #expect(HexBytes.decode([UInt8](0...255).hexString) == [UInt8](0...255))
    }

    @Test(arguments: ["Zg=", "Zg", "Z===", "Zm9v!", "Zg==Zg==", "=Zg=", "Zm 9v"])
    func strictBase64RefusesMalformedText(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func lenientBase64SkipsForeignCharacters() {
        #expect(Base64.decode("Zm9v\r\nYmFy", ignoringUnknownCharacters: true) == Array("foobar".utf8))
        #expect(Base64.decode(" Zg== ", ignoringUnknownCharacters: true) == Array("f".utf8))
        #expect(Base64.decode("Zg", ignoringUnknownCharacters: true) == nil)
    }

    @Test(arguments: ["Z", "Zm9vY", "Zg=x", "a.b"])
    func base64URLRefusesMalformedText(_ text: String) {
        #expect(Base64.urlDecode(text) == nil)
    }

    @Test(arguments: ["0", "abc", "0g", "zz", " 0"])
    func hexRefusesMalformedText(_ text: String) {
        #expect(HexBytes.decode(text) == nil)
    }

    @Test func queryComponentsKeepOnlyUnreservedBytes() {
        #expect(percentEncodedQuery([("a b", "x+y&z=1"), ("redirect_uri", "http://h/p?q=~._-"), ("é", "")])
                == "a%20b=x%2By%26z%3D1&redirect_uri=http%3A%2F%2Fh%2Fp%3Fq%3D~._-&%C3%A9=")
        #expect(percentDecode("x%2By%26z%3D1") == "x+y&z=1")
        // Paths split at every `/` byte, escapes kept, empty segments skipped; a combining mark after a
        // `/` does not glue the two into one `Character` there.
        #expect(pathSegments("//classes/a%2Fb//\u{301}c/") == ["classes", "a%2Fb", "\u{301}c"])
        #expect(pathSegments("/") == [])
    }
}
