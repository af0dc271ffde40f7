import Foundation
import PhotoWallTesting
import Testing
@testable import PhotoWallImaging

/// HEIC/HEIF, AVIF and WebP through the same `Thumbnailer` API as JPEG/PNG, on files made at test
/// time by Debian's tools (see `MadeFiles`). Stored 320x200 quadrant pictures; a 256 box gives
/// 256x160 upright.
///
/// Tolerances (largest channel difference of a quadrant's mean, 8-bit levels): `lossy` 12 for
/// a lossy encode at quality 90+ read back through 4:2:0 chroma and our resize; `colour` 6 for
/// flat single-colour images (only the YCbCr round trip and the lcms2 transform differ).
@Suite("HEIC, AVIF and WebP decoding", .serialized)
struct HEIFAndWebPTests {
    static let lossy = 12.0
    static let colour = 6.0
    static let upright = Quadrants.upright(width: 320, height: 200)

    static func thumbnail(_ bytes: [UInt8], box: Int = 256, format: ThumbnailFormat = .png) throws -> PixelImage {
        try Pixels.thumbnailPixels(bytes, box: box, format: format)
    }

    // MARK: orientation

    @Test("WebP applies the EXIF orientation from its EXIF chunk, every value",
          .enabled(if: MadeFiles.have("cwebp", "webpmux")), arguments: ImageOrientation.allCases)
    func webpOrientation(_ o: ImageOrientation) throws {
        try withTemporaryDirectory { dir in
            try MadeFiles.write(try Pixels.png(Quadrants.stored(Self.upright, orientation: o)), "\(dir)/in.png")
            try MadeFiles.write(MadeFiles.exif(orientation: o.rawValue), "\(dir)/exif.bin")
            try MadeFiles.run("cwebp", ["-quiet", "-q", "92", "\(dir)/in.png", "-o", "\(dir)/plain.webp"])
            try MadeFiles.run("webpmux", ["-set", "exif", "\(dir)/exif.bin", "\(dir)/plain.webp", "-o", "\(dir)/o.webp"])
            let bytes = try MadeFiles.read("\(dir)/o.webp")
            let header = try Thumbnailer.readHeader(bytes)
            #expect(header.type == .webp && header.orientation == o)
            #expect(header.uprightWidth == 320 && header.uprightHeight == 200)
            let t = try Thumbnailer.makeThumbnail(from: bytes)
            #expect((t.width, t.height, t.format) == (256, 160, .jpeg))
            #expect((t.sourceUprightWidth, t.sourceUprightHeight) == (320, 200))
            let worst = Quadrants.worstDifference(try Self.thumbnail(bytes))
            #expect(worst <= Self.lossy, "orientation \(o): quadrant colours off by \(worst)")
        }
    }

    @Test("HEIC irot/imir are applied once; the EXIF Orientation inside (as iPhones write) is not",
          arguments: ImageOrientation.allCases)
    func heicTransforms(_ o: ImageOrientation) throws {
        try withTemporaryDirectory { dir in
            // heif-enc 1.15 has no option for irot/imir, so libheif's encoder API writes them.
            try MadeFiles.writeHEIC(Quadrants.stored(Self.upright, orientation: o), to: "\(dir)/o.heic",
                                    orientation: o.rawValue, exif: MadeFiles.exif(orientation: o.rawValue))
            let bytes = try MadeFiles.read("\(dir)/o.heic")
            let header = try Thumbnailer.readHeader(bytes)
            #expect(header.type == .heic && header.orientation == .up)
            #expect((header.width, header.height) == (320, 200))
            let t = try Thumbnailer.makeThumbnail(from: bytes)
            #expect((t.width, t.height, t.sourceUprightWidth, t.sourceUprightHeight) == (256, 160, 320, 200))
            let worst = Quadrants.worstDifference(try Self.thumbnail(bytes))
            #expect(worst <= Self.lossy, "orientation \(o): quadrant colours off by \(worst)")
        }
    }

