/// Reads the Orientation tag (0x0112) from IFD0 of a TIFF/EXIF block.
///
/// A small, bounded parser: it reads only IFD0, never allocates in proportion
/// to counts found in the data, and treats anything malformed as "no
/// orientation". Sources: TIFF 6.0 section 2 (header, IFD layout), EXIF 2.32
/// section 4.6.4 (tag 0x0112, SHORT, values 1-8).
enum EXIFOrientation {
    /// - Parameter tiff: The TIFF block, optionally preceded by `Exif\0\0`
    ///   (JPEG APP1 payloads have it; PNG `eXIf` chunks normally do not).
    /// - Returns: The tag value when it is 1...8, otherwise `nil`.
    static func parse(_ block: UnsafeRawBufferPointer) -> ImageOrientation? {
        var tiff = block
        let exifPrefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]
        if tiff.count >= 6, (0..<6).allSatisfy({ tiff[$0] == exifPrefix[$0] }) {
            tiff = UnsafeRawBufferPointer(rebasing: tiff[6...])
        }
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            let a = Int(tiff[at]), b = Int(tiff[at + 1])
            return bigEndian ? a << 8 | b : b << 8 | a
        }
        func u32(_ at: Int) -> Int? {
            guard let hi = u16(bigEndian ? at : at + 2), let lo = u16(bigEndian ? at + 2 : at) else { return nil }
            return hi << 16 | lo
        }
        guard u16(2) == 42, let ifd = u32(4), ifd >= 8, let count = u16(ifd) else { return nil }
        // Only entries that fit in the block are read, so a huge count costs nothing.
        let entries = min(count, (tiff.count - ifd - 2) / 12)
        for i in 0..<max(entries, 0) {
            let entry = ifd + 2 + i * 12
            guard u16(entry) == 0x0112, let type = u16(entry + 2), let n = u32(entry + 4), n >= 1 else { continue }
            let value: Int?
            switch type {
            case 3: value = u16(entry + 8)    // SHORT, the standard type
            case 4: value = u32(entry + 8)    // LONG, seen from some writers
            default: value = nil
            }
            guard let v = value, (1...8).contains(v) else { return nil }
            return ImageOrientation(rawValue: v)
        }
        return nil
    }
}
