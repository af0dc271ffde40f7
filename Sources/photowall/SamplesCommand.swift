import PhotoWallCore
import PhotoWallImaging
#if canImport(Glibc)
import Glibc
#endif

/// `photowall samples OUTDIR [--width W] [--height H] [--scenes N]`: renders photo-like test images
/// made by the project itself.
///
/// - Always: a landscape (sky gradient, sun, hills, grain) stored under each EXIF orientation 1–8, so
///   that after applying the orientation every file shows the same upright W x H scene (like camera
///   photos taken with the phone held in different ways): `landscape_o1.jpg` … `landscape_o8.jpg`.
/// - With `--scenes N`: N different pictures for a demo wall (`SampleScene`): mountains, sea, city,
///   forest, meadow and lake at dawn, noon, sunset and night in the four seasons, as landscape,
///   portrait and square frames (longest edge max(W, H)), stored under orientations 1–8 in turn:
///   `scene_003_city_night_spring_square_o3.jpg`, ….
///
/// Every file: stored pixels transformed by the inverse of its orientation, an APP1 EXIF segment
/// carrying the tag, JPEG quality 88, 4:2:0 (PhotoWallImaging's encoder).
enum SamplesCommand {
    static let usage = "usage: photowall samples OUTDIR [--width W] [--height H] [--scenes N]"
    static let help = usage + """

        Renders photo-like sample JPEGs into OUTDIR (made if missing):
          landscape_o1.jpg … landscape_o8.jpg  one W x H landscape stored under EXIF orientations 1–8
          scene_NNN_….jpg                       with --scenes N, N different pictures for a demo wall
        Options:
          --width W, --height H   the upright size, 16–8000 (default 1200 x 800; scenes use max(W, H))
          --scenes N              0–10000 extra pictures (default 0)

        """

    static func run(_ args: [String]) -> Int32 {
        do {
            let o = try Options(args, known: ["width", "height", "scenes"], flags: ["help"])
            if o.flag("help") { Terminal.write(help, to: 1); return 0 }
            guard let dir = o.positional.first else { throw UsageError(description: usage) }
            let w = Int(o.value("width") ?? "1200") ?? 0, h = Int(o.value("height") ?? "800") ?? 0
            guard (16...8000).contains(w), (16...8000).contains(h) else { throw UsageError(description: "width and height must be 16–8000") }
            let scenes = Int(o.value("scenes") ?? "0") ?? -1
            guard (0...10_000).contains(scenes) else { throw UsageError(description: "--scenes needs 0–10000") }
            guard ClientPaths.makeDirectories(dir, mode: 0o755) else { throw UsageError(description: "cannot create \(dir)") }
            let upright = renderLandscape(width: w, height: h, seed: 20261130)
            for orientation in 1...8 {
                try write(upright, width: w, height: h, orientation: orientation, to: "\(dir)/landscape_o\(orientation).jpg")
            }
            for i in 0..<scenes {
                let scene = SampleScene(index: i, seed: 20261202)
                let (sw, sh) = scene.size(longestEdge: max(w, h))
                let orientation = i % 8 + 1
                let number = String(repeating: "0", count: max(0, 3 - String(i + 1).count)) + String(i + 1)
                try write(scene.render(width: sw, height: sh), width: sw, height: sh, orientation: orientation,
                          to: "\(dir)/scene_\(number)_\(scene.name)_o\(orientation).jpg")
            }
            return 0
        } catch {
            Terminal.write("photowall samples: \(error)\n", to: 2)
            return error is UsageError ? 64 : 1
        }
    }

    /// Stores the upright RGB picture as a JPEG under EXIF `orientation` at `path`.
    static func write(_ upright: [UInt8], width w: Int, height h: Int, orientation: Int, to path: String) throws {
        let (pixels, sw, sh) = storedPixels(upright, width: w, height: h, orientation: orientation)
        var jpeg = try ImageEncoding.jpeg(rgb: pixels, width: sw, height: sh, quality: 88)
        insertEXIF(orientation: orientation, into: &jpeg)
        guard let f = fopen(path, "wb") else { throw UsageError(description: "cannot write \(path)") }
        let written = jpeg.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
        guard fclose(f) == 0, written == jpeg.count else { throw UsageError(description: "cannot write \(path)") }
        Terminal.write("\(path) \(sw)x\(sh) orientation \(orientation)\n", to: 1)
    }

