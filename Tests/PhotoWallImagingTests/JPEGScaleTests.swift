import Testing
@testable import PhotoWallImaging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The JPEG DCT scale (`ThumbnailOptions.jpegScaleGap`, 1.25 since issue 17)
/// against the output before it (`jpegScaleGap = 2.0`, libvips' 1/4 for a
/// 12 MP photo) and against a full-size decode, on every corpus JPEG that
/// decodes: photos, EXIF orientations, CMYK, ICC and coding variants.
///
/// Named tolerance ("JPEG scale tolerance"), on the finished upright sRGB
/// pixels before encoding, for every file whose output changed:
/// - against the previous output: PSNR >= 40 dB and at most 0.1 % of channel
///   values more than 24 apart;
/// - against a full-size decode (box pre-shrink + Lanczos3): PSNR >= 40 dB.
/// Measured on the corpus (22 files changed): 40.7-51.2 dB against the
/// previous output (camera photos 45-46 dB), 40.7-51.4 dB against a full-size
/// decode, at most 3 values more than 24 apart (flickr photo, of 160,512).
@Suite("JPEG DCT scale keeps the corpus output",
       .enabled(if: Corpus.isAvailable, "image corpus not found: set PHOTOWALL_CORPUS or provide ../shared/imagecorpus"))
struct JPEGScaleTests {
    static let jpegRows = Corpus.rows.filter {
        guard case .decodes = Expectation.of($0), let bytes = try? Corpus.bytes($0.path) else { return false }
        return ImageSniffer.sniff(bytes) == .jpeg
    }

    @Test("within the JPEG scale tolerance of the 1/4-scale output and of a full-size decode", arguments: jpegRows)
    func tolerance(_ row: ManifestRow) throws {
        let bytes = try Corpus.bytes(row.path)
        let now = try Self.upright(bytes, jpegScaleGap: 1.25, reducingGap: 2)
        let before = try Self.upright(bytes, jpegScaleGap: 2, reducingGap: 2)
        let full = try Self.upright(bytes, jpegScaleGap: 8, reducingGap: 2)      // no DCT scaling
        try #require(now.width == before.width && now.height == before.height && now.channels == before.channels
                     && now.hasAlpha == before.hasAlpha && full.width == now.width && full.height == now.height)
        guard now.pixels != before.pixels else { return }             // same DCT scale as before: identical
        let psnr = Self.psnr(now.pixels, before.pixels)
        #expect(psnr >= 40, "PSNR against the previous output \(psnr) dB")
        let far = zip(now.pixels, before.pixels).filter { abs(Int($0) - Int($1)) > 24 }.count
        #expect(far * 1000 <= now.pixels.count, "\(far) of \(now.pixels.count) values differ by more than 24")
        let fromFull = Self.psnr(now.pixels, full.pixels)
        #expect(fromFull >= 40, "PSNR against a full-size decode \(fromFull) dB")
    }

    @Test("a 12 MP 4:3 photo for a 256 box decodes at 1/8, as Pillow's draft does")
    func scale() {
        let target = ResizeTarget(width: 256, height: 192)
        #expect(JPEGDecoder.scaleDenominator(width: 4032, height: 3024, largest: target, gap: 1.25) == 8)
        #expect(JPEGDecoder.scaleDenominator(width: 4032, height: 3024, largest: target, gap: 2) == 4)
        #expect(ThumbnailOptions().jpegScaleGap == 1.25)
    }

    static func upright(_ bytes: [UInt8], jpegScaleGap: Double, reducingGap: Double) throws -> PixelImage {
        var options = ThumbnailOptions(longestEdgePixels: 256, format: .png)
        options.jpegScaleGap = jpegScaleGap
        options.reducingGap = reducingGap
        return try bytes.withUnsafeBytes {
            try Thumbnailer.uprightImages(from: $0, longestEdges: [256], options: options)[0].0
        }
    }

    /// Peak signal-to-noise ratio in dB over all channel values (infinity when equal).
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        let squares = zip(a, b).reduce(0.0) { $0 + Double((Int($1.0) - Int($1.1)) * (Int($1.0) - Int($1.1))) }
        guard squares > 0 else { return .infinity }
        return 10 * log10(255 * 255 / (squares / Double(a.count)))
    }
}