    @Test("heif-enc HEIC and AVIF, 8 and 10 bit, come out upright in their colours",
          .enabled(if: MadeFiles.have("heif-enc")), arguments: [("heic", 8), ("heic", 10), ("avif", 8)])
    func heifEnc(_ ext: String, _ bits: Int) throws {
        // Not ("avif", 10): Debian 12's heif-enc aborts in libaom 3.6 writing a 10-bit AVIF
        // (write_color_config assertion), so no 10-bit AVIF can be made with Debian's tools.
        try withTemporaryDirectory { dir in
            let input = bits == 8 ? try Pixels.png(Self.upright) : MadeFiles.png16(Self.upright)
            try MadeFiles.write(input, "\(dir)/in.png")
            try MadeFiles.run("heif-enc", ["-q", "92", "-b", "\(bits)", "\(dir)/in.png", "-o", "\(dir)/o.\(ext)"])
            let bytes = try MadeFiles.read("\(dir)/o.\(ext)")
            let header = try Thumbnailer.readHeader(bytes)
            #expect(header.type == (ext == "avif" ? .avif : .heic))
            #expect((header.width, header.height, header.orientation) == (320, 200, .up))
            let t = try Thumbnailer.makeThumbnail(from: bytes)
            #expect((t.width, t.height, t.format) == (256, 160, .jpeg))
            let worst = Quadrants.worstDifference(try Self.thumbnail(bytes))
            #expect(worst <= Self.lossy, "\(ext) \(bits)-bit: quadrant colours off by \(worst)")
            // Two sizes from one decode, as the server asks (display, thumbnail).
            let both = try Thumbnailer.makeThumbnails(from: bytes, longestEdges: [1080, 100])
            #expect(both.map { [$0.width, $0.height] } == [[320, 200], [100, 63]])
        }
    }

    // MARK: colour

    /// Display P3 (D65, sRGB curve) to sRGB, written out independently of lcms2: sRGB curve,
    /// linear P3 → linear sRGB matrix (both D65), sRGB curve, clipped.
    static func p3ToSRGB(_ p3: [Double]) -> [Double] {
        func decode(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
        func encode(_ v: Double) -> Double {
            let c = min(max(v, 0), 1)
            return 255 * (c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1 / 2.4) - 0.055)
        }
        let l = p3.map { decode($0 / 255) }
        return [1.2249401 * l[0] - 0.2249404 * l[1],
                -0.0420569 * l[0] + 1.0420571 * l[1],
                -0.0196376 * l[0] - 0.0786361 * l[1] + 1.0982735 * l[2]].map(encode)
    }

    static let p3Colour: [Double] = [90, 170, 110]

    static func flat(_ rgb: [Double]) -> PixelImage {
        let px = (0..<(64 * 48)).flatMap { _ in rgb.map { UInt8($0) } }
        return PixelImage(width: 64, height: 48, channels: 3, hasAlpha: false, pixels: px)
    }

    static func meanColour(_ bytes: [UInt8]) throws -> [Double] {
        let image = try thumbnail(bytes, format: .jpeg)
        return Quadrants.mean(image, x: 8..<(image.width - 8), y: 8..<(image.height - 8))
    }

