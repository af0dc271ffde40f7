import PhotoWallCore

/// PNG files of a given shape for tests, made with `PNGContainer` (the chunks, checksums and stored
/// zlib blocks every test and the mock provider's avatars use).
public enum PNGFile {
    /// A 1-bit greyscale PNG of `width` x `height` pixels (`width` a multiple of 8) in white and black
    /// stripes 4 pixels wide, whose file is about `width * height / 8` bytes: many pixels to decode and
    /// resample (a long render) in a small upload.
    public static func stripes(width: Int, height: Int) -> [UInt8] {
        precondition(width % 8 == 0 && width > 0 && height > 0)
        var raw: [UInt8] = []
        raw.reserveCapacity((1 + width / 8) * height)
        let row = [UInt8(0)] + [UInt8](repeating: 0xF0, count: width / 8)  // filter 0, then 4 white (1), 4 black (0)
        for _ in 0..<height { raw += row }
        return PNGContainer.file(width: width, height: height, bitDepth: 1, colourType: 0 /* grey */, scanlines: raw)
    }
}
