import PhotoWallCore

/// Builds PNG files byte by byte, for inputs our encoder would never write
/// (a zTXt decompression bomb). Chunks and checksums come from `PNGContainer`.
enum PNGBuilder {
    /// A 1x1 grey PNG whose zTXt chunk inflates to about `copies` x 258 bytes.
    static func zTXtBomb(copies: Int) -> [UInt8] {
        var png = PNGContainer.head(width: 1, height: 1, bitDepth: 8, colourType: 0 /* grey */)
        png += PNGContainer.chunk("zTXt", Array("Comment".utf8) + [0, 0] + deflateRun(byte: 0x61, copies: copies))
        // IDAT: zlib stored block holding filter byte 0 and one pixel of 128.
        let raw: [UInt8] = [0, 128]
        png += PNGContainer.chunk("IDAT", PNGContainer.storedZlib(raw))
        png += PNGContainer.chunk("IEND", [])
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
        return out + PNGContainer.be32(UInt32(b << 16 | a))
    }
}
