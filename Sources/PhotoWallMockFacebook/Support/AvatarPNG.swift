import PhotoWallCore
/// Draws a profile picture (a light silhouette on the user's colour) and encodes it as PNG.
///
/// The PNG is 8-bit RGB, no interlace, with stored (uncompressed) deflate blocks: about
/// 3 × width × height bytes, so sizes are capped by the caller (`MockFacebookServer.maxPictureEdge`).
/// The container comes from `PNGContainer`.
enum AvatarPNG {
    /// - Parameters:
    ///   - width, height: pixels, 1…4096.
    ///   - color: `#rrggbb`; anything else draws grey.
    static func make(width: Int, height: Int, color: String) -> [UInt8] {
        let background = rgb(color) ?? (127, 140, 141)
        let light = (mix(background.0), mix(background.1), mix(background.2))
        let w = Double(width), h = Double(height), side = min(w, h)
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0) // filter: none
            for x in 0..<width {
                let px = Double(x) + 0.5, py = Double(y) + 0.5
                let hx = (px - w / 2) / (0.19 * side), hy = (py - h * 0.40) / (0.19 * side)
                let sx = (px - w / 2) / (0.36 * side), sy = (py - h * 1.02) / (0.40 * side)
                let inside = hx * hx + hy * hy <= 1 || sx * sx + sy * sy <= 1
                let c = inside ? light : background
                raw.append(c.0); raw.append(c.1); raw.append(c.2)
            }
        }
        return PNGContainer.file(width: width, height: height, bitDepth: 8, colourType: 2 /* RGB */, scanlines: raw)
    }

    private static func mix(_ c: UInt8) -> UInt8 { UInt8((Int(c) * 45 + 255 * 55) / 100) }

    /// `#rrggbb` (either case) as red, green, blue; nil for any other text.
    static func rgb(_ hex: String) -> (UInt8, UInt8, UInt8)? {
        guard hex.hasPrefix("#"), let v = HexBytes.decode(String(hex.dropFirst())), v.count == 3 else { return nil }
        return (v[0], v[1], v[2])
    }
}
