/// The PNG container, written byte by byte: the signature, chunks with their CRC-32, and zlib streams
/// of stored (uncompressed) deflate blocks for `IDAT`. For images whose pixels are made here (the mock
/// provider's avatars, test inputs of a given shape); photos are encoded with libpng (`PhotoWallImaging`).
/// - Source: PNG (W3C PNG 3rd ed., RFC 2083) §5 chunks and CRC; zlib RFC 1950; deflate RFC 1951 §3.2.4.
public enum PNGContainer {
    /// The 8-byte PNG signature.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A chunk: length, `type` (4 ASCII letters), `data`, and the CRC-32 of type and data.
    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typeAndData + be32(crc32(typeAndData))
    }

    /// The signature and the `IHDR` chunk of a `width` x `height` image of `bitDepth` bits per sample
    /// and `colourType` (0 grey, 2 RGB, …), deflate, adaptive filtering, no interlace: the start of a
    /// file whose other chunks follow.
    public static func head(width: Int, height: Int, bitDepth: UInt8, colourType: UInt8) -> [UInt8] {
        signature + chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [bitDepth, colourType, 0, 0, 0])
    }

    /// A whole file: `head`, one `IDAT` holding `scanlines` (each row its filter byte, then its
    /// samples) in stored deflate blocks, and `IEND`.
    public static func file(width: Int, height: Int, bitDepth: UInt8, colourType: UInt8, scanlines: [UInt8]) -> [UInt8] {
        head(width: width, height: height, bitDepth: bitDepth, colourType: colourType)
            + chunk("IDAT", storedZlib(scanlines)) + chunk("IEND", [])
    }

    /// `v` as 4 big-endian bytes.
    public static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The CRC-32 of `bytes` (ISO 3309, as PNG and zlib use it).
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        let table = crcTable
        var c: UInt32 = 0xFFFF_FFFF
        bytes.withUnsafeBufferPointer { p in
            for b in p { c = table[Int((c ^ UInt32(b)) & 255)] ^ (c >> 8) }
        }
        return ~c
    }

    /// The Adler-32 of `bytes` (RFC 1950), reduced every 5,552 bytes (the most that can't overflow).
    public static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        bytes.withUnsafeBufferPointer { p in
            var i = 0
            while i < p.count {
                let end = min(p.count, i + 5552)
                while i < end { a += UInt32(p[i]); b += a; i += 1 }
                a %= 65521; b %= 65521
            }
        }
        return b << 16 | a
    }

    /// A zlib stream holding `raw` uncompressed: stored deflate blocks of at most 65,535 bytes, then
    /// the Adler-32 of `raw`.
    public static func storedZlib(_ raw: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let n = min(65_535, raw.count - start)
            let last: UInt8 = start + n == raw.count ? 1 : 0
            out += [last, UInt8(n & 255), UInt8(n >> 8), UInt8(~n & 255), UInt8(~n >> 8 & 255)]
            out += raw[start..<start + n]
            start += n
        } while start < raw.count
        return out + be32(adler32(raw))
    }
}
