@testable import PhotoWallHTTP
import Testing

/// Field names compare as RFC 9110 §5.1 says: case-insensitively, and only ASCII letters fold.
@Suite("Header field names")
struct HeaderTests {
    @Test func namesMatchIgnoringASCIICaseOnly() {
        let h = HTTPHeaders([("Content-Type", "a"), ("X-Parse-Session-Token", "b"), ("X-é", "c"), ("A[", "d")])
        #expect(h["content-type"] == "a")
        #expect(h["CONTENT-TYPE"] == "a")
        #expect(h["x-parse-session-token"] == "b")
        #expect(h["x-é"] == "c", "the ASCII letters of a name with other bytes still fold")
        #expect(h["X-É"] == nil, "only ASCII letters fold")
        #expect(h["a{"] == nil, "[ and { differ by the case bit, but are not letters")
        #expect(h["Content-Typ"] == nil)
        #expect(h["Content-Types"] == nil)
        #expect(h["Content-Typf"] == nil)
        #expect(h[""] == nil)
    }
}
