#if canImport(Glibc)
import Glibc
#endif

/// A JPEG that is already what its thumbnail for a box would be, copied instead of decoded and
/// encoded again: its own coded data with the metadata taken out.
///
/// A source qualifies when every step of the pipeline would leave its pixels as they are, and its
/// coding is what `JPEGEncoder` would write or lighter:
/// - it fits the box (the thumbnailer never enlarges) and is upright (EXIF orientation 1 or none:
///   the caller checks both from the `ImageHeader`);
/// - baseline sequential (SOF0), 8-bit, 1 component or 3 that are YCbCr (component ids other than
///   `R`,`G`,`B`; no Adobe APP14, whose transform flag decides it);
/// - no ICC profile (an `ICC_PROFILE` APP2): a profiled source is converted to sRGB;
/// - its luminance quantization table is at least as coarse, summed, as libjpeg's standard table
///   scaled for `quality` (`jpeg_set_quality`, ITU-T T.81 Annex K.1): a finer source would make a
///   heavier file than the copy the encoder writes.
///
/// The copy is SOI, a JFIF APP0 (libjpeg's own, which fixes YCbCr for decoders), the source's
/// DQT, SOF0, DHT, DRI and SOS segments and entropy-coded data as they are, and EOI. Every APPn
/// (EXIF with its GPS position, XMP, IPTC, MPF and what it points to), every COM and anything after
/// EOI (a gain map, an appended file) is left out. The pixels decode exactly as the source's: no
/// generation loss, and no decode-and-encode work for this box.
///
/// Any structure this walk does not recognise (junk between markers, DNL, arithmetic coding, a
/// marker cut short, a second frame, a table defined twice) gives nil: the caller encodes as usual.
/// The walk does not check the entropy-coded data: the caller still decodes the source (for its
/// other boxes, or at 1/8 scale), so a damaged file is refused as it would be without the copy.
///
/// Source: ITU-T T.81 Annex B (marker segments, B.1.1.5 entropy-coded data and byte stuffing),
/// JFIF 1.02.
enum JPEGPassthrough {
    /// The copy of `source` (a whole JPEG file), or nil when it does not qualify (see the type's
    /// documentation) for a thumbnail at `quality` (1...100).
    static func copy(of source: UnsafeRawBufferPointer, quality: Int) -> [UInt8]? {
        let b = source, n = source.count
        guard n >= 4, b[0] == 0xFF, b[1] == 0xD8, let base = b.baseAddress else { return nil }
        var out: [UInt8] = [0xFF, 0xD8] + jfifSegment
        out.reserveCapacity(n + jfifSegment.count)
        var tableSums: [Int?] = [nil, nil, nil, nil]       // by DQT id (Tq 0...3): the sum of its 64 steps
        var lumaTable: Int?
        var sawScan = false
        var pos = 2
        while true {
            guard pos < n, b[pos] == 0xFF else { return nil }  // a marker must start here: no junk
            while pos < n, b[pos] == 0xFF { pos += 1 }         // fill bytes (B.1.1.2)
            guard pos < n else { return nil }
            let code = b[pos]
            pos += 1
            if code == 0xD9 {                                  // EOI: what follows is not the image's
                guard sawScan, let lumaTable, let sum = tableSums[lumaTable],
                      sum >= standardLuminanceSum(quality: quality) else { return nil }
                out += [0xFF, 0xD9]
                return out
            }
            guard pos + 2 <= n else { return nil }
            let length = Int(b[pos]) << 8 | Int(b[pos + 1])
            guard length >= 2, pos + length <= n else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: b[(pos + 2)..<(pos + length)])
            let end = pos + length
            var keep = true
            switch code {
            case 0xE0...0xEF, 0xFE:                            // APPn, COM: metadata, left out
                if code == 0xE2, body.starts(with: Array("ICC_PROFILE\0".utf8)) { return nil }
                if code == 0xEE, body.starts(with: Array("Adobe".utf8)) { return nil }
                keep = false
            case 0xDB:                                         // DQT: one or more 8-bit tables
                var i = 0
                while i < body.count {
                    let precision = body[i] >> 4, id = Int(body[i] & 15)
                    guard precision == 0, id < 4, tableSums[id] == nil, i + 65 <= body.count else { return nil }
                    tableSums[id] = body[(i + 1)..<(i + 65)].reduce(0) { $0 + Int($1) }
                    i += 65
                }
            case 0xC0:                                         // SOF0, the one frame
                guard lumaTable == nil, body.count >= 6, body[0] == 8 else { return nil }
                let components = Int(body[5])
                guard components == 1 || components == 3, body.count == 6 + 3 * components else { return nil }
                if components == 3, body[6] == 0x52, body[9] == 0x47, body[12] == 0x42 { return nil }  // 'R','G','B'
                let table = Int(body[8])
                guard table < 4 else { return nil }
                lumaTable = table
            case 0xC4, 0xDD:                                   // DHT, DRI
                break
            case 0xDA:                                         // SOS, then its entropy-coded data
                guard lumaTable != nil else { return nil }
                out += [0xFF, code]
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[pos..<end]))
                // The data runs to the first 0xFF that is neither stuffing (0xFF00) nor RSTn.
                var scan = end
                while true {
                    guard scan < n, let hit = memchr(base + scan, 0xFF, n - scan) else { return nil }
                    scan = base.distance(to: UnsafeRawPointer(hit))
                    guard scan + 1 < n else { return nil }
                    let next = b[scan + 1]
                    if next == 0x00 || (0xD0...0xD7).contains(next) { scan += 2; continue }
                    break
                }
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[end..<scan]))
                sawScan = true
                pos = scan
                continue
            default:                                           // another frame type, DNL, DAC, SOI...
                return nil
            }
            if keep {
                out += [0xFF, code]
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[pos..<end]))
            }
            pos = end
        }
    }

    /// The largest source copied, in bytes (8 MiB): a JPEG that fits a display box is far smaller,
    /// and a larger one is decoded streaming, never read whole.
    static let maxSourceBytes = 8 << 20

    /// APP0 `JFIF\0`, version 1.01, no density units, 1:1, no thumbnail: what libjpeg writes.
    static let jfifSegment: [UInt8] = [0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00,
                                       0x00, 0x01, 0x00, 0x01, 0x00, 0x00]

    /// ITU-T T.81 Table K.1, the luminance quantization table libjpeg scales.
    static let standardLuminance: [Int] = [
        16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
        14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
        18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
        49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
    ]

    /// The sum of the luminance steps `jpeg_set_quality(quality, force_baseline: TRUE)` writes:
    /// Table K.1 scaled by 5000/q (q < 50) or 200 − 2q percent, each step rounded and kept in 1...255.
    static func standardLuminanceSum(quality: Int) -> Int {
        let q = min(max(quality, 1), 100)
        let scale = q < 50 ? 5000 / q : 200 - 2 * q
        return standardLuminance.reduce(0) { $0 + min(max(($1 * scale + 50) / 100, 1), 255) }
    }
}
