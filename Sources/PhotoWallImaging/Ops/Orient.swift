/// Applies an EXIF orientation to a (small, already resized) image so that it
/// is upright; the output needs no orientation tag.
enum Orient {
    static func apply(_ orientation: ImageOrientation, to image: PixelImage) -> PixelImage {
        guard orientation != .up else { return image }
        let w = image.width, h = image.height, c = image.channels
        let outW = orientation.swapsDimensions ? h : w
        let outH = orientation.swapsDimensions ? w : h
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        // Output (x, y) comes from stored (sx, sy).
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case .up: (sx, sy) = (x, y)
                        case .upMirrored: (sx, sy) = (w - 1 - x, y)
                        case .down: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case .downMirrored: (sx, sy) = (x, h - 1 - y)
                        case .leftMirrored: (sx, sy) = (y, x)
                        case .right: (sx, sy) = (y, h - 1 - x)
                        case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                        case .left: (sx, sy) = (w - 1 - y, x)
                        }
                        let s = (sy * w + sx) * c, d = (y * outW + x) * c
                        for k in 0..<c { dst[d + k] = src[s + k] }
                    }
                }
            }
        }
        return PixelImage(width: outW, height: outH, channels: c, hasAlpha: image.hasAlpha,
                          premultiplied: image.premultiplied, pixels: out)
    }
}
