/// Reads IHDR and the chunks before the first IDAT (for `eXIf`) without
/// libpng. Bounded: every chunk length is checked against the data left.
///
/// Source: PNG specification (third edition) sections 5.3 (chunk layout),
/// 11.2.1 (IHDR) and 11.3.4.8 (eXIf).
enum PNGHeaderParser {
    struct Result {
        var width: Int
        var height: Int
        var interlaced: Bool
        var orientation: ImageOrientation
    }

    static func parse(_ b: UnsafeRawBufferPointer) throws(ImagingError) -> Result {
        guard b.count >= 8 + 8 + 13 else { throw .truncated(.png, "file ends inside the IHDR chunk") }
        func u32(_ at: Int) -> Int {
            Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
        }
        guard u32(8) == 13, b[12] == 0x49, b[13] == 0x48, b[14] == 0x44, b[15] == 0x52 else {
            throw .corrupt(.png, "the first chunk is not a 13-byte IHDR")
        }
        let width = u32(16), height = u32(20)
        guard width > 0, height > 0 else {
            throw .corrupt(.png, "IHDR declares an empty \(width)x\(height) image")
        }
        let interlaced = b[28] == 1
        var orientation: ImageOrientation?
        var pos = 8 + 8 + 13 + 4
        while pos + 8 <= b.count {
            let length = u32(pos)
            let type = (b[pos + 4], b[pos + 5], b[pos + 6], b[pos + 7])
            let dataStart = pos + 8
            guard length <= b.count - dataStart else { break }
            if type == (0x49, 0x44, 0x41, 0x54) { break }           // IDAT: pixels start
            if type == (0x65, 0x58, 0x49, 0x66), orientation == nil { // eXIf
                let data = UnsafeRawBufferPointer(rebasing: b[dataStart..<(dataStart + length)])
                orientation = EXIFOrientation.parse(data) ?? .up
            }
            pos = dataStart + length + 4
        }
        return Result(width: width, height: height, interlaced: interlaced, orientation: orientation ?? .up)
    }
}
