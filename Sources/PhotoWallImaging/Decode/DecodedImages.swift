internal import CImageShim

/// Colour model of decoded pixels, before any ICC conversion.
enum SourceColour: Equatable {
    case grey
    case rgb
    /// 4-channel CMYK as stored; Adobe (APP14) files hold inverted values.
    case cmyk(adobeInverted: Bool)
}

/// What a decoder hands to the finishing steps: one resized image per
/// requested size (stored orientation, possibly premultiplied), plus the
/// colour information needed to convert them to sRGB.
struct DecodedImages {
    var images: [PixelImage]
    var colour: SourceColour
    var iccProfile: [UInt8]?
}

/// A requested output size in stored (not upright) orientation.
struct ResizeTarget: Equatable {
    var width: Int
    var height: Int
}

/// Turns CImageShim status codes into `ImagingError`s.
enum ShimStatus {
    static func check(_ status: Int32, _ message: @autoclosure () -> String, type: ImageType,
                      options: ThumbnailOptions) throws(ImagingError) {
        switch Int(status) {
        case CImageShim_OK:
            return
        case CImageShim_TRUNCATED:
            throw .truncated(type, message())
        case CImageShim_MEMORY:
            throw ImagingError(code: .decoderMemoryExceeded,
                               message: "\(type) image needs more decoder memory than the "
                                   + "\(options.maxDecoderMemoryBytes >> 20) MiB limit (\(message())).",
                               detectedType: type)
        case CImageShim_UNSUPPORTED:
            throw ImagingError(code: .unsupportedType,
                               message: "Unsupported \(type) variant: \(message()). Upload a baseline or progressive 8-bit JPEG, or a PNG.",
                               detectedType: type)
        case CImageShim_LIMIT:
            throw ImagingError(code: .tooLarge, message: "Image too large: \(message()).", detectedType: type)
        case CImageShim_READ_FAILED:
            throw ImagingError(code: .readFailed, message: "Cannot read the \(type) file: \(message()).",
                               detectedType: type)
        default:
            throw .corrupt(type, message())
        }
    }
}
