@testable import PhotoWallServices
import Testing

/// `ObjectService.contains`, which decides whether a stored value may hold a File (and is decoded): a
/// needle at every position, candidates whose first byte or whose anchor byte (the second, which the
/// search looks for) matches but not the rest, and the edges.
@Suite struct StoredRowScanTests {
    @Test func findsTheNeedleWhereverItIs() {
        let needle: StaticString = #""File""#
        for length in 0...40 {
            let plain = Array(repeating: UInt8(ascii: "\""), count: length)  // only first-byte candidates
            #expect(!plain.withUnsafeBufferPointer { ObjectService.contains($0, needle) })
            let anchors = Array(repeating: UInt8(ascii: "F"), count: length)  // only anchor candidates
            #expect(!anchors.withUnsafeBufferPointer { ObjectService.contains($0, needle) })
            for at in 0..<max(0, length - 5) {
                var bytes = Array(repeating: UInt8(ascii: "x"), count: length)
                bytes.replaceSubrange(at..<(at + 6), with: Array(#""File""#.utf8))
                #expect(bytes.withUnsafeBufferPointer { ObjectService.contains($0, needle) }, "\(length) \(at)")
                bytes[at + 5] = UInt8(ascii: "x")  // "File without its closing quote
                #expect(!bytes.withUnsafeBufferPointer { ObjectService.contains($0, needle) }, "\(length) \(at)")
            }
        }
        #expect(Array(#"{"__type":"File"}"#.utf8).withUnsafeBufferPointer { ObjectService.contains($0, needle) })
        #expect(!Array(#"{"__type":"Fil"}"#.utf8).withUnsafeBufferPointer { ObjectService.contains($0, needle) })
        #expect(!Array(#"xFile"Filex"#.utf8).withUnsafeBufferPointer { ObjectService.contains($0, needle) })
        #expect(Array(#"xFile""File""#.utf8).withUnsafeBufferPointer { ObjectService.contains($0, needle) })
        // A one-byte needle is its own anchor.
        #expect(Array("abc".utf8).withUnsafeBufferPointer { ObjectService.contains($0, "c") })
        #expect(!Array("abc".utf8).withUnsafeBufferPointer { ObjectService.contains($0, "d") })
    }
}
