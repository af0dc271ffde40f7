import Testing
#if canImport(Glibc)
import Glibc
#endif
import PhotoWallCore
import PhotoWallCrypto

@Suite struct ParseDateTests {
    @Test(arguments: [
        ("2016-03-11T23:51:48.050Z", Int64(1_457_740_308_050)),
        ("1970-01-01T00:00:00.000Z", Int64(0)),
        ("1969-12-31T23:59:59.999Z", Int64(-1)),
        ("2000-02-29T12:00:00.000Z", Int64(951_825_600_000)),
    ])
    func roundTrip(iso: String, ms: Int64) throws {
        let d = try #require(ParseDate(iso: iso))
        #expect(d.millisecondsSince1970 == ms)
        #expect(ParseDate(millisecondsSince1970: ms).iso == iso)
    }

    @Test func acceptsOtherISOFormsAndNormalises() throws {
        #expect(ParseDate(iso: "2016-03-11T23:51:48Z")?.iso == "2016-03-11T23:51:48.000Z")
        #expect(ParseDate(iso: "2016-03-11T23:51:48.5Z")?.iso == "2016-03-11T23:51:48.500Z")
        #expect(ParseDate(iso: "2016-03-11T23:51:48.123456Z")?.iso == "2016-03-11T23:51:48.123Z")
        #expect(ParseDate(iso: "2016-03-12T01:51:48.050+02:00")?.iso == "2016-03-11T23:51:48.050Z")
        #expect(ParseDate(json: ["__type": "Date", "iso": "2016-03-11T23:51:48.050Z"])?.millisecondsSince1970 == 1_457_740_308_050)
    }

    @Test(arguments: ["", "yesterday", "2016-13-01T00:00:00Z", "2016-03-11 23:51", "2016-03-11T23:51:48.050", "2016-03-11T23:51:48.Z"])
    func rejectsGarbage(text: String) {
        #expect(ParseDate(iso: text) == nil)
    }

    /// `iso` computes the civil date itself; it must agree with libc's `gmtime_r` (what it replaced)
    /// on every day from 1600 to 2400 (leap centuries, the epoch, negative times) at varied times of day.
    @Test func isoAgreesWithGmtimeAcrossCenturies() {
        var mismatches: [Int64] = []
        var ms: Int64 = -11_676_096_000_000  // 1600-01-01
        while ms < 13_569_465_600_000 {       // 2400-01-01
            var secs = time_t(ms >= 0 ? ms / 1000 : (ms - 999) / 1000)
            var t = tm()
            gmtime_r(&secs, &t)
            let milli = ms - Int64(secs) * 1000
            func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
            let expected = "\(t.tm_year + 1900)-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec))."
                + String(repeating: "0", count: 3 - String(milli).count) + "\(milli)Z"
            if ParseDate(millisecondsSince1970: ms).iso != expected { mismatches.append(ms) }
            ms += 86_400_000 + 3_723_001  // a day plus 1 h 2 min 3.001 s: walks through times of day
        }
        #expect(mismatches.isEmpty)
    }

