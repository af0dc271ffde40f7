import PhotoWallCore
/// Draws a profile picture (a light silhouette on the user's colour) and encodes it as PNG.
///
/// The PNG is 8-bit RGB, no interlace, with stored (uncompressed) deflate blocks: about
/// 3 × width × height bytes, so sizes are capped by the caller (`MockFacebookServer.maxPictureEdge`).
/// Source: PNG spec (RFC 2083 / W3C PNG 3rd ed.), zlib RFC 1950, deflate RFC 1951 §3.2.4.
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
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0] // depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace
        chunk("IHDR", header, into: &png)
        chunk("IDAT", zlibStored(raw), into: &png)
        chunk("IEND", [], into: &png)
        return png
    }

    private static func mix(_ c: UInt8) -> UInt8 { UInt8((Int(c) * 45 + 255 * 55) / 100) }

    /// `#rrggbb` (either case) as red, green, blue; nil for any other text.
    static func rgb(_ hex: String) -> (UInt8, UInt8, UInt8)? {
        guard hex.hasPrefix("#"), let v = HexBytes.decode(String(hex.dropFirst())), v.count == 3 else { return nil }
        return (v[0], v[1], v[2])
    }

    private static func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    private static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        out += bigEndian(UInt32(data.count))
        out += typeBytes
        out += data
        out += bigEndian(crc32(typeBytes + data))
    }

    /// zlib stream of stored deflate blocks (≤ 65 535 bytes each) with the Adler-32 trailer.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65_535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out.append(final)
            out += [UInt8(n & 255), UInt8(n >> 8), UInt8(~n & 255), UInt8((~n >> 8) & 255)]
            out += data[offset..<offset + n]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        out += bigEndian(b << 16 | a)
        return out
    }

    private static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
