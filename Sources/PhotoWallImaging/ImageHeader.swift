/// EXIF orientation: how the stored pixels must be transformed to be upright.
///
/// Raw values are the TIFF/EXIF tag 0x0112 values. Missing, out-of-range or
/// unreadable tags are `.up`.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    case up = 1, upMirrored = 2, down = 3, downMirrored = 4
    case leftMirrored = 5, right = 6, rightMirrored = 7, left = 8

    /// Orientations 5-8 swap width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// Maps any tag value to an orientation, `.up` for anything outside 1...8.
    public init(exifValue: Int) {
        self = ImageOrientation(rawValue: exifValue) ?? .up
    }
}

/// What the header says about an image, read without decoding pixels.
public struct ImageHeader: Sendable, Hashable {
    /// A decodable type (others are refused before a header is read).
    public var type: ImageType
    /// Stored size in pixels, before orientation.
    public var width: Int
    public var height: Int
    /// From JPEG APP1 EXIF, the PNG `eXIf` or the WebP `EXIF` chunk; `.up` when absent or
    /// malformed, and always `.up` for HEIF/AVIF (libheif applies their own transforms).
    public var orientation: ImageOrientation
    /// Whether the JPEG is progressive or the PNG is Adam7 interlaced (both
    /// need full-image decoder memory).
    public var isProgressive: Bool

    /// Size after applying `orientation`, in pixels.
    public var uprightWidth: Int { orientation.swapsDimensions ? height : width }
    public var uprightHeight: Int { orientation.swapsDimensions ? width : height }

    /// Width x height / 10^6.
    public var megapixels: Double { Double(width) * Double(height) / 1_000_000 }
}
