/// Interleaved 8-bit pixels with packed rows (stride = width x channels).
///
/// Channel layouts: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA or CMYK (`hasAlpha`
/// tells which). When `premultiplied`, colour channels hold colour x alpha / 255.
struct PixelImage {
    var width: Int
    var height: Int
    var channels: Int
    var hasAlpha: Bool
    var premultiplied: Bool
    var pixels: [UInt8]

    init(width: Int, height: Int, channels: Int, hasAlpha: Bool, premultiplied: Bool = false,
         pixels: [UInt8]) {
        precondition(pixels.count == width * height * channels, "pixel count does not match the size")
        self.width = width
        self.height = height
        self.channels = channels
        self.hasAlpha = hasAlpha
        self.premultiplied = premultiplied
        self.pixels = pixels
    }

    var rowBytes: Int { width * channels }
}
