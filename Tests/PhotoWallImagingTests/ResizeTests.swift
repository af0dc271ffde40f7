import Testing
@testable import PhotoWallImaging

/// Synthetic sources made with our own encoders (no corpus needed).
enum SweepSource: String, CaseIterable, Sendable {
    case jpegLandscape = "JPEG 1000x750"
    case jpegBig = "JPEG 2400x1600"
    case jpegGreyTall = "grey JPEG 333x1000"
    case pngThin = "PNG 997x13"
    case pngRGBATall = "RGBA PNG 13x997"
    case pngOdd = "PNG 641x479"

    var size: (Int, Int) {
        switch self {
        case .jpegLandscape: (1000, 750)
        case .jpegBig: (2400, 1600)
        case .jpegGreyTall: (333, 1000)
        case .pngThin: (997, 13)
        case .pngRGBATall: (13, 997)
        case .pngOdd: (641, 479)
        }
    }

    func bytes() throws -> [UInt8] {
        let (w, h) = size
        switch self {
        case .jpegLandscape, .jpegBig: return try Pixels.jpeg(Pixels.pattern(width: w, height: h, channels: 3))
        case .jpegGreyTall: return try Pixels.jpeg(Pixels.pattern(width: w, height: h, channels: 1))
        case .pngThin, .pngOdd: return try Pixels.png(Pixels.pattern(width: w, height: h, channels: 3))
        case .pngRGBATall:
            var image = Pixels.pattern(width: w, height: h, channels: 4)
            for p in 0..<(w * h) { image.pixels[p * 4 + 3] = 255 }
            image.hasAlpha = true
            return try Pixels.png(image)
        }
    }
}

@Suite("Resize: exact sizes, no black edges, tiny images")
struct ResizeTests {
    static let boxes = [1, 2, 3, 5, 8, 16, 31, 64, 100, 128, 200, 255, 256, 300, 512, 1000, 1200]

