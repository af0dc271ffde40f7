/// CMYK JPEG pixels to RGB when the file has no usable ICC profile.
///
/// Uses the naive ink formula R = (1-C)(1-K), which keeps colours natural
/// (never a negative); with an embedded profile `ICCToSRGB` is used instead.
/// Photoshop/Adobe files store inverted CMYK (APP14 marker), where the stored
/// value already is 1-C.
enum CMYKToSRGB {
    static func convert(_ image: PixelImage, adobeInverted: Bool) -> PixelImage {
        precondition(image.channels == 4 && !image.hasAlpha)
        let n = image.width * image.height
        var out = [UInt8](repeating: 0, count: n * 3)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for p in 0..<n {
                    var v = (UInt32(src[p * 4]), UInt32(src[p * 4 + 1]), UInt32(src[p * 4 + 2]), UInt32(src[p * 4 + 3]))
                    if !adobeInverted { v = (255 - v.0, 255 - v.1, 255 - v.2, 255 - v.3) }
                    dst[p * 3] = UInt8(truncatingIfNeeded: (v.0 * v.3 + 127) / 255)
                    dst[p * 3 + 1] = UInt8(truncatingIfNeeded: (v.1 * v.3 + 127) / 255)
                    dst[p * 3 + 2] = UInt8(truncatingIfNeeded: (v.2 * v.3 + 127) / 255)
                }
            }
        }
        return PixelImage(width: image.width, height: image.height, channels: 3, hasAlpha: false, pixels: out)
    }
}
