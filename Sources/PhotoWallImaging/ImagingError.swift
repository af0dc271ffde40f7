/// Why an image could not be turned into thumbnails.
///
/// Every case is caused by the uploaded bytes or the configured limits, never
/// by a bug, so callers map all codes to a client error (Parse error, HTTP 400).
/// `message` is one line, safe to show to the client.
public struct ImagingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An open set of failure kinds; match with `catch ImagingError.Code.tooLarge`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// Stable number for logs and metrics.
        public let rawValue: Int
        /// Wraps a raw value; prefer the named constants.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Not a JPEG, PNG, WebP, HEIC/HEIF or AVIF (by magic bytes), or a variant the
        /// decoder does not support (12-bit or lossless JPEG, a HEIF without a decodable primary image).
        public static let unsupportedType = Code(rawValue: 1)
        /// Over the megapixel, side-length or file-size limit; decided from the header.
        public static let tooLarge = Code(rawValue: 2)
        /// Damaged data: bad markers/chunks, CRC or Huffman errors.
        public static let corrupt = Code(rawValue: 3)
        /// The data ends before the image does.
        public static let truncated = Code(rawValue: 4)
        /// Decoding would need more memory than `maxDecoderMemoryBytes`.
        public static let decoderMemoryExceeded = Code(rawValue: 5)
        /// libjpeg or libpng failed to write the thumbnail.
        public static let encodeFailed = Code(rawValue: 6)
        /// The input file could not be read.
        public static let readFailed = Code(rawValue: 7)

        /// The constant's name, e.g. `"tooLarge"`.
        public var description: String {
            switch self {
            case .unsupportedType: return "unsupportedType"
            case .tooLarge: return "tooLarge"
            case .corrupt: return "corrupt"
            case .truncated: return "truncated"
            case .decoderMemoryExceeded: return "decoderMemoryExceeded"
            case .encodeFailed: return "encodeFailed"
            case .readFailed: return "readFailed"
            default: return "code \(rawValue)"
            }
        }

        /// Lets `catch ImagingError.Code.truncated` match an `ImagingError`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? ImagingError)?.code == code
        }
    }

    /// What went wrong.
    public var code: Code
    /// One line for the client, e.g. "Unsupported image type: GIF. Upload a JPEG or PNG image."
    public var message: String
    /// The type sniffed from the magic bytes, when known.
    public var detectedType: ImageType?

    /// - Parameters:
    ///   - code: The failure kind.
    ///   - message: One line for the client, ending with a full stop.
    ///   - detectedType: The sniffed type, if known.
    public init(code: Code, message: String, detectedType: ImageType? = nil) {
        self.code = code
        self.message = message
        self.detectedType = detectedType
    }

    /// Same as `message`.
    public var description: String { message }
}

extension ImagingError {
    static func unsupported(_ type: ImageType) -> ImagingError {
        let what = type == .unknown ? "unrecognised data (not an image type PhotoWall reads)" : type.description
        return ImagingError(code: .unsupportedType,
                            message: "Unsupported image type: \(what). Upload a JPEG, PNG, WebP, HEIC or AVIF image.",
                            detectedType: type)
    }

    static func tooLarge(width: Int, height: Int, limit: String, type: ImageType) -> ImagingError {
        let mp = Double(width) * Double(height) / 1_000_000
        let rounded = (mp * 10).rounded() / 10
        return ImagingError(code: .tooLarge,
                            message: "Image too large: \(width)x\(height) (\(rounded) megapixels); \(limit).",
                            detectedType: type)
    }

    static func corrupt(_ type: ImageType, _ detail: String) -> ImagingError {
        ImagingError(code: .corrupt, message: "Corrupt \(type) image: \(sentence(detail))", detectedType: type)
    }

    static func truncated(_ type: ImageType, _ detail: String) -> ImagingError {
        ImagingError(code: .truncated, message: "Truncated \(type) image: \(sentence(detail))", detectedType: type)
    }

    /// One line ending with a full stop (library messages have neither guarantee).
    private static func sentence(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.hasSuffix(".") ? line : line + "."
    }
}
