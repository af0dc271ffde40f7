#if canImport(Glibc)
import Glibc
#endif
import Testing
import PhotoWallTesting
@testable import PhotoWallImaging

/// A JPEG that already fits a box, upright, baseline, without a colour profile and coded no finer
/// than the thumbnail quality is its own thumbnail for that box: its coded data copied, the metadata
/// taken out (`JPEGPassthrough`), instead of decoded and encoded again.
@Suite struct JPEGPassthroughTests {
    /// A 320x200 picture with detail in every 8x8 block (so the quantization matters), encoded by
    /// the product's own encoder at `quality`.
    static func plain(quality: Int = 85, width: Int = 320, height: Int = 200) throws -> [UInt8] {
        var px = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                px[i] = UInt8((x * 7 + y * 3) & 255)
                px[i + 1] = UInt8((x * y / 5) & 255)
                px[i + 2] = UInt8(((x ^ y) * 5) & 255)
            }
        }
        return try JPEGEncoder.encode(PixelImage(width: width, height: height, channels: 3, hasAlpha: false, pixels: px),
                                      quality: quality)
    }

    static let secret = Array("GPS 52.5200N 13.4050E".utf8)

    /// EXIF (orientation `o` and a private string), XMP, a comment and an MPF block, and a second
    /// image's worth of bytes after EOI: all of it metadata the copy must not carry.
    static func withMetadata(_ jpeg: [UInt8], orientation o: Int = 1) -> [UInt8] {
        let exif = Array("Exif\0\0".utf8) + MadeFiles.exif(orientation: o) + secret
        return JPEGSegments.inserting([JPEGSegments.segment(0xE1, exif),
                                       JPEGSegments.segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8) + secret),
                                       JPEGSegments.segment(0xFE, secret), JPEGSegments.segment(0xE2, Array("MPF\0".utf8) + secret)],
                                      into: jpeg, trailing: [0xFF, 0xD8] + secret + [0xFF, 0xD9])
    }

    @Test func aFittingUprightJPEGIsCopiedWithoutItsMetadata() throws {
        let plain = try Self.plain()
        let source = Self.withMetadata(plain)
        let made = try Thumbnailer.makeThumbnails(from: source, longestEdges: [1080, 256])
        // The display box: the source's own coded data, byte for byte what the encoder wrote before
        // the metadata went in (its JFIF APP0 is libjpeg's, as the copy's is).
        #expect(made[0].bytes == plain)
        #expect(!made[0].bytes.contains(Self.secret), "no EXIF, XMP, comment, MPF or trailing image")
        #expect((made[0].width, made[0].height, made[0].format) == (320, 200, .jpeg))
        #expect((made[0].sourceUprightWidth, made[0].sourceUprightHeight) == (320, 200))
        // The thumbnail box needs a resize: decoded and encoded as before.
        #expect((made[1].width, made[1].height) == (256, 160))
        #expect(!made[1].bytes.contains(Self.secret))
        // Also from a file (the path the service takes).
        let path = "/tmp/photowall-passthrough-\(UInt64.random(in: 0..<UInt64.max)).jpg"
        try MadeFiles.write(source, path)
        defer { unlink(path) }
        #expect(try Thumbnailer.makeThumbnails(fromFile: path, longestEdges: [1080, 256]) == made)
    }

    @Test func anImageThatFitsEveryBoxIsCopiedForEach() throws {
        let plain = try Self.plain(width: 200, height: 120)
        let made = try Thumbnailer.makeThumbnails(from: Self.withMetadata(plain), longestEdges: [1080, 256])
        #expect(made.map(\.bytes) == [plain, plain])
    }

    /// Each thing the pipeline would change, or a coding finer than the thumbnail quality, means the
    /// thumbnail is encoded as usual: never the source's bytes.
    @Test func aSourceThePipelineWouldChangeIsEncoded() throws {
        let plain = try Self.plain()
        // Rotated by its EXIF orientation: upright 200x320.
        let rotated = try Thumbnailer.makeThumbnails(from: Self.withMetadata(plain, orientation: 6), longestEdges: [1080])[0]
        #expect((rotated.width, rotated.height) == (200, 320))
        #expect(rotated.bytes != plain && !rotated.bytes.contains(Self.secret))
        // Coded at quality 95: the encoder's quality-85 copy is lighter.
        let fine = try Self.plain(quality: 95)
        let reencoded = try Thumbnailer.makeThumbnails(from: fine, longestEdges: [1080])[0]
        #expect(reencoded.bytes != fine && reencoded.bytes.count < fine.count)
        // A PNG asked for.
        var png = ThumbnailOptions()
        png.format = .png
        #expect(try Thumbnailer.makeThumbnails(from: plain, longestEdges: [1080], options: png)[0].format == .png)
    }

    @Test func theWalkRefusesWhatItDoesNotCopy() throws {
        let plain = try Self.plain()
        func copy(_ bytes: [UInt8], quality: Int = 85) -> [UInt8]? { bytes.withUnsafeBytes { JPEGPassthrough.copy(of: $0, quality: quality) } }
        #expect(copy(plain) == plain)
        #expect(copy(plain, quality: 84) == nil, "a thumbnail quality of 84: the source is finer")
        #expect(copy(try Self.plain(quality: 86)) == nil, "finer than quality 85")
        #expect(copy(try Self.plain(quality: 60)) != nil, "coarser than quality 85")
        #expect(copy(JPEGSegments.inserting([JPEGSegments.segment(0xE2, Array("ICC_PROFILE\0".utf8) + [1, 1] + Self.secret)], into: plain)) == nil,
                "a colour profile is converted")
        #expect(copy(JPEGSegments.inserting([JPEGSegments.segment(0xEE, Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 0])], into: plain)) == nil,
                "Adobe's transform flag decides the colours")
        var progressive = plain
        let sof = try #require((2..<(plain.count - 1)).first { plain[$0] == 0xFF && plain[$0 + 1] == 0xC0 })
        progressive[sof + 1] = 0xC2
        #expect(copy(progressive) == nil, "only baseline")
        #expect(copy(Array(plain.dropLast(2))) == nil, "no EOI: cut short")
        #expect(copy(JPEGSegments.inserting([[0x00, 0x01]], into: plain)) == nil, "junk between markers")
        var rgb = plain
        for (k, id) in [0x52, 0x47, 0x42].enumerated() { rgb[sof + 10 + 3 * k] = UInt8(id) }
        #expect(copy(rgb) == nil, "RGB components")
    }

    /// A damaged source is refused exactly as it is when no box can be copied: the copy does not
    /// skip the decode that checks the entropy-coded data.
    @Test func aDamagedSourceIsStillRefused() throws {
        let plain = try Self.plain()
        let sos = try #require((2..<(plain.count - 1)).first { plain[$0] == 0xFF && plain[$0 + 1] == 0xDA })
        // The entropy-coded data cut in the middle, EOI right after.
        let cut = Array(plain[0..<(sos + (plain.count - sos) / 2)]) + [0xFF, 0xD9]
        func outcome(_ boxes: [Int]) -> String {
            do { return "made \(try Thumbnailer.makeThumbnails(from: cut, longestEdges: boxes).map(\.width))" } catch { return "\(error)" }
        }
        let refused = outcome([100])  // a box it does not fit: no copy
        #expect(refused.contains("Truncated") || refused.contains("Corrupt"), "\(refused)")
        #expect(outcome([1080]) == refused)
    }

    @Test func theStandardTableSumsFollowLibjpegsScaling() {
        #expect(JPEGPassthrough.standardLuminanceSum(quality: 50) == JPEGPassthrough.standardLuminance.reduce(0, +))
        #expect(JPEGPassthrough.standardLuminanceSum(quality: 100) == 64)
        #expect(JPEGPassthrough.standardLuminanceSum(quality: 1) == 64 * 255)
        // Quality 85: each step ×0.30, rounded.
        #expect(JPEGPassthrough.standardLuminanceSum(quality: 85) == JPEGPassthrough.standardLuminance.reduce(0) { $0 + max(($1 * 30 + 50) / 100, 1) })
    }
}
