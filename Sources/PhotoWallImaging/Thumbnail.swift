/// An encoded, upright thumbnail.
public struct Thumbnail: Sendable, Hashable {
    /// The encoded file: a baseline JPEG (no EXIF, so no orientation tag) or a PNG. For a box a
    /// baseline JPEG source already fits, upright, without a colour profile and coded no finer than
    /// the thumbnail quality, the source's own coded data without its metadata (`JPEGPassthrough`).
    public var bytes: [UInt8]
    /// `.jpeg` or `.png`.
    public var format: ImageType
    /// Thumbnail size in pixels, upright; fits the requested box.
    public var width: Int
    public var height: Int
    /// Size of the source after applying its EXIF orientation, in pixels
    /// (what the service stores as the image's `width` / `height`).
    public var sourceUprightWidth: Int
    public var sourceUprightHeight: Int
    /// Whether the thumbnail has an alpha channel (PNG only).
    public var hasAlpha: Bool

    /// MIME type of `bytes`.
    public var mimeType: String { format.mimeType }
}
