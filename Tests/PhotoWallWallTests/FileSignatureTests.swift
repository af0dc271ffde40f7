import PhotoWallCore
import PhotoWallCrypto
import PhotoWallWall
import Testing

/// Signed file URLs (`WallFileAccess`): the query is `exp=<expiry>&sig=<hex>`, the expiry rounded up
/// to the hour past `validitySeconds`, the signature the first 16 bytes of HMAC-SHA256 over
/// `<name>\n<exp>` under the key derived from the master key. URLs already handed out stay valid
/// across versions only while this holds; `signer(now:)` (the feed's) and `signature(for:now:)` agree.
@Suite struct FileSignatureTests {
    @Test func signaturesFollowTheirDefinition() throws {
        let fixture = try WallFixture()
        let access = WallFileAccess(masterKey: "the master key", database: fixture.database, wall: fixture.wall.rules, validitySeconds: 3600)
        let now = ParseDate(millisecondsSince1970: 1_764_000_123_456)
        let exp: Int64 = (1_764_000_123 + 3600 + 3599) / 3600 * 3600
        let key = Crypto.hmacSHA256(key: Array("the master key".utf8), message: Array("photowall file URLs v1".utf8))
        let signer = access.signer(now: now)
        for name in ["a.jpg", "1cf1f710abf4cd0f7798559d824c8509_landscape_o8.jpg", "é ü.png", ""] {
            let mac = Crypto.hmacSHA256(key: key, message: Array("\(name)\n\(exp)".utf8)).prefix(16)
            let expected = "exp=\(exp)&sig=" + Array(mac).hexString
            #expect(access.signature(for: name, now: now) == expected)
            #expect(signer.signature(for: name) == expected)
            var appended = Array("url?".utf8)
            signer.appendSignature(for: name, to: &appended)
            #expect(appended == Array(("url?" + expected).utf8))
        }
    }
}
