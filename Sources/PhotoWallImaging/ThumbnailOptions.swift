/// Output format choice for thumbnails.
public enum ThumbnailFormat: String, Sendable, Hashable, CaseIterable {
    /// JPEG for opaque results, PNG when the result has real transparency
    /// (some alpha below 255 after resizing).
    case auto
    /// Always JPEG; transparent pixels are flattened onto `background`.
    case jpeg
    /// Always PNG (lossless; keeps alpha).
    case png
}

/// An sRGB colour with 8-bit channels.
public struct RGBColor: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    /// - Parameters: red, green, blue: 0...255 each.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    public static let black = RGBColor(red: 0, green: 0, blue: 0)
}

/// How to make a thumbnail, and the limits that protect the decoder.
///
/// The defaults give a 256-pixel box, JPEG quality 85 for opaque images,
/// PNG for transparent ones, white flattening, and a 100-megapixel cap.
public struct ThumbnailOptions: Sendable, Hashable {
    /// Side of the square box the upright thumbnail must fit in, in pixels
    /// (1...16384). The aspect ratio is kept; images are never enlarged, so a
    /// 100x50 source gives a 100x50 thumbnail in a 256 box (like Pillow's
    /// `thumbnail`, unlike `vipsthumbnail`).
    public var longestEdgePixels: Int = 256
    /// Output format; see ``ThumbnailFormat``.
    public var format: ThumbnailFormat = .auto
    /// JPEG quality, 1...100 (libjpeg scale).
    public var quality: Int = 85
    /// Colour that transparent pixels are flattened onto for JPEG output.
    public var background: RGBColor = .white
    /// Largest accepted source, in megapixels (width x height / 10^6), checked
    /// from the header before any pixel is decoded.
    public var maxMegapixels: Double = 100
    /// Largest accepted width or height, in pixels (65500 is libjpeg's own limit).
    public var maxSidePixels: Int = 65_500
    /// Memory cap for the decoder itself, in bytes: libjpeg's
    /// `max_memory_to_use` (progressive JPEGs keep all coefficients, about
    /// 2 bytes x pixels x components) and the full-frame buffer that Adam7
    /// interlaced PNGs need.
    public var maxDecoderMemoryBytes: Int = 256 << 20
    /// Largest file accepted by the path-based API, in bytes.
    public var maxFileBytes: Int = 256 << 20
    /// Pre-shrinking (the integer box filter, libwebp's and libheif's scaled
    /// decodes) stops while at least this factor is left for the final
    /// Lanczos3 filter. 2.0 keeps the aliasing of the box stages invisible
    /// (libvips' choice); lower values are faster and softer. JPEG DCT scaling
    /// has its own ``jpegScaleGap``. Range 1.0...8.0.
    public var reducingGap: Double = 2.0
    /// JPEG shrink-on-load: libjpeg's DCT scaling (1/2, 1/4, 1/8) stops while
    /// at least this factor is left for the box
    /// and Lanczos3 stages, on both axes. The Huffman decode costs the same at
    /// every scale, but the IDCT, upsampling, colour conversion and resize
    /// shrink with it: 1.25 decodes a 12 MP 4:3 photo for a 256 box at 1/8
    /// (504x378), as Pillow's `draft` does, where 2.0 (libvips' choice) decodes
    /// it at 1/4 for about 1.6x the work. 1/8 scaling is the exact mean of each
    /// 8x8 block; on the corpus the result is within 40.7-51 dB PSNR of both
    /// the 1/4 decode and a full-size decode (camera photos: 45-48 dB).
    /// Range 1.0...8.0.
    public var jpegScaleGap: Double = 1.25

    /// The defaults, with the three most used settings overridable; set the
    /// limits as properties. Invalid values (outside the documented ranges)
    /// are a programming error and trap when the options are used.
    public init(longestEdgePixels: Int = 256, format: ThumbnailFormat = .auto, quality: Int = 85) {
        self.longestEdgePixels = longestEdgePixels
        self.format = format
        self.quality = quality
    }

    func validate() {
        precondition((1...16384).contains(longestEdgePixels), "longestEdgePixels must be in 1...16384")
        precondition((1...100).contains(quality), "quality must be in 1...100")
        precondition(maxMegapixels > 0 && maxSidePixels > 0 && maxDecoderMemoryBytes > 0 && maxFileBytes > 0,
                     "limits must be positive")
        precondition((1.0...8.0).contains(reducingGap), "reducingGap must be in 1.0...8.0")
        precondition((1.0...8.0).contains(jpegScaleGap), "jpegScaleGap must be in 1.0...8.0")
    }
}
