/// An image container format, as recognised from its leading magic bytes.
///
/// JPEG, PNG, WebP, HEIC, HEIF and AVIF can be decoded (see ``isDecodable``);
/// every other known type is recognised so that uploads can be refused with a
/// precise message ("unsupported image type: GIF") instead of a generic parse failure.
public enum ImageType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case jpeg, png, gif, webp, avif, heic, svg, pdf, bmp, tiff
    /// HEIF without an HEVC brand (`ftyp` brands `mif1`/`msf1` only): decoded by libheif like HEIC.
    case heif
    /// Not recognised by any signature (including damaged JPEG/PNG signatures).
    case unknown

    /// Upper-case display name used in error messages, e.g. `"JPEG"`.
    public var description: String {
        switch self {
        case .unknown: return "unknown"
        default: return rawValue.uppercased()
        }
    }

    /// Whether `Thumbnailer` can decode this type.
    public var isDecodable: Bool {
        switch self {
        case .jpeg, .png, .webp, .heic, .heif, .avif: return true
        default: return false
        }
    }

    /// Whether libheif decodes this type (HEIC, HEIF, AVIF: the ISO-BMFF image formats).
    var isHEIFFamily: Bool { self == .heic || self == .heif || self == .avif }

    /// MIME type for stored files (`application/octet-stream` when unknown).
    public var mimeType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .gif: return "image/gif"
        case .webp: return "image/webp"
        case .avif: return "image/avif"
        case .heic: return "image/heic"
        case .heif: return "image/heif"
        case .svg: return "image/svg+xml"
        case .pdf: return "application/pdf"
        case .bmp: return "image/bmp"
        case .tiff: return "image/tiff"
        case .unknown: return "application/octet-stream"
        }
    }

    /// Conventional file extension without the dot (`"jpg"`, `"png"`, ...).
    public var fileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .tiff: return "tif"
        case .unknown: return "bin"
        default: return rawValue
        }
    }
}