    static func maxDiff(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).map { abs($0 - $1) }.max()! }

    @Test("Display P3 (ICC profile and nclx) becomes sRGB; untagged stays as it is",
          .enabled(if: MadeFiles.have("heif-enc", "cwebp")))
    func displayP3() throws {
        let expected = Self.p3ToSRGB(Self.p3Colour)
        #expect(Self.maxDiff(expected, Self.p3Colour) > 3 * Self.colour, "the check can tell converted from not")
        let profile = try #require(NCLXProfile.icc(primaries: 12, transfer: 13, red: (0.680, 0.320), green: (0.265, 0.690),
                                                   blue: (0.150, 0.060), white: (0.3127, 0.3290)))
        try withTemporaryDirectory { dir in
            try MadeFiles.write(try MadeFiles.pngWithICC(Self.flat(Self.p3Colour), profile: profile), "\(dir)/p3.png")
            try MadeFiles.write(try Pixels.png(Self.flat(Self.p3Colour)), "\(dir)/plain.png")
            try MadeFiles.run("heif-enc", ["-q", "95", "\(dir)/p3.png", "-o", "\(dir)/icc.heic"])
            try MadeFiles.run("heif-enc", ["-q", "95", "\(dir)/p3.png", "-o", "\(dir)/icc.avif"])
            for ext in ["heic", "avif"] {
                // heif-enc's --colour_primaries only reaches the coded stream: libheif's API writes the colr box.
                try MadeFiles.writeHEIC(Self.flat(Self.p3Colour), to: "\(dir)/nclx.\(ext)", nclxPrimaries: 12, av1: ext == "avif")
                try MadeFiles.run("heif-enc", ["-q", "95", "\(dir)/plain.png", "-o", "\(dir)/plain.\(ext)"])
            }
            try MadeFiles.run("cwebp", ["-quiet", "-q", "95", "-metadata", "icc", "\(dir)/p3.png", "-o", "\(dir)/icc.webp"])
            try MadeFiles.run("cwebp", ["-quiet", "-q", "95", "\(dir)/plain.png", "-o", "\(dir)/plain.webp"])
            for name in ["icc.heic", "icc.avif", "nclx.heic", "nclx.avif", "icc.webp"] {
                let got = try Self.meanColour(try MadeFiles.read("\(dir)/\(name)"))
                #expect(Self.maxDiff(got, expected) <= Self.colour, "\(name): \(got), expected \(expected)")
            }
            for name in ["plain.heic", "plain.avif", "plain.webp"] {
                let got = try Self.meanColour(try MadeFiles.read("\(dir)/\(name)"))
                #expect(Self.maxDiff(got, Self.p3Colour) <= Self.colour, "\(name): \(got), expected \(Self.p3Colour)")
            }
        }
    }

    // MARK: alpha, animation, thumbnail item

    /// Left half opaque red, right half fully transparent with green hidden under alpha 0.
    static let halfTransparent: PixelImage = {
        var px = [UInt8]()
        for _ in 0..<120 { for x in 0..<160 { px += x < 80 ? [200, 40, 40, 255] : [40, 200, 40, 0] } }
        return PixelImage(width: 160, height: 120, channels: 4, hasAlpha: true, pixels: px)
    }()

    @Test("HEIF alpha plane and WebP alpha give a PNG, or a JPEG flattened on white",
          .enabled(if: MadeFiles.have("heif-enc", "cwebp")), arguments: ["heic", "avif", "webp"])
    func alpha(_ ext: String) throws {
        try withTemporaryDirectory { dir in
            try MadeFiles.write(try Pixels.png(Self.halfTransparent), "\(dir)/in.png")
            if ext == "webp" {
                try MadeFiles.run("cwebp", ["-quiet", "-q", "92", "\(dir)/in.png", "-o", "\(dir)/a.webp"])
            } else {
                try MadeFiles.run("heif-enc", ["-q", "92", "\(dir)/in.png", "-o", "\(dir)/a.\(ext)"])
            }
            let bytes = try MadeFiles.read("\(dir)/a.\(ext)")
            let t = try Thumbnailer.makeThumbnail(from: bytes, options: ThumbnailOptions(longestEdgePixels: 100))
            #expect((t.format, t.hasAlpha, t.width, t.height) == (.png, true, 100, 75))
            let png = try Pixels.decode(t.bytes)
            let left = png.pixels[(37 * 100 + 20) * 4 + 3], right = png.pixels[(37 * 100 + 80) * 4 + 3]
            #expect(left == 255 && right == 0, "alpha \(left) / \(right)")
            let flat = try Self.thumbnail(bytes, box: 100, format: .jpeg)
            let l = Quadrants.mean(flat, x: 10..<35, y: 20..<55), r = Quadrants.mean(flat, x: 65..<90, y: 20..<55)
            #expect(Self.maxDiff(l, [200, 40, 40]) <= Self.lossy, "opaque half \(l)")
            #expect(Self.maxDiff(r, [255, 255, 255]) <= 3, "transparent half on white \(r)")
        }
    }

    @Test("animated WebP uses its first frame", .enabled(if: MadeFiles.have("img2webp")))
    func animatedWebP() throws {
        try withTemporaryDirectory { dir in
            try MadeFiles.write(try Pixels.png(Self.upright), "\(dir)/f1.png")
            try MadeFiles.write(try Pixels.png(Self.flat([0, 0, 0]).resized(320, 200)), "\(dir)/f2.png")
            try MadeFiles.run("img2webp", ["-lossless", "-d", "100", "\(dir)/f1.png", "\(dir)/f2.png", "-o", "\(dir)/anim.webp"])
            let bytes = try MadeFiles.read("\(dir)/anim.webp")
            #expect(try bytes.withUnsafeBytes { b in try WebPDecoder.readInfo(b).animated })
            let t = try Thumbnailer.makeThumbnail(from: bytes)
            #expect((t.width, t.height, t.format) == (256, 160, .jpeg))
            let worst = Quadrants.worstDifference(try Self.thumbnail(bytes))
            #expect(worst <= Self.lossy, "first frame colours off by \(worst)")
        }
    }

    @Test("a HEIC thumbnail item at least as large as the box is decoded instead of the primary image")
    func thumbnailItem() throws {
        try withTemporaryDirectory { dir in
            // The thumbnail item shows a different picture (flat magenta), so the output tells which was decoded.
            let primary = Quadrants.upright(width: 1200, height: 750)
            let magenta = Self.flat([200, 40, 200]).resized(1200, 750)
            try MadeFiles.writeHEIC(primary, to: "\(dir)/t.heic", thumbnail: (magenta, 320))
            let bytes = try MadeFiles.read("\(dir)/t.heic")
            let small = try Self.thumbnail(bytes, box: 256)
            #expect((small.width, small.height) == (256, 160))
            let m = Quadrants.mean(small, x: 20..<236, y: 20..<140)
            #expect(Self.maxDiff(m, [200, 40, 200]) <= Self.lossy, "256 box uses the 320 thumbnail item: \(m)")
            let large = try Self.thumbnail(bytes, box: 400)
            #expect((large.width, large.height) == (400, 250))
            #expect(Quadrants.worstDifference(large) <= Self.lossy, "400 box needs the primary image")
        }
    }

    @Test("a real iPhone HEIC (512x512 grid, irot, P3 profile, EXIF) comes out whole, like libheif's own heif-convert",
          .enabled(if: Corpus.isAvailable && MadeFiles.have("heif-convert")))
    func iPhoneGrid() throws {
        try withTemporaryDirectory { dir in
            let heic = try Corpus.bytes("wrong-format/iphone_IMG_5195.HEIC")
            let t = try Thumbnailer.makeThumbnail(from: heic)
            #expect((t.width, t.height, t.sourceUprightWidth, t.sourceUprightHeight) == (198, 256, 2566, 3313))
            // heif-convert writes the composed picture as PNG (with the P3 profile): the same thumbnail of
            // it must match ours block for block (a missing or shifted tile would differ by tens of levels).
            try MadeFiles.write(heic, "\(dir)/in.heic")
            try MadeFiles.run("heif-convert", ["\(dir)/in.heic", "\(dir)/full.png"])
            let ours = try Self.thumbnail(heic)
            let reference = try Self.thumbnail(try MadeFiles.read("\(dir)/full.png"))
            try #require((ours.width, ours.height) == (reference.width, reference.height))
            let difference = Pixels.meanAbsDiff(Pixels.blockMeans(ours, cell: 8), Pixels.blockMeans(reference, cell: 8))
            #expect(difference < 2, "mean 8x8 block difference \(difference)")
        }
    }

    // MARK: limits and damage

    @Test("the pixel limit is applied from the header, and decoder memory is capped",
          .enabled(if: MadeFiles.have("cwebp")))
    func limits() throws {
        try withTemporaryDirectory { dir in
            try MadeFiles.writeHEIC(Self.upright, to: "\(dir)/o.heic")
            try MadeFiles.write(try Pixels.png(Self.upright), "\(dir)/in.png")
            try MadeFiles.run("cwebp", ["-quiet", "\(dir)/in.png", "-o", "\(dir)/o.webp"])
            for (name, type) in [("o.heic", ImageType.heic), ("o.webp", .webp)] {
                let bytes = try MadeFiles.read("\(dir)/\(name)")
                var options = ThumbnailOptions()
                options.maxMegapixels = 0.05
                #expect(throws: ImagingError(code: .tooLarge, message: "Image too large: 320x200 (0.1 megapixels); the limit is 0.05 megapixels.",
                                             detectedType: type)) {
                    try Thumbnailer.makeThumbnail(from: bytes, options: options)
                }
                options = ThumbnailOptions()
                options.maxDecoderMemoryBytes = 100_000
                do {
                    _ = try Thumbnailer.makeThumbnail(from: bytes, options: options)
                    Issue.record("\(name) decoded over a 100 kB decoder memory cap")
                } catch let error as ImagingError {
                    #expect(error.code == .decoderMemoryExceeded && error.detectedType == type, "\(error.message)")
                }
            }
        }
    }

    @Test("truncated HEIC, AVIF, WebP and animated WebP are refused as truncated, never crash",
          .enabled(if: MadeFiles.have("heif-enc", "cwebp", "img2webp")))
    func truncated() throws {
        try withTemporaryDirectory { dir in
            try MadeFiles.write(try Pixels.png(Self.upright), "\(dir)/in.png")
            try MadeFiles.write(try Pixels.png(Self.halfTransparent), "\(dir)/alpha.png")
            try MadeFiles.run("heif-enc", ["-q", "80", "\(dir)/in.png", "-o", "\(dir)/a.heic"])
            try MadeFiles.run("heif-enc", ["-q", "80", "\(dir)/in.png", "-o", "\(dir)/a.avif"])
            try MadeFiles.run("cwebp", ["-quiet", "\(dir)/in.png", "-o", "\(dir)/a.webp"])
            try MadeFiles.run("cwebp", ["-quiet", "-lossless", "\(dir)/alpha.png", "-o", "\(dir)/b.webp"])
            try MadeFiles.write(try Pixels.png(Self.flat([0, 0, 0]).resized(320, 200)), "\(dir)/black.png")
            try MadeFiles.run("img2webp", ["\(dir)/in.png", "\(dir)/black.png", "-o", "\(dir)/anim.webp"])
            for name in ["a.heic", "a.avif", "a.webp", "b.webp", "anim.webp"] {
                let file = try MadeFiles.read("\(dir)/\(name)")
                _ = try Thumbnailer.makeThumbnail(from: file)
                // From 16 bytes on, the type is recognisable (RIFF....WEBP, ....ftyp....).
                for cut in [20, 40, 100] + (1...9).map({ file.count * $0 / 10 }) + [file.count - 1]
                where cut >= 16 && cut < file.count {
                    do {
                        let t = try Thumbnailer.makeThumbnail(from: Array(file.prefix(cut)))
                        Issue.record("\(name) cut at \(cut) of \(file.count) gave a \(t.width)x\(t.height) thumbnail")
                    } catch let error as ImagingError {
                        #expect(error.code == .truncated, "\(name) cut at \(cut): \(error.code) \(error.message)")
                        #expect(error.message.hasPrefix("Truncated ") && !error.message.contains("\n"), "\(error.message)")
                    }
                }
            }
        }
    }

    @Test("bit flips in HEIC and WebP data are refused or decode, never crash", .enabled(if: MadeFiles.have("cwebp")))
    func bitFlips() throws {
        try withTemporaryDirectory { dir in
            try MadeFiles.writeHEIC(Quadrants.upright(width: 64, height: 48), to: "\(dir)/a.heic")
            try MadeFiles.write(try Pixels.png(Quadrants.upright(width: 64, height: 48)), "\(dir)/in.png")
            try MadeFiles.run("cwebp", ["-quiet", "\(dir)/in.png", "-o", "\(dir)/a.webp"])
            var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
            for name in ["a.heic", "a.webp"] {
                let file = try MadeFiles.read("\(dir)/\(name)")
                for _ in 0..<120 {
                    var damaged = file
                    seed = seed &* 6364136223846793005 &+ 1442695040888963407
                    damaged[Int(seed >> 33) % damaged.count] ^= UInt8(truncatingIfNeeded: seed >> 20) | 1
                    do {
                        _ = try Thumbnailer.makeThumbnail(from: damaged)
                    } catch let error as ImagingError {
                        #expect(!error.message.isEmpty && !error.message.contains("\n"))
                    }
                }
            }
        }
    }
}

extension PixelImage {
    /// A flat image repeated to `width` x `height` (only for single-colour images).
    func resized(_ width: Int, _ height: Int) -> PixelImage {
        let pixel = Array(pixels.prefix(channels))
        return PixelImage(width: width, height: height, channels: channels, hasAlpha: hasAlpha,
                          pixels: (0..<(width * height)).flatMap { _ in pixel })
    }
}
