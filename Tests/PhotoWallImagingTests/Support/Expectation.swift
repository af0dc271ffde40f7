@testable import PhotoWallImaging

/// What PhotoWall does with a corpus row, derived from the row's `expected`
/// and `structure` columns. Where the manifest allows either behaviour
/// ("decode fine ... or reject"), the policy chosen here is noted.
enum Expectation: Equatable {
    case rejected(Set<ImagingError.Code>)
    /// Decodes; `thumbnail` is the upright size when the manifest states one.
    case decodes(thumbnail: (Int, Int)?)

    static func == (a: Expectation, b: Expectation) -> Bool {
        switch (a, b) {
        case let (.rejected(x), .rejected(y)): return x == y
        case let (.decodes(x), .decodes(y)): return x?.0 == y?.0 && x?.1 == y?.1
        default: return false
        }
    }

    static func of(_ row: ManifestRow) -> Expectation {
        let e = row.expected
        // HEIC, WebP and AVIF decode since issue 17; the AVIF declaring 17000x17000 is over the
        // 100 MP default, refused from its header.
        if row.path.hasSuffix("17000x17000.avif") { return .rejected([.tooLarge]) }
        if row.path.hasSuffix(".HEIC") || row.path.hasSuffix(".webp") { return .decodes(thumbnail: nil) }
        if row.path.hasPrefix("wrong-format/") { return .rejected([.unsupportedType]) }
        // giant-image.jpg: "rejected by a pixel-count limit ... or decoded only with DCT 1/8":
        // PhotoWall rejects (280 MP > 100 MP default).
        if row.path.hasPrefix("bombs/") { return .rejected([.tooLarge]) }
        // 12-bit and lossless JPEG: libjpeg-turbo 2.1.5's 8-bit API cannot decode them.
        if e.contains("reject clearly with 8-bit API") || e.contains("(lossless unsupported)") {
            return .rejected([.unsupportedType])
        }
        // Truncated/corrupt JPEGs: "recommended: treat warning as error and reject".
        if e.contains("recommended: treat warning as error and reject") { return .rejected([.truncated, .corrupt]) }
        if e.hasPrefix("must be rejected") { return .rejected([.corrupt, .truncated]) }
        // Remaining rows decode, including the "may be tolerated" ones:
        // junk_jpeg_header.jpg (extraneous bytes are a benign warning),
        // hopper_idat_after_image_end.png (benign libpng warning) and
        // truncated_end_chunk.png (all pixels present, only IEND missing).
        return .decodes(thumbnail: statedThumbnailSize(e))
    }

    /// The upright thumbnail size the manifest states for a 256 box, if any.
    static func statedThumbnailSize(_ text: String) -> (Int, Int)? {
        let patterns = [
            /thumbnail (\d+)x(\d+)/,
            /upright result is (?:landscape|portrait) (\d+)x(\d+)/,
            /keeping aspect \((\d+)x(\d+)\)/,
            /result is (\d+)x(\d+)/,
            /(\d+)x(\d+) output/,
        ]
        for pattern in patterns {
            if let m = text.firstMatch(of: pattern), let w = Int(m.1), let h = Int(m.2) { return (w, h) }
        }
        return nil
    }

    /// Stored size and EXIF orientation from the `structure` column
    /// (e.g. "jpeg baseline 8bit 1200x1800 JFIF EXIF(o=6) scans=1").
    static func structure(_ row: ManifestRow) -> (width: Int, height: Int, orientation: Int)? {
        guard let m = row.structure.firstMatch(of: /(\d+)bit (\d+)x(\d+)/),
              let w = Int(m.2), let h = Int(m.3) else { return nil }
        var orientation = 1
        if let o = row.structure.firstMatch(of: /EXIF\(o=(\d)\)/), let v = Int(o.1), (1...8).contains(v) {
            orientation = v
        }
        return (w, h, orientation)
    }
}
