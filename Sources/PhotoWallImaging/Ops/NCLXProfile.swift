internal import CLCMS2

/// Turns HEIF/AVIF `nclx` colour information (ITU-T H.273 code points) into an ICC profile, so
/// the pixels go through the same lcms2 conversion to sRGB as an embedded profile (``ICCToSRGB``).
///
/// Transfer functions: sRGB (13) and the BT.709 family (1, 6, 14, 15; unspecified 2) use the sRGB
/// curve, as browsers do for still images; gamma 2.2 (4), gamma 2.8 (5) and linear (8) their
/// own curves. PQ (16) and HLG (18) are HDR: PhotoWall does not tone-map, they are treated as sRGB.
enum NCLXProfile {
    typealias XY = (x: Double, y: Double)

    /// - Parameters:
    ///   - primaries: H.273 ColourPrimaries (1 BT.709/sRGB, 9 BT.2020, 12 Display P3, ...).
    ///   - transfer: H.273 TransferCharacteristics.
    ///   - red, green, blue, white: The primaries' CIE xy chromaticities (libheif fills them in
    ///     from the code point).
    /// - Returns: ICC bytes, or nil when the colours already are sRGB (BT.709 primaries or
    ///   unspecified, with an sRGB-like curve) or lcms2 cannot build the profile.
    static func icc(primaries: Int, transfer: Int, red: XY, green: XY, blue: XY, white: XY) -> [UInt8]? {
        let srgbLike: Set<Int> = [1, 2, 6, 13, 14, 15, 16, 18]
        let curveKind = srgbLike.contains(transfer) ? 13 : transfer
        if (primaries == 1 || primaries == 2) && curveKind == 13 { return nil }
        func inside(_ p: XY) -> Bool { p.x > 0 && p.x < 1 && p.y > 0 && p.y < 1 }
        guard inside(red), inside(green), inside(blue), inside(white) else { return nil }
        let curve: OpaquePointer?
        switch curveKind {
        case 4: curve = cmsBuildGamma(nil, 2.2)
        case 5: curve = cmsBuildGamma(nil, 2.8)
        case 8: curve = cmsBuildGamma(nil, 1.0)
        default:
            var params: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            curve = cmsBuildParametricToneCurve(nil, 4, &params)
        }
        guard let curve else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var whitePoint = cmsCIExyY(x: white.x, y: white.y, Y: 1)
        var colorants = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: red.x, y: red.y, Y: 1),
                                        Green: cmsCIExyY(x: green.x, y: green.y, Y: 1),
                                        Blue: cmsCIExyY(x: blue.x, y: blue.y, Y: 1))
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&whitePoint, &colorants, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        var size: UInt32 = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return bytes
    }
}