    @Test("size sweep", arguments: SweepSource.allCases, boxes)
    func sweep(_ source: SweepSource, box: Int) throws {
        let bytes = try source.bytes()
        let t = try Thumbnailer.makeThumbnail(from: bytes, options: ThumbnailOptions(longestEdgePixels: box))
        let expected = Pixels.expectedFit(source.size.0, source.size.1, box: box)
        #expect(t.width == expected.0 && t.height == expected.1, "got \(t.width)x\(t.height), want \(expected)")
        #expect(t.format == .jpeg)
        let image = try Pixels.decode(t.bytes)
        // The pattern never goes below 60: a dark row or column means an edge bug.
        for y in 0..<image.height { #expect(Pixels.rowMean(image, y: y) > 45, "row \(y) is dark") }
        for x in 0..<image.width { #expect(Pixels.columnMean(image, x: x) > 45, "column \(x) is dark") }
    }

    @Test("DCT shrink-on-load matches a full-size decode")
    func dctScalingGeometry() throws {
        let bytes = try SweepSource.jpegBig.bytes()
        let fast = try Pixels.thumbnailPixels(bytes)                 // DCT-scaled
        var options = ThumbnailOptions(longestEdgePixels: 256, format: .png)
        options.reducingGap = 8                                      // with jpegScaleGap 8: a full-size decode
        options.jpegScaleGap = 8
        let slow = try bytes.withUnsafeBytes { try Thumbnailer.uprightImages(from: $0, longestEdges: [256], options: options)[0].0 }
        try #require(fast.width == slow.width && fast.height == slow.height)
        let difference = Pixels.meanAbsDiff(Pixels.blockMeans(fast, cell: 4), Pixels.blockMeans(slow, cell: 4))
        #expect(difference < 1.5, "difference \(difference)")
    }

    @Test("1x1, 2x1 and 1x2 sources", arguments: [(1, 1), (2, 1), (1, 2), (3, 1)], [1, 2, 256])
    func tiny(_ size: (Int, Int), box: Int) throws {
        let colour: [UInt8] = [200, 120, 40]
        let pixels = (0..<(size.0 * size.1)).flatMap { _ in colour }
        let image = PixelImage(width: size.0, height: size.1, channels: 3, hasAlpha: false, pixels: pixels)
        for bytes in [try Pixels.jpeg(image, quality: 100), try Pixels.png(image)] {
            let t = try Thumbnailer.makeThumbnail(from: bytes, options: ThumbnailOptions(longestEdgePixels: box))
            let expected = Pixels.expectedFit(size.0, size.1, box: box)
            #expect(t.width == expected.0 && t.height == expected.1)
            let out = try Pixels.decode(t.bytes)
            for k in 0..<3 {
                #expect(abs(Int(out.pixels[k]) - Int(colour[k])) <= 12, "channel \(k): \(out.pixels[k])")
            }
        }
    }

    @Test("premultiplied alpha: no dark fringe where opaque white meets transparent black")
    func noDarkFringe() throws {
        let w = 64, h = 64
        var px = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<(w / 2) { px.replaceSubrange(((y * w + x) * 4)..<((y * w + x) * 4 + 4), with: [255, 255, 255, 255]) }
        }
        let bytes = try Pixels.png(PixelImage(width: w, height: h, channels: 4, hasAlpha: true, pixels: px))
        let out = try Pixels.thumbnailPixels(bytes, box: 20, format: .png)
        #expect(out.hasAlpha && out.width == 20)
        for p in 0..<(out.width * out.height) where out.pixels[p * 4 + 3] > 8 {
            for k in 0..<3 { #expect(out.pixels[p * 4 + k] >= 245, "pixel \(p) colour \(out.pixels[p * 4 + k])") }
        }
        let jpeg = try Pixels.thumbnailPixels(bytes, box: 20, format: .jpeg)
        #expect(!jpeg.hasAlpha && jpeg.pixels.allSatisfy { $0 >= 245 })
    }

    @Test("background colour is configurable; grey+alpha on a colour background becomes RGB")
    func background() throws {
        let px: [UInt8] = [100, 0, 100, 0, 100, 255, 100, 255]       // 2x2 grey+alpha, top row transparent
        let bytes = try Pixels.png(PixelImage(width: 2, height: 2, channels: 2, hasAlpha: true, pixels: px))
        var options = ThumbnailOptions(format: .jpeg)
        options.background = RGBColor(red: 255, green: 0, blue: 0)
        let out = try bytes.withUnsafeBytes { try Thumbnailer.uprightImages(from: $0, longestEdges: [256], options: options)[0].0 }
        #expect(out.channels == 3 && Array(out.pixels[0..<3]) == [255, 0, 0] && Array(out.pixels[6..<9]) == [100, 100, 100])
    }

    @Test("fitted size follows the box and never enlarges")
    func fittedSize() {
        #expect(Thumbnailer.fittedSize(width: 1800, height: 1200, box: 256) == (256, 171))
        #expect(Thumbnailer.fittedSize(width: 4608, height: 1976, box: 256) == (256, 110))
        #expect(Thumbnailer.fittedSize(width: 100, height: 50, box: 256) == (100, 50))
        #expect(Thumbnailer.fittedSize(width: 100000, height: 10, box: 256) == (256, 1))
        #expect(Thumbnailer.fittedSize(width: 1, height: 2, box: 1) == (1, 1))
    }

    @Test("FilterPlan weights sum to one and stay inside the input", arguments: [(7, 3), (1008, 256), (13, 1), (5, 5), (3, 2)])
    func filterPlan(_ sizes: (Int, Int)) {
        let plan = FilterPlan(inPixels: sizes.0, inExtent: Double(sizes.0), outPixels: sizes.1)
        for o in 0..<sizes.1 {
            let w = plan.weights[(o * plan.maxTaps)..<(o * plan.maxTaps + plan.counts[o])]
            #expect(abs(w.reduce(0, +) - 1) < 1e-5)
            #expect(plan.starts[o] >= 0 && plan.starts[o] + plan.counts[o] <= sizes.0)
        }
    }

    /// A cached plan is the plan for its own sizes (the key tells a partial DCT edge's extent from a whole
    /// one), and the cache stays within its count and byte limits.
    @Test("FilterPlan.cached gives the plan made for the same sizes")
    func cachedFilterPlan() {
        for (inPixels, inExtent, outPixels) in [(1200, 1200.0, 256), (1200, 1199.5, 256), (1201, 1201.0, 256), (1200, 1200.0, 255), (7, 7.0, 3)] {
            for _ in 0..<2 {
                let cached = FilterPlan.cached(inPixels: inPixels, inExtent: inExtent, outPixels: outPixels)
                let fresh = FilterPlan(inPixels: inPixels, inExtent: inExtent, outPixels: outPixels)
                #expect(cached.inPixels == inPixels && cached.outPixels == outPixels)
                #expect(cached.starts == fresh.starts && cached.counts == fresh.counts && cached.weights == fresh.weights)
                #expect(cached.isIdentity == fresh.isIdentity && cached.maxTaps == fresh.maxTaps)
            }
        }
        for n in 1...(FilterPlan.cacheLimit * 2 + 3) {
            #expect(FilterPlan.cached(inPixels: 100 + n, inExtent: Double(100 + n), outPixels: 10).inPixels == 100 + n)
        }
        #expect(FilterPlan.cacheUse.count <= FilterPlan.cacheLimit)
        // Large plans (a 16,000-pixel axis to 4,000) fill the byte limit before the count limit.
        for n in 0..<20 {
            let plan = FilterPlan.cached(inPixels: 16_000 + n, inExtent: Double(16_000 + n), outPixels: 4_000)
            #expect(plan.inPixels == 16_000 + n)
            #expect(FilterPlan.cacheUse.bytes <= FilterPlan.cacheByteLimit)
        }
    }
}
