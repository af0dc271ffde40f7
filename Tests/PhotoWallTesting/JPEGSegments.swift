/// Builds JPEG marker segments for tests that add metadata to a JPEG (ITU-T T.81 B.1.1.4: the
/// marker, a big-endian length that counts itself, the body).
public enum JPEGSegments {
    /// `0xFF code`, length, `body`.
    public static func segment(_ code: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xFF, code, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 255)] + body
    }

    /// `jpeg` with `segments` put right after its SOI and `trailing` after its last byte.
    public static func inserting(_ segments: [[UInt8]], into jpeg: [UInt8], trailing: [UInt8] = []) -> [UInt8] {
        Array(jpeg[0..<2]) + segments.flatMap { $0 } + Array(jpeg[2...]) + trailing
    }
}
