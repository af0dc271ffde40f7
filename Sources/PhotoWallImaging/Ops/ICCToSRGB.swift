internal import CLCMS2

/// Converts pixels described by an embedded ICC profile to sRGB with lcms2
/// (grey profiles to grey with the sRGB tone curve, so grey stays grey).
///
/// The intent is relative colorimetric with black-point compensation when the
/// profile supports it (what Photoshop does for print-to-screen; CMYK blacks
/// stay black), else perceptual: jpegli's XYB profiles only carry a perceptual
/// (A2B0) table and come out green/purple without it. Profiles that do not match the pixels'
/// colour space, or that lcms2 cannot parse, are ignored (pixels unchanged).
enum ICCToSRGB {
    // lcms2.h pixel formats (its TYPE_* macros are not importable):
    // COLORSPACE_SH(s) = s << 16, EXTRA_SH(e) = e << 7, CHANNELS_SH(c) = c << 3,
    // BYTES_SH(b) = b, FLAVOR_SH(f) = f << 13; PT_GRAY 3, PT_RGB 4, PT_CMYK 6.
    private static let typeGrey8: UInt32 = 3 << 16 | 1 << 3 | 1
    private static let typeGreyA8: UInt32 = 3 << 16 | 1 << 7 | 1 << 3 | 1
    private static let typeRGB8: UInt32 = 4 << 16 | 3 << 3 | 1
    private static let typeRGBA8: UInt32 = 4 << 16 | 1 << 7 | 3 << 3 | 1
    private static let typeCMYK8: UInt32 = 6 << 16 | 4 << 3 | 1
    private static let typeCMYK8Reversed: UInt32 = typeCMYK8 | 1 << 13
    private static let flagCopyAlpha: UInt32 = 0x0400_0000
    private static let flagBlackPointCompensation: UInt32 = 0x2000
    private static let intentPerceptual: UInt32 = 0
    private static let intentRelative: UInt32 = 1

    /// - Parameters:
    ///   - image: Straight (not premultiplied) pixels: grey, grey+alpha, RGB,
    ///     RGBA, or CMYK (4 channels without alpha).
    ///   - profile: The embedded ICC profile bytes.
    ///   - cmykInverted: CMYK values are stored inverted (Adobe APP14).
    /// - Returns: Converted pixels (CMYK becomes RGB), or `nil` if the profile is unusable.
    static func convert(_ image: PixelImage, profile: [UInt8], cmykInverted: Bool = false) -> PixelImage? {
        precondition(!image.premultiplied)
        guard let source = profile.withUnsafeBytes({ cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) })
        else { return nil }
        defer { cmsCloseProfile(source) }
        let space = cmsGetColorSpace(source)
        let isCMYK = image.channels == 4 && !image.hasAlpha
        let inFormat: UInt32, outFormat: UInt32, outChannels: Int
        var flags: UInt32 = flagBlackPointCompensation
        switch (image.channels, isCMYK) {
        case (1, _):
            guard space == cmsSigGrayData else { return nil }
            (inFormat, outFormat, outChannels) = (typeGrey8, typeGrey8, 1)
        case (2, _):
            guard space == cmsSigGrayData else { return nil }
            (inFormat, outFormat, outChannels) = (typeGreyA8, typeGreyA8, 2)
            flags |= flagCopyAlpha
        case (3, _):
            guard space == cmsSigRgbData else { return nil }
            (inFormat, outFormat, outChannels) = (typeRGB8, typeRGB8, 3)
        case (4, true):
            guard space == cmsSigCmykData else { return nil }
            (inFormat, outFormat, outChannels) = (cmykInverted ? typeCMYK8Reversed : typeCMYK8, typeRGB8, 3)
        default:
            guard space == cmsSigRgbData else { return nil }
            (inFormat, outFormat, outChannels) = (typeRGBA8, typeRGBA8, 4)
            flags |= flagCopyAlpha
        }
        guard let target = outChannels <= 2 ? greyProfile() : cmsCreate_sRGBProfile() else { return nil }
        defer { cmsCloseProfile(target) }
        let intent = cmsIsIntentSupported(source, intentRelative, UInt32(LCMS_USED_AS_INPUT)) != 0
            ? intentRelative : intentPerceptual
        guard let transform = cmsCreateTransform(source, inFormat, target, outFormat, intent, flags) else {
            return nil
        }
        defer { cmsDeleteTransform(transform) }
        let pixels = image.width * image.height
        var out = [UInt8](repeating: 0, count: pixels * outChannels)
        image.pixels.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                cmsDoTransform(transform, src.baseAddress, dst.baseAddress, UInt32(pixels))
            }
        }
        return PixelImage(width: image.width, height: image.height, channels: outChannels,
                          hasAlpha: image.hasAlpha, pixels: out)
    }

    /// A grey profile with D50 white and the sRGB tone curve.
    private static func greyProfile() -> cmsHPROFILE? {
        var params: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        guard let curve = cmsBuildParametricToneCurve(nil, 4, &params) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        return cmsCreateGrayProfile(cmsD50_xyY(), curve)
    }
}
