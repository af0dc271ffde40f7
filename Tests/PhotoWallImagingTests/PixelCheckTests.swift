import Testing
@testable import PhotoWallImaging

/// Pixel-level checks on corpus files: orientation, transparency, colour.
@Suite("Corpus pixels",
       .enabled(if: Corpus.isAvailable, "image corpus not found: set PHOTOWALL_CORPUS or provide ../shared/imagecorpus"))
struct PixelCheckTests {
    /// (file, reference with Orientation=1, max mean difference of 8x8-block means)
    static let orientationSets: [(String, String, Double)] =
        ["Landscape_0", "Landscape_3", "Landscape_4", "Landscape_5", "Landscape_6", "Landscape_8"]
            .map { ("exif-orientation/\($0).jpg", "exif-orientation/Landscape_1.jpg", 6) }
        + ["Portrait_0", "Portrait_2", "Portrait_4", "Portrait_5", "Portrait_6", "Portrait_7"]
            .map { ("exif-orientation/\($0).jpg", "exif-orientation/Portrait_1.jpg", 6) }
        + [3, 4, 5, 6, 8].map { ("exif-orientation/hopper_orientation_\($0).jpg", "jpeg-coding/hopper.jpg", 8) }
        + [2, 4, 5, 6, 7].map { ("exif-orientation/vips_rotation_\($0).jpg", "exif-orientation/vips_rotation_1.jpg", 12) }

    @Test("EXIF orientations give the same upright picture as Orientation=1",
          arguments: orientationSets.map { OrientationCase(file: $0.0, reference: $0.1, tolerance: $0.2) })
    func orientation(_ c: OrientationCase) throws {
        let image = try Pixels.thumbnailPixels(try Corpus.bytes(c.file))
        let reference = try Pixels.thumbnailPixels(try Corpus.bytes(c.reference))
        try #require(image.width == reference.width && image.height == reference.height)
        let difference = Pixels.meanAbsDiff(Pixels.blockMeans(image, cell: 8), Pixels.blockMeans(reference, cell: 8))
        #expect(difference < c.tolerance, "mean block difference \(difference)")
        // The check can tell orientations apart: the reference turned upside down differs a lot.
        let flipped = Orient.apply(.down, to: reference)
        let control = Pixels.meanAbsDiff(Pixels.blockMeans(image, cell: 8), Pixels.blockMeans(flipped, cell: 8))
        #expect(control > 3 * c.tolerance, "control difference \(control)")
    }

    static let transparentFiles = [
        "png/d.png", "png/full-transparent.png", "png/image-in-alpha.png", "png/Flag_of_the_Netherlands-alpha.png",
        "png/alpha-premultiply-2048x1536-paper.png", "png/1_trns.png", "png/l_trns.png", "png/rgb_trns.png",
        "png/16-bit-grey-alpha.png", "png/grey-8bit-alpha.png", "png/transparent.png", "png/pil123p.png",
        "png/pil123rgba.png", "pngsuite/tbbn3p08.png", "pngsuite/tp1n3p08.png", "pngsuite/basn6a08.png",
        "pngsuite/basi4a08.png", "pngsuite/tbrn2c08.png",
    ]

    @Test("JPEG output puts the white background (never black) where alpha was 0", arguments: transparentFiles)
    func transparentBecomesBackground(_ file: String) throws {
        let bytes = try Corpus.bytes(file)
        let withAlpha = try Pixels.thumbnailPixels(bytes, format: .png)
        let jpeg = try Thumbnailer.makeThumbnail(from: bytes, options: ThumbnailOptions(format: .jpeg))
        #expect(jpeg.format == .jpeg)
        let flat = try Pixels.decode(jpeg.bytes)
        try #require(flat.width == withAlpha.width && flat.height == withAlpha.height && withAlpha.hasAlpha)
        let c = withAlpha.channels, w = withAlpha.width, h = withAlpha.height
        var checked = 0
        var sum = 0.0, count = 0.0
        for y in 0..<h {
            for x in 0..<w {
                // Only pixels whose whole 5x5 neighbourhood is transparent (JPEG ringing stays local).
                var clear = true
                for dy in -2...2 {
                    for dx in -2...2 {
                        let xx = min(max(x + dx, 0), w - 1), yy = min(max(y + dy, 0), h - 1)
                        if withAlpha.pixels[(yy * w + xx) * c + c - 1] != 0 { clear = false }
                    }
                }
                guard clear else { continue }
                checked += 1
                let i = (y * w + x) * flat.channels
                for k in 0..<flat.channels {
                    sum += Double(flat.pixels[i + k])
                    count += 1
                }
                // JPEG ringing next to dark edges may dip a little; black never passes.
                for k in 0..<flat.channels where flat.pixels[i + k] < 200 {
                    Issue.record("pixel (\(x),\(y)) of \(w)x\(h) is \(flat.pixels[i + k]) where alpha is 0 (\(flat.channels) channels)")
                    return
                }
            }
        }
        if count > 0 { #expect(sum / count > 250, "mean of transparent areas \(sum / count)") }
        if file == "png/full-transparent.png" { #expect(checked == w * h) }
    }

    @Test("auto format keeps real transparency as PNG")
    func autoKeepsTransparency() throws {
        let t = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("png/image-in-alpha.png"))
        #expect(t.format == .png && t.hasAlpha)
        let opaque = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("png/apng_delay.png"))
        #expect(opaque.format == .jpeg || opaque.hasAlpha)
    }

