/// Recognises image types from magic bytes only: never from a file name or a
/// `Content-Type` header, which clients control.
public enum ImageSniffer {
    /// Returns the type whose signature starts `bytes`.
    ///
    /// - Parameter bytes: The start of the file; 32 bytes are enough for every
    ///   binary type, SVG is looked for in the first 4 KiB.
    /// - Returns: `.unknown` when nothing matches, including a damaged JPEG or
    ///   PNG signature (such a file cannot be decoded either).
    public static func sniff(_ bytes: [UInt8]) -> ImageType {
        bytes.withUnsafeBytes { sniff($0) }
    }

    /// Same as the `[UInt8]` overload, for bytes already in memory (e.g. `Data.withUnsafeBytes`).
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageType {
        let b = bytes
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            guard b.count >= offset + magic.count else { return false }
            for (i, m) in magic.enumerated() where b[offset + i] != m { return false }
            return true
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("%PDF-".utf8)) { return .pdf }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A])
            || starts([0x49, 0x49, 0x2B, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2B]) {
            return .tiff
        }
        if starts(Array("BM".utf8)) && b.count >= 18 {
            // BITMAPFILEHEADER then a DIB header whose size is one of the known ones.
            let dib = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
            if [12, 16, 40, 52, 56, 64, 108, 124].contains(dib) { return .bmp }
        }
        if let brand = isoBrand(b) { return brand }
        if looksLikeSVG(b) { return .svg }
        return .unknown
    }

    /// HEIF family (ISO-BMFF `ftyp` box) by major/compatible brands: AVIF (`avif`/`avis`), HEIC
    /// (an HEVC brand: `heic`/`heix`/`hevc`/`hevx`/`heim`/`heis`/`hevm`/`hevs`), else HEIF
    /// (`mif1`/`msf1` alone). Source: ISO/IEC 23008-12 Annex B (brands), AV1-ISOBMFF section 6.
    private static func isoBrand(_ b: UnsafeRawBufferPointer) -> ImageType? {
        guard b.count >= 16, b[4] == 0x66, b[5] == 0x74, b[6] == 0x79, b[7] == 0x70 else { return nil }
        let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        let end = min(max(boxSize, 16), b.count, 256)
        func brand(_ at: Int) -> String {
            String(decoding: (at..<at + 4).map { b[$0] }, as: UTF8.self)
        }
        var brands = [brand(8)]
        var at = 16
        while at + 4 <= end {
            brands.append(brand(at))
            at += 4
        }
        if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
        let hevc: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]
        if brands.contains(where: { hevc.contains($0) }) { return .heic }
        if brands.contains(where: { $0 == "mif1" || $0 == "msf1" }) { return .heif }
        return nil
    }

    /// XML or bare `<svg` markup (after an optional BOM and whitespace).
    private static func looksLikeSVG(_ b: UnsafeRawBufferPointer) -> Bool {
        let head = Array(b.prefix(4096))
        var start = 0
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[start]) { start += 1 }
        guard start < head.count, head[start] == UInt8(ascii: "<") else { return false }
        let text = String(decoding: head[start...], as: UTF8.self).lowercased()
        return text.contains("<svg")
    }
}
