/// Builds PNG files byte by byte, for inputs our encoder would never write
/// (a zTXt decompression bomb).
enum PNGBuilder {
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        var out = be32(UInt32(data.count)) + typeBytes + data
        out += be32(crc32(typeBytes + data))
        return out
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }

    /// A 1x1 grey PNG whose zTXt chunk inflates to about `copies` x 258 bytes.
    static func zTXtBomb(copies: Int) -> [UInt8] {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", be32(1) + be32(1) + [8, 0, 0, 0, 0])
        png += chunk("zTXt", Array("Comment".utf8) + [0, 0] + deflateRun(byte: 0x61, copies: copies))
        // IDAT: zlib stored block holding filter byte 0 and one pixel of 128.
        let raw: [UInt8] = [0, 128]
        png += chunk("IDAT", [0x78, 0x01, 0x01, 0x02, 0x00, 0xFD, 0xFF] + raw + be32(adler32(raw)))
        png += chunk("IEND", [])
        return png
    }

    /// zlib stream of one literal `byte` followed by `copies` copies of
    /// <length 258, distance 1> in a fixed-Huffman block (RFC 1951 3.2.6).
    static func deflateRun(byte: UInt8, copies: Int) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x9C]
        var bitBuffer: UInt32 = 0, bitCount = 0
        func bits(_ value: UInt32, _ n: Int) {                 // LSB first
            bitBuffer |= value << bitCount
            bitCount += n
            while bitCount >= 8 {
                out.append(UInt8(bitBuffer & 255))
                bitBuffer >>= 8
                bitCount -= 8
            }
        }
        func huffman(_ code: UInt32, _ n: Int) {               // MSB first
            for i in stride(from: n - 1, through: 0, by: -1) { bits(code >> i & 1, 1) }
        }
        bits(1, 1)                                             // BFINAL
        bits(1, 2)                                             // BTYPE = fixed
        huffman(0x30 + UInt32(byte), 8)                        // literal 0-143
        for _ in 0..<copies {
            huffman(0b1100_0101, 8)                            // length code 285 = 258
            huffman(0, 5)                                      // distance code 0 = 1
        }
        huffman(0, 7)                                          // end of block (256)
        if bitCount > 0 { out.append(UInt8(bitBuffer & 255)) }
        // Adler-32 of n equal bytes, in closed form.
        let n = Int64(1 + 258 * copies), v = Int64(byte), m: Int64 = 65521
        let a = (1 + v * n) % m
        let b = (n % m + (v * ((n * (n + 1) / 2) % m)) % m) % m
        return out + be32(UInt32(b << 16 | a))
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for x in bytes {
            a = (a + UInt32(x)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }
}
