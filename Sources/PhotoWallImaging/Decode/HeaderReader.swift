/// Sniffs and reads a header: the first step of every thumbnail.
enum HeaderReader {
    /// - Throws: `.unsupportedType` for a type that is not decodable (see `ImageType.isDecodable`);
    ///   `.corrupt` or `.truncated` when the header itself is damaged; `.tooLarge` for libheif's
    ///   security limits (`maxSidePixels` per side).
    static func read(_ bytes: UnsafeRawBufferPointer, maxSidePixels: Int = ThumbnailOptions().maxSidePixels)
        throws(ImagingError) -> ImageHeader {
        let type = ImageSniffer.sniff(bytes)
        switch type {
        case .jpeg:
            return header(try JPEGHeaderParser.parse(bytes))
        case .png:
            let h = try PNGHeaderParser.parse(bytes)
            return ImageHeader(type: .png, width: h.width, height: h.height,
                               orientation: h.orientation, isProgressive: h.interlaced)
        case .webp:
            let info = try WebPDecoder.readInfo(bytes)
            return ImageHeader(type: .webp, width: info.width, height: info.height,
                               orientation: info.orientation, isProgressive: false)
        case .heic, .heif, .avif:
            return try HEIFDecoder(bytes, type: type, maxSidePixels: maxSidePixels).header
        default:
            if looksLikeDamagedPNGSignature(bytes) {
                throw .corrupt(.png, "damaged PNG signature (was the file transferred in text mode?)")
            }
            throw .unsupported(type)
        }
    }

    /// The header of a JPEG from the start of its file alone, when `prefix` holds every
    /// marker up to the first scan (what `read` would find in the whole file); nil for
    /// another type, a damaged header or one that continues past `prefix`.
    static func readJPEG(prefix: UnsafeRawBufferPointer) -> ImageHeader? {
        guard ImageSniffer.sniff(prefix) == .jpeg,
              let parsed = try? JPEGHeaderParser.parse(prefix), parsed.reachedScan else { return nil }
        return header(parsed)
    }

    private static func header(_ h: JPEGHeaderParser.Result) -> ImageHeader {
        ImageHeader(type: .jpeg, width: h.width, height: h.height, orientation: h.orientation,
                    isProgressive: h.progressive)
    }

    /// 0x89 then at least two of "PNG" in place: a PNG whose 8-byte signature
    /// was altered (PngSuite `xs*`, `xcr*`, `xlf*`), reported as corrupt rather
    /// than as an unknown type.
    private static func looksLikeDamagedPNGSignature(_ b: UnsafeRawBufferPointer) -> Bool {
        guard b.count >= 8, b[0] == 0x89 else { return false }
        let matches = [(1, UInt8(ascii: "P")), (2, UInt8(ascii: "N")), (3, UInt8(ascii: "G"))]
            .filter { b[$0.0] == $0.1 || b[$0.0] == $0.1 | 0x20 }.count
        return matches >= 2
    }

    /// Refuses images over the configured limits, from the header alone.
    static func checkLimits(_ header: ImageHeader, _ options: ThumbnailOptions) throws(ImagingError) {
        if header.width > options.maxSidePixels || header.height > options.maxSidePixels {
            throw .tooLarge(width: header.width, height: header.height,
                            limit: "the limit is \(options.maxSidePixels) pixels per side", type: header.type)
        }
        if header.megapixels > options.maxMegapixels {
            throw .tooLarge(width: header.width, height: header.height,
                            limit: "the limit is \(formatMegapixels(options.maxMegapixels)) megapixels",
                            type: header.type)
        }
    }

    private static func formatMegapixels(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
