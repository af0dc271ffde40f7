@testable import PhotoWallImaging

/// Pixel helpers for tests: decode our own output, make synthetic images,
/// compare images.
enum Pixels {
    /// Decodes a JPEG/PNG at full size into straight (non-premultiplied) pixels, alpha kept.
    static func decode(_ bytes: [UInt8]) throws -> PixelImage {
        var options = ThumbnailOptions(longestEdgePixels: 16384, format: .png)
        options.maxMegapixels = 1000
        return try bytes.withUnsafeBytes { b in
            try Thumbnailer.uprightImages(from: b, longestEdges: [16384], options: options)[0].0
        }
    }

    /// The finished thumbnail pixels for a 256 (or `box`) box, as they go to the encoder.
    static func thumbnailPixels(_ bytes: [UInt8], box: Int = 256, format: ThumbnailFormat = .png) throws -> PixelImage {
        let options = ThumbnailOptions(longestEdgePixels: box, format: format)
        return try bytes.withUnsafeBytes { b in
            try Thumbnailer.uprightImages(from: b, longestEdges: [box], options: options)[0].0
        }
    }

    /// A smooth, never-dark test pattern (values 60...220) with some detail.
    static func pattern(width: Int, height: Int, channels: Int) -> PixelImage {
        var px = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * channels
                let gx = width > 1 ? x * 160 / (width - 1) : 80
                let gy = height > 1 ? y * 160 / (height - 1) : 80
                let check = ((x / 7 + y / 7) & 1) * 20
                for c in 0..<channels {
                    let v = c == 0 ? gx : (c == 1 ? gy : (gx + gy) / 2)
                    px[i + c] = UInt8(60 + min(v, 140) + (c == channels - 1 && channels == 2 ? 0 : check) / 2)
                }
            }
        }
        return PixelImage(width: width, height: height, channels: channels, hasAlpha: false, pixels: px)
    }

    static func jpeg(_ image: PixelImage, quality: Int = 95) throws -> [UInt8] {
        try JPEGEncoder.encode(image, quality: quality)
    }

    static func png(_ image: PixelImage) throws -> [UInt8] {
        try PNGEncoder.encode(image)
    }

    /// Means of `cell` x `cell` blocks of the colour channels (grey counts as R=G=B).
    static func blockMeans(_ image: PixelImage, cell: Int) -> [Double] {
        let c = image.channels
        let colours = image.hasAlpha ? c - 1 : c
        var out: [Double] = []
        var by = 0
        while by < image.height {
            var bx = 0
            while bx < image.width {
                var sums = [Double](repeating: 0, count: 3)
                var n = 0.0
                for y in by..<min(by + cell, image.height) {
                    for x in bx..<min(bx + cell, image.width) {
                        let i = (y * image.width + x) * c
                        for k in 0..<3 { sums[k] += Double(image.pixels[i + (colours == 1 ? 0 : k)]) }
                        n += 1
                    }
                }
                out += sums.map { $0 / n }
                bx += cell
            }
            by += cell
        }
        return out
    }

    /// Means of a columns x rows grid (cell edges at floor(i * size / count)) of the colour channels.
    static func gridMeans(_ image: PixelImage, columns: Int, rows: Int) -> [Double] {
        let c = image.channels
        let colours = image.hasAlpha ? c - 1 : c
        var out: [Double] = []
        for r in 0..<rows {
            for col in 0..<columns {
                var sums = [Double](repeating: 0, count: 3)
                var n = 0.0
                for y in (r * image.height / rows)..<((r + 1) * image.height / rows) {
                    for x in (col * image.width / columns)..<((col + 1) * image.width / columns) {
                        let i = (y * image.width + x) * c
                        for k in 0..<3 { sums[k] += Double(image.pixels[i + (colours == 1 ? 0 : k)]) }
                        n += 1
                    }
                }
                out += sums.map { $0 / n }
            }
        }
        return out
    }

    /// Mean absolute difference of two equally long value lists.
    static func meanAbsDiff(_ a: [Double], _ b: [Double]) -> Double {
        precondition(a.count == b.count && !a.isEmpty)
        return zip(a, b).map { abs($0 - $1) }.reduce(0, +) / Double(a.count)
    }

    /// Mean of channel `k` over the pixels of row `y` or column `x`.
    static func rowMean(_ image: PixelImage, y: Int) -> Double {
        var s = 0.0
        for x in 0..<image.width { s += Double(image.pixels[(y * image.width + x) * image.channels]) }
        return s / Double(image.width)
    }

    static func columnMean(_ image: PixelImage, x: Int) -> Double {
        var s = 0.0
        for y in 0..<image.height { s += Double(image.pixels[(y * image.width + x) * image.channels]) }
        return s / Double(image.height)
    }

    /// Pillow's `thumbnail` size rule, written independently of the code under test.
    static func expectedFit(_ w: Int, _ h: Int, box: Int) -> (Int, Int) {
        if w <= box && h <= box { return (w, h) }
        if w >= h { return (box, max(1, Int((Double(h) * Double(box) / Double(w)).rounded()))) }
        return (max(1, Int((Double(w) * Double(box) / Double(h)).rounded())), box)
    }
}
