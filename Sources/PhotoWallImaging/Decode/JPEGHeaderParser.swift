/// Walks JPEG markers up to the first SOS to find the frame size and the
/// EXIF orientation, without libjpeg. Bounded by the data length; tolerates
/// junk bytes between markers the way libjpeg does (it skips to the next 0xFF).
///
/// Source: ITU-T T.81 Annex B (marker segments), JFIF/EXIF APP1 layout.
enum JPEGHeaderParser {
    struct Result {
        var width: Int
        var height: Int
        var progressive: Bool
        var orientation: ImageOrientation
        /// The first SOS marker was reached within the bytes given: they hold every header marker.
        var reachedScan: Bool
    }

    static func parse(_ b: UnsafeRawBufferPointer) throws(ImagingError) -> Result {
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else {
            throw .corrupt(.jpeg, "missing SOI marker")
        }
        var pos = 2
        var frame: (width: Int, height: Int, progressive: Bool)?
        var orientation: ImageOrientation?
        var reachedScan = false
        while pos < b.count {
            while pos < b.count, b[pos] != 0xFF { pos += 1 }      // extraneous bytes
            while pos < b.count, b[pos] == 0xFF { pos += 1 }      // fill bytes
            guard pos < b.count else { break }
            let marker = b[pos]
            pos += 1
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }
            if marker == 0xD9 { break }                            // EOI
            guard pos + 2 <= b.count else { break }
            let length = Int(b[pos]) << 8 | Int(b[pos + 1])
            guard length >= 2 else { throw .corrupt(.jpeg, "bogus marker length") }
            let end = min(pos + length, b.count)
            let segment = UnsafeRawBufferPointer(rebasing: b[(pos + 2)..<end])
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard frame == nil else { break }
                guard segment.count >= 6 else { throw .truncated(.jpeg, "frame header cut short") }
                let height = Int(segment[1]) << 8 | Int(segment[2])
                let width = Int(segment[3]) << 8 | Int(segment[4])
                guard width > 0, height > 0 else {
                    throw .corrupt(.jpeg, "frame header declares an empty \(width)x\(height) image")
                }
                frame = (width, height, marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE)
            case 0xE1 where orientation == nil:
                if segment.count >= 6, segment[0] == 0x45, segment[1] == 0x78, segment[2] == 0x69,
                   segment[3] == 0x66, segment[4] == 0, segment[5] == 0 {
                    orientation = EXIFOrientation.parse(segment) ?? .up
                }
            case 0xDA:
                reachedScan = true
                pos = b.count                                      // stop at the first scan
            default:
                break
            }
            pos += length
        }
        guard let frame else {
            throw .corrupt(.jpeg, "no frame header (SOF) before the image data")
        }
        return Result(width: frame.width, height: frame.height, progressive: frame.progressive,
                      orientation: orientation ?? .up, reachedScan: reachedScan)
    }
}