    /// 8x6 grid means (`Pixels.gridMeans`) of Pillow 13 ImageCms (lcms2) converting the
    /// file with its embedded SWOP profile to sRGB (relative colorimetric + black-point
    /// compensation), then a Lanczos resize to 256x170.
    static let cmykReference: [Double] = [
        116.5, 117.4, 116.8, 122.0, 123.5, 126.7, 116.7, 117.0, 116.6, 144.0, 145.8, 148.0, 102.4, 107.0, 106.1,
        110.8, 114.7, 116.1, 132.8, 138.3, 141.4, 121.7, 127.8, 131.8, 120.0, 117.9, 111.0, 95.2, 95.4, 90.4, 112.4,
        112.5, 106.4, 122.1, 122.8, 115.1, 107.3, 105.4, 101.4, 92.9, 92.5, 88.6, 121.6, 122.2, 117.1, 108.1, 108.1,
        103.3, 118.1, 118.5, 104.7, 100.8, 101.6, 91.4, 97.8, 100.5, 94.2, 100.8, 107.4, 97.6, 92.0, 93.8, 89.0,
        75.8, 87.2, 90.3, 108.8, 111.2, 100.6, 105.3, 104.9, 93.6, 106.0, 127.9, 82.0, 113.2, 135.9, 86.1, 118.4,
        141.0, 93.6, 110.8, 132.1, 93.8, 114.9, 124.7, 97.7, 99.5, 94.9, 103.5, 140.7, 156.0, 116.2, 157.1, 165.1,
        145.4, 105.3, 128.4, 72.9, 103.3, 126.4, 73.3, 91.9, 114.5, 70.5, 120.7, 132.6, 122.1, 110.4, 118.9, 106.1,
        123.0, 116.2, 120.1, 195.3, 195.8, 196.3, 194.0, 194.3, 194.7, 133.2, 132.8, 126.6, 132.5, 134.5, 123.7,
        133.6, 137.4, 131.3, 129.5, 135.6, 142.1, 137.8, 141.3, 144.8, 136.2, 138.0, 139.3, 169.6, 171.5, 174.3,
        181.3, 179.6, 175.5,
    ]

    @Test("CMYK JPEGs match the lcms2 RGB reference", arguments: [
        ("cmyk/Channel_digital_image_CMYK_color.jpg", 3.0),
        ("cmyk/Channel_digital_image_CMYK_color_no_profile.jpg", 14.0),   // naive formula, no SWOP profile
    ])
    func cmyk(_ file: String, tolerance: Double) throws {
        let image = try Pixels.thumbnailPixels(try Corpus.bytes(file))
        try #require(image.width == 256 && image.height == 170 && image.channels == 3)
        let means = Pixels.gridMeans(image, columns: 8, rows: 6)
        let difference = Pixels.meanAbsDiff(means, Self.cmykReference)
        #expect(difference < tolerance, "difference \(difference)")
        let inverted = Self.cmykReference.map { 255 - $0 }
        #expect(Pixels.meanAbsDiff(means, inverted) > 30, "looks like a negative")
    }

    @Test("XYB JPEG converted with its perceptual ICC matches the same picture as a PNG")
    func xyb() throws {
        let xyb = try Pixels.thumbnailPixels(try Corpus.bytes("icc/sample-xyb.jpg"))
        let reference = try Pixels.thumbnailPixels(try Corpus.bytes("png/sample.png"))
        try #require(xyb.width == reference.width && xyb.height == reference.height)
        let difference = Pixels.meanAbsDiff(Pixels.blockMeans(xyb, cell: 8), Pixels.blockMeans(reference, cell: 8))
        #expect(difference < 6, "difference \(difference)")
    }

    @Test("grey images stay grey", arguments: ["icc/concert.jpg", "jpeg-coding/hopper_gray.jpg", "pngsuite/basn0g16.png"])
    func greyStaysGrey(_ file: String) throws {
        let t = try Thumbnailer.makeThumbnail(from: try Corpus.bytes(file))
        #expect(try Pixels.decode(t.bytes).channels == 1)
    }

    @Test("one decode, several boxes (1080 display + 256 thumbnail)")
    func multipleBoxes() throws {
        let bytes = try Corpus.bytes("exif-orientation/canon_sx60_orientation6_2048x1536.jpg")
        let both = try Thumbnailer.makeThumbnails(from: bytes, longestEdges: [1080, 256])
        #expect(both.map(\.width) == [810, 192] && both.map(\.height) == [1080, 256])
        let single = try Pixels.thumbnailPixels(bytes)
        let fromPair = try Pixels.decode(both[1].bytes)
        let difference = Pixels.meanAbsDiff(Pixels.blockMeans(single, cell: 8), Pixels.blockMeans(fromPair, cell: 8))
        #expect(difference < 3, "difference \(difference)")
    }

    @Test("decoder memory cap stops progressive JPEG and interlaced PNG before decoding")
    func memoryCap() throws {
        var options = ThumbnailOptions()
        options.maxDecoderMemoryBytes = 64 << 10
        for file in ["exif-orientation/vips_rotation_1.jpg", "png/pil123rgba.png"] {
            let bytes = try Corpus.bytes(file)
            do {
                _ = try Thumbnailer.makeThumbnail(from: bytes, options: options)
                Issue.record("\(file) decoded despite the memory cap")
            } catch {
                #expect(error.code == .decoderMemoryExceeded, "\(file): \(error.message)")
            }
        }
    }
}

struct OrientationCase: Sendable, CustomTestStringConvertible {
    var file: String
    var reference: String
    var tolerance: Double
    var testDescription: String { file }
}
