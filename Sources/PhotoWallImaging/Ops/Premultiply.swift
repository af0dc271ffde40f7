/// Alpha premultiplication, so resampling never drags the colour of fully
/// transparent pixels into visible ones (no dark fringes, no hidden RGB).
enum Premultiply {
    /// Writes colour x alpha / 255 (rounded) for each pixel; alpha is copied.
    static func row(_ src: UnsafePointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>, pixels: Int,
                    channels: Int) {
        if channels == 4 {
            apply(src, dst, pixels, 4)
        } else {
            apply(src, dst, pixels, 2)
        }
    }

    @inline(__always)
    private static func apply(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, _ pixels: Int,
                              _ c: Int) {
        for p in 0..<pixels {
            let a = UInt32(src[p * c + c - 1])
            for k in 0..<(c - 1) {
                let t = UInt32(src[p * c + k]) &* a &+ 128
                dst[p * c + k] = UInt8(truncatingIfNeeded: (t &+ (t >> 8)) >> 8)
            }
            dst[p * c + c - 1] = UInt8(truncatingIfNeeded: a)
        }
    }

    /// Undoes premultiplication in place (colour is clamped to alpha first, so
    /// Lanczos overshoot cannot wrap around).
    static func undo(_ image: inout PixelImage) {
        guard image.hasAlpha, image.premultiplied else { return }
        let c = image.channels
        image.pixels.withUnsafeMutableBufferPointer { px in
            for p in 0..<(image.width * image.height) {
                let a = UInt32(px[p * c + c - 1])
                for k in 0..<(c - 1) {
                    if a == 0 {
                        px[p * c + k] = 0
                    } else {
                        let v = min(UInt32(px[p * c + k]), a)
                        px[p * c + k] = UInt8(truncatingIfNeeded: (v * 255 + a / 2) / a)
                    }
                }
            }
        }
        image.premultiplied = false
    }
}