    /// An RGB landscape: sky gradient, a sun with a soft edge, two hill layers, fine grain.
    static func renderLandscape(width w: Int, height h: Int, seed: UInt64) -> [UInt8] {
        var px = [UInt8](repeating: 0, count: w * h * 3)
        var state = seed
        func noise() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 40) / Double(1 << 24) - 0.5
        }
        let sunX = Double(w) * 0.72, sunY = Double(h) * 0.3, sunR = Double(min(w, h)) * 0.09
        for y in 0..<h {
            let fy = Double(y) / Double(h)
            for x in 0..<w {
                let fx = Double(x) / Double(w)
                var r = 70 + 120 * fy, g = 130 + 80 * fy, b = 230 - 40 * fy  // sky
                let d = ((Double(x) - sunX) * (Double(x) - sunX) + (Double(y) - sunY) * (Double(y) - sunY)).squareRoot()
                let sun = max(0, min(1, (sunR * 1.3 - d) / (sunR * 0.3)))
                r += (255 - r) * sun; g += (230 - g) * sun; b += (150 - b) * sun
                let far = 0.55 + 0.08 * sin(fx * 9.0) + 0.04 * sin(fx * 23.0 + 1)
                if fy > far { r = 60 + 30 * fx; g = 110 + 20 * fy; b = 80 }
                let near = 0.72 + 0.06 * sin(fx * 5.0 + 2) + 0.03 * sin(fx * 31.0)
                if fy > near { r = 40 + 50 * fy; g = 90 + 40 * (1 - fx); b = 40 }
                // A red marker in the upper-left corner makes the upright side obvious.
                if x < w / 10, y < h / 10 { r = 220; g = 30; b = 30 }
                let n = noise() * 10
                let i = (y * w + x) * 3
                px[i] = UInt8(max(0, min(255, r + n)))
                px[i + 1] = UInt8(max(0, min(255, g + n)))
                px[i + 2] = UInt8(max(0, min(255, b + n)))
            }
        }
        return px
    }

    /// The pixels a camera would store so that applying EXIF `orientation` gives `upright`.
    /// - Returns: stored pixels and their width and height (swapped for 5–8).
    static func storedPixels(_ up: [UInt8], width w: Int, height h: Int, orientation: Int) -> ([UInt8], Int, Int) {
        let swaps = orientation >= 5
        let sw = swaps ? h : w, sh = swaps ? w : h
        var out = [UInt8](repeating: 0, count: up.count)
        for sy in 0..<sh {
            for sx in 0..<sw {
                // Where the stored pixel (sx, sy) lands in the upright image (EXIF 2.32 §4.6.4 Orientation).
                let (ux, uy): (Int, Int)
                switch orientation {
                case 2: (ux, uy) = (w - 1 - sx, sy)
                case 3: (ux, uy) = (w - 1 - sx, h - 1 - sy)
                case 4: (ux, uy) = (sx, h - 1 - sy)
                case 5: (ux, uy) = (sy, sx)
                case 6: (ux, uy) = (w - 1 - sy, sx)
                case 7: (ux, uy) = (w - 1 - sy, h - 1 - sx)
                case 8: (ux, uy) = (sy, h - 1 - sx)
                default: (ux, uy) = (sx, sy)
                }
                let s = (sy * sw + sx) * 3, u = (uy * w + ux) * 3
                out[s] = up[u]; out[s + 1] = up[u + 1]; out[s + 2] = up[u + 2]
            }
        }
        return (out, sw, sh)
    }

    /// Inserts `APP1 "Exif\0\0"` with a little-endian TIFF holding one IFD0 entry, Orientation
    /// (tag 0x0112, SHORT), right after SOI.
    static func insertEXIF(orientation: Int, into jpeg: inout [UInt8]) {
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]  // "II", 42, IFD0 at 8
        tiff += [0x01, 0x00]                                                    // one entry
        tiff += [0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, UInt8(orientation), 0x00, 0x00, 0x00]
        tiff += [0x00, 0x00, 0x00, 0x00]                                        // no next IFD
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        jpeg.insert(contentsOf: segment, at: 2)
    }
}
