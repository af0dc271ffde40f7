/// The steps after resizing, on the small image: alpha, colour, orientation, encode.
enum Finish {
    static func thumbnail(from resized: PixelImage, decoded: DecodedImages, header: ImageHeader,
                          options: ThumbnailOptions) throws(ImagingError) -> Thumbnail {
        let (image, format) = prepare(resized, decoded: decoded, header: header, options: options)
        let bytes = format == .jpeg
            ? try JPEGEncoder.encode(image, quality: options.quality)
            : try PNGEncoder.encode(image)
        return Thumbnail(bytes: bytes, format: format, width: image.width, height: image.height,
                         sourceUprightWidth: header.uprightWidth, sourceUprightHeight: header.uprightHeight,
                         hasAlpha: image.hasAlpha)
    }

    /// The upright, sRGB, straight-alpha pixels and the format they will be encoded in.
    static func prepare(_ resized: PixelImage, decoded: DecodedImages, header: ImageHeader,
                        options: ThumbnailOptions) -> (PixelImage, ImageType) {
        var image = resized
        Premultiply.undo(&image)
        switch decoded.colour {
        case .cmyk(let inverted):
            image = decoded.iccProfile.flatMap { ICCToSRGB.convert(image, profile: $0, cmykInverted: inverted) }
                ?? CMYKToSRGB.convert(image, adobeInverted: inverted)
        case .grey, .rgb:
            if let profile = decoded.iccProfile, let converted = ICCToSRGB.convert(image, profile: profile) {
                image = converted
            }
        }
        if image.hasAlpha && !Alpha.hasTransparency(image) {
            image = Alpha.dropOpaqueAlpha(image)
        }
        let format: ImageType = switch options.format {
        case .png: .png
        case .jpeg: .jpeg
        case .auto: image.hasAlpha ? .png : .jpeg
        }
        if format == .jpeg && image.hasAlpha {
            image = Alpha.flatten(image, onto: options.background)
        }
        return (Orient.apply(header.orientation, to: image), format)
    }
}
