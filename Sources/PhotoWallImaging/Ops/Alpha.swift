/// Alpha decisions after resizing: drop an all-opaque alpha channel, or
/// flatten transparency onto a background colour for JPEG output.
enum Alpha {
    /// Whether some pixel is not fully opaque.
    static func hasTransparency(_ image: PixelImage) -> Bool {
        guard image.hasAlpha else { return false }
        let c = image.channels
        return image.pixels.withUnsafeBufferPointer { px in
            var i = c - 1
            while i < px.count {
                if px[i] != 255 { return true }
                i += c
            }
            return false
        }
    }

    /// Removes the alpha channel of an image that is fully opaque.
    static func dropOpaqueAlpha(_ image: PixelImage) -> PixelImage {
        precondition(image.hasAlpha)
        let c = image.channels, n = image.width * image.height
        var out = [UInt8](repeating: 0, count: n * (c - 1))
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for p in 0..<n {
                    for k in 0..<(c - 1) { dst[p * (c - 1) + k] = src[p * c + k] }
                }
            }
        }
        return PixelImage(width: image.width, height: image.height, channels: c - 1, hasAlpha: false, pixels: out)
    }

    /// Composites straight (non-premultiplied) alpha over `background`.
    /// Grey+alpha stays grey when the background is grey, otherwise becomes RGB.
    static func flatten(_ image: PixelImage, onto background: RGBColor) -> PixelImage {
        precondition(image.hasAlpha && !image.premultiplied)
        let c = image.channels, n = image.width * image.height
        let greyBackground = background.red == background.green && background.green == background.blue
        let outChannels = c == 2 && greyBackground ? 1 : 3
        let bg = [UInt32(background.red), UInt32(background.green), UInt32(background.blue)]
        var out = [UInt8](repeating: 0, count: n * outChannels)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for p in 0..<n {
                    let a = UInt32(src[p * c + c - 1])
                    for k in 0..<outChannels {
                        let colour = UInt32(src[p * c + (c == 2 ? 0 : k)])
                        let t = colour * a + bg[k] * (255 - a) + 127
                        dst[p * outChannels + k] = UInt8(truncatingIfNeeded: t / 255)
                    }
                }
            }
        }
        return PixelImage(width: image.width, height: image.height, channels: outChannels, hasAlpha: false,
                          pixels: out)
    }
}