    @Test func writesJSONStringStraightIntoBytes() {
        var out = Array("[".utf8)
        ParseDate(millisecondsSince1970: 1_457_740_308_050).writeJSONString(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"["2016-03-11T23:51:48.050Z""#)
    }

    @Test func nowIsMillisecondPrecise() {
        let a = ParseDate.now()
        #expect(a.iso.count == 24)
        #expect(a.iso.hasSuffix("Z"))
    }
}

@Suite struct JSONTests {
    @Test func parsesAndSerialises() throws {
        let j = try JSON.parse(#"{"b":[1,2.5,true,null],"a":"x\"y\n","c":{"__type":"Date","iso":"z"}}"#)
        #expect(j["a"] == "x\"y\n")
        #expect(j["b"] == [1, 2.5, true, nil])
        #expect(j["c"]?.parseType == "Date")
        #expect(j.text == #"{"a":"x\"y\n","b":[1,2.5,true,null],"c":{"__type":"Date","iso":"z"}}"#)
    }

    @Test func boolsAndNumbersStayDistinct() throws {
        #expect(try JSON.parse("[true,1,0,false]") == [true, 1, 0, false])
    }

    @Test func controlCharactersAreEscaped() {
        #expect(JSON.string("\u{01}é").text == "\"\\u0001é\"")
    }

    @Test(arguments: ["{", "[1,]", "{'a':1}", "nul", "\u{FF}"])
    func invalidJSONIs107(text: String) {
        #expect(throws: ParseError.self) { try JSON.parse(text) }
        do { _ = try JSON.parse(text) } catch { #expect(error.code == .invalidJSON) }
    }

    @Test func integersPrintWithoutFraction() {
        #expect(JSON.number(3).text == "3")
        #expect(JSON.number(-0.5).text == "-0.5")
        #expect(JSON.number(1e20).text == "1e+20")
        // Integers are written digit by digit: every length up to the 16 digits below 9e15, both signs.
        for n: Int64 in [0, 7, -7, 10, -10, 1200, 1_000_000, 8_999_999_999_999_999, -8_999_999_999_999_999] {
            #expect(JSON.number(Double(n)).text == String(n))
        }
        #expect(JSON.number(-0.0).text == "0")
    }

    @Test func objectsOfAnySizeParse() throws {
        // Past the parser's first reservation (6 members) and with a repeated key (the last one wins).
        let members = (0..<20).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let o = try JSON.parse("{\(members),\"k3\":\"again\"}").objectValue ?? [:]
        #expect(o.count == 20)
        #expect(o["k19"] == 19)
        #expect(o["k3"] == "again")
    }
}

@Suite struct ParseErrorTests {
    // One row per status rule in parse-rest-api.md §4: 1 → 500, 101 → 404, others → 400.
    @Test(arguments: [(1, 500), (101, 404), (102, 400), (107, 400), (111, 400), (119, 400), (122, 400), (130, 400),
                      (137, 400), (141, 400), (202, 400), (209, 400), (252, 400)])
    func statusFollowsCode(code: Int, status: Int) {
        #expect(ParseError(.init(rawValue: code), "x").status == status)
    }

    @Test func bodies() {
        #expect(ParseError.objectNotFound().json == ["code": 101, "error": "Object not found."])
        #expect(ParseError.internalError(ParseError.objectNotFound()).json == ["code": 1, "message": "Internal server error."])
        #expect(ParseError(.operationForbidden, "Invalid application ID.", status: 403).status == 403)
    }

    @Test func codePatternMatches() {
        let matched: Bool
        do { throw ParseError.objectNotFound() } catch ParseError.Code.objectNotFound { matched = true } catch { matched = false }
        #expect(matched)
    }
}

@Suite struct IdentifierTests {
    @Test func shapes() {
        let id = ParseIdentifier.alphanumeric(10)
        #expect(id.count == 10 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        let hex = ParseIdentifier.hex(byteCount: 16)
        #expect(hex.count == 32 && hex.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(Set((0..<1000).map { _ in ParseIdentifier.alphanumeric(10) }).count == 1000)
    }
}

@Suite struct CryptoTests {
    @Test func bcryptHashesAndVerifies() throws {
        let h = try PasswordHasher.hash("correct horse")
        #expect(h.hasPrefix("$2b$10$") && h.count == 60)
        #expect(PasswordHasher.verify("correct horse", hash: h))
        #expect(!PasswordHasher.verify("correct horsE", hash: h))
        #expect(!PasswordHasher.verify("x", hash: "not a hash"))
        #expect(try PasswordHasher.hash("correct horse") != h, "fresh salt each time")
    }

    @Test func digestsMatchKnownVectors() {
        #expect(Digest.hash(.sha256, Array("abc".utf8)).hexString == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.hash(.sha1, Array("abc".utf8)).hexString == "a9993e364706816aba3e25717850c26c9cd0d89d")
        // RFC 4231 test case 2.
        #expect(Crypto.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)).hexString
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(Crypto.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Crypto.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(Crypto.randomBytes(32).count == 32)
    }

    @Test func keyedHMACMatchesTheOneShotAndRFC4231() {
        // RFC 4231 test cases 2 (short key) and 6 (131-byte key, hashed first).
        #expect(HMACSHA256Key(Array("Jefe".utf8)).mac(Array("what do ya want for nothing?".utf8)).hexString
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256Key([UInt8](repeating: 0xaa, count: 131)).mac(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)).hexString
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        // Any key length around the block size and any message, repeatedly under one key.
        for n in [0, 1, 32, 63, 64, 65, 200] {
            let key = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let k = HMACSHA256Key(key)
            for m in ["", "a", String(repeating: "x", count: 64), String(repeating: "y", count: 1000)] {
                #expect(k.mac(Array(m.utf8)) == Crypto.hmacSHA256(key: key, message: Array(m.utf8)), "key \(n), message \(m.count)")
                // The two-part form: the message split anywhere gives the same digest.
                let bytes = Array(m.utf8)
                for cut in Set([0, bytes.count / 3, bytes.count]) {
                    var digest = [UInt8](repeating: 0, count: 32)
                    bytes[..<cut].withUnsafeBytes { a in bytes[cut...].withUnsafeBytes { b in
                        digest.withUnsafeMutableBytes { k.mac(a, b, into: $0) }
                    } }
                    #expect(digest == Crypto.hmacSHA256(key: key, message: bytes), "key \(n), message \(m.count), cut \(cut)")
                }
            }
        }
    }

    @Test func resumableSHA256ContinuesFromASavedState() {
        // 1,000,000 × "a" (FIPS 180-2 appendix B.3), hashed in odd pieces with a save/restore
        // between each, must equal the one-shot digest.
        let million = [UInt8](repeating: 0x61, count: 1_000_000)
        var d = ResumableSHA256()
        var at = 0
        for size in [1, 63, 64, 65, 999, 4096, 70_000] + Array(repeating: 131_071, count: 7) {
            let end = min(at + size, million.count)
            million[at..<end].withUnsafeBytes { d.update($0) }
            at = end
            let saved = d.state
            #expect(saved.count == ResumableSHA256.stateSize)
            guard let restored = ResumableSHA256(state: saved) else { Issue.record("state refused"); return }
            #expect(restored.state == saved)
            d = restored
        }
        million[at...].withUnsafeBytes { d.update($0) }
        #expect(d.finalize().hexString == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(ResumableSHA256().finalize().hexString == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(ResumableSHA256(state: [1, 2, 3]) == nil)
        #expect(ResumableSHA256(state: [UInt8](repeating: 0xff, count: ResumableSHA256.stateSize)) == nil)
    }
}
