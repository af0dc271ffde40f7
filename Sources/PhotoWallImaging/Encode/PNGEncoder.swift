internal import CImageShim

/// 8-bit PNG (grey, grey+alpha, RGB or RGBA) via libpng, zlib level 6.
enum PNGEncoder {
    /// - Parameter image: Straight (not premultiplied) pixels, 1-4 channels.
    static func encode(_ image: PixelImage) throws(ImagingError) -> [UInt8] {
        precondition(!image.premultiplied)
        return try ShimEncoding.run(format: .png) { out, length, message, capacity in
            image.pixels.withUnsafeBufferPointer { px in
                CImageShim_png_encode(px.baseAddress, UInt32(image.width), UInt32(image.height), image.rowBytes,
                                      Int32(image.channels), out, length, message, capacity)
            }
        }
    }
}
