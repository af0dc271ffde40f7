/// Public encoders for pixels made outside the thumbnailer (e.g. `photowall samples`), so that every
/// JPEG the project writes goes through the same libjpeg path (`JPEGEncoder`).
public enum ImageEncoding {
    /// Encodes 8-bit RGB pixels as a baseline JPEG: 4:2:0, optimised Huffman tables, no EXIF.
    ///
    /// - Parameters:
    ///   - rgb: `width * height * 3` bytes, rows top to bottom, R G B per pixel.
    ///   - width: 1...65500 pixels.
    ///   - height: 1...65500 pixels.
    ///   - quality: 1...100.
    /// - Returns: the JPEG file's bytes.
    /// - Throws: `ImagingError` `.encodeFailed` when libjpeg refuses (e.g. a size over its limits).
    public static func jpeg(rgb: [UInt8], width: Int, height: Int, quality: Int) throws(ImagingError) -> [UInt8] {
        precondition(width > 0 && height > 0 && rgb.count == width * height * 3, "rgb must hold width * height * 3 bytes")
        return try JPEGEncoder.encode(PixelImage(width: width, height: height, channels: 3, hasAlpha: false, pixels: rgb),
                                      quality: max(1, min(100, quality)))
    }
}
