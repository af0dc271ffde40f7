import Foundation
import PhotoWallTesting
import PhotoWallCore
internal import CHeif
@testable import PhotoWallImaging

/// Makes HEIC/AVIF/WebP test files at test time with Debian's own tools (`heif-enc` from
/// libheif-examples, `cwebp`/`webpmux`/`img2webp` from webp) and, where heif-enc 1.15 has no
/// option for it (`irot`/`imir`, an EXIF block, a `thmb` item), with libheif's own encoder API.
enum MadeFiles {
    /// Absolute path of a Debian tool, or nil (after one plain SKIPPED line) when it is not installed.
    static func tool(_ name: String) -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] where access("\(dir)/\(name)", X_OK) == 0 {
            return "\(dir)/\(name)"
        }
        print("SKIPPED: \(name) is not installed (scripts/install-deps.sh test installs libheif-examples and webp)")
        return nil
    }

    /// Whether every tool is installed; tests use it in `.enabled(if:)`.
    static func have(_ names: String...) -> Bool { names.allSatisfy { tool($0) != nil } }

    struct ToolFailed: Error, CustomStringConvertible { var description: String }

    /// Runs a tool and requires exit status 0.
    static func run(_ name: String, _ arguments: [String]) throws {
        guard let path = tool(name) else { throw ToolFailed(description: "\(name) missing") }
        let r = try runProcess(path, arguments)
        guard r.status == 0 else { throw ToolFailed(description: "\(name) \(arguments) exited \(r.status)") }
    }

    static func write(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// A TIFF block whose IFD0 holds only Orientation = `value` (little endian).
    static func exif(orientation value: Int) -> [UInt8] {
        EXIFOrientationTests.tiff(bigEndian: false, entries: [(0x0112, 3, 1, UInt32(value))])
    }

    /// A 16-bit RGB PNG of `image` (each 8-bit value v becomes v x 257), zlib stored blocks.
    static func png16(_ image: PixelImage) -> [UInt8] {
        precondition(image.channels == 3)
        var raw: [UInt8] = []
        raw.reserveCapacity(image.height * (1 + image.width * 6))
        for y in 0..<image.height {
            raw.append(0)
            for i in 0..<(image.width * 3) {
                let v = image.pixels[y * image.width * 3 + i]
                raw += [v, v]
            }
        }
        return PNGContainer.file(width: image.width, height: image.height, bitDepth: 16, colourType: 2 /* RGB */, scanlines: raw)
    }

    /// An 8-bit PNG of `image` with an `iCCP` chunk holding `profile`.
    static func pngWithICC(_ image: PixelImage, profile: [UInt8]) throws -> [UInt8] {
        var png = try Pixels.png(image)
        png.insert(contentsOf: PNGContainer.chunk("iCCP", Array("P3".utf8) + [0, 0] + PNGContainer.storedZlib(profile)), at: 33)
        return png
    }

    struct HEIFError: Error, CustomStringConvertible { var description: String }

    /// Writes `image` (RGB or RGBA) as HEIC with libheif's encoder: `orientation` becomes
    /// `irot`/`imir` boxes (libheif 1.15 `heif_encoding_options.image_orientation`), `exif` adds an
    /// EXIF block (as iPhones do), `thumbnail` adds a `thmb` item encoded from another picture,
    /// `nclxPrimaries` writes a `colr` nclx box with those H.273 primaries and the sRGB transfer
    /// (heif-enc 1.15 only puts nclx into the coded stream, where libheif 1.15 does not read it back).
    /// `av1` makes an AVIF instead.
    static func writeHEIC(_ image: PixelImage, to path: String, orientation: Int = 1, exif: [UInt8]? = nil,
                          thumbnail: (image: PixelImage, box: Int)? = nil, nclxPrimaries: Int? = nil,
                          av1: Bool = false) throws {
        guard let context = heif_context_alloc() else { throw HEIFError(description: "no context") }
        defer { heif_context_free(context) }
        func check(_ e: heif_error) throws {
            guard e.code == heif_error_Ok else {
                throw HEIFError(description: e.message.map { String(cString: $0) } ?? "libheif error \(e.code)")
            }
        }
        var encoder: OpaquePointer?
        try check(heif_context_get_encoder_for_format(context, av1 ? heif_compression_AV1 : heif_compression_HEVC, &encoder))
        defer { heif_encoder_release(encoder) }
        try check(heif_encoder_set_lossy_quality(encoder, 92))
        let options = heif_encoding_options_alloc()!
        defer { heif_encoding_options_free(options) }
        options.pointee.image_orientation = heif_orientation(rawValue: UInt32(orientation))
        let primary = try makeImage(image, check)
        defer { heif_image_release(primary) }
        if let nclxPrimaries {
            let nclx = heif_nclx_color_profile_alloc()!
            defer { heif_nclx_color_profile_free(nclx) }
            try check(heif_nclx_color_profile_set_color_primaries(nclx, UInt16(nclxPrimaries)))
            try check(heif_nclx_color_profile_set_transfer_characteristics(nclx, 13))
            try check(heif_nclx_color_profile_set_matrix_coefficients(nclx, 6))
            nclx.pointee.full_range_flag = 1
            try check(heif_image_set_nclx_color_profile(primary, nclx))
            options.pointee.macOS_compatibility_workaround_no_nclx_profile = 0
        }
        var handle: OpaquePointer?
        try check(heif_context_encode_image(context, primary, encoder, options, &handle))
        defer { heif_image_handle_release(handle) }
        if let exif {
            try check(heif_context_add_exif_metadata(context, handle, exif, Int32(exif.count)))
        }
        if let thumbnail {
            let small = try makeImage(thumbnail.image, check)
            defer { heif_image_release(small) }
            options.pointee.image_orientation = heif_orientation_normal
            var thumb: OpaquePointer?
            try check(heif_context_encode_thumbnail(context, small, handle, encoder, options, Int32(thumbnail.box), &thumb))
            heif_image_handle_release(thumb)
        }
        try check(heif_context_write_to_file(context, path))
    }

    private static func makeImage(_ image: PixelImage, _ check: (heif_error) throws -> Void) throws -> OpaquePointer {
        var out: OpaquePointer?
        let chroma = image.channels == 4 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB
        try check(heif_image_create(Int32(image.width), Int32(image.height), heif_colorspace_RGB, chroma, &out))
        guard let out else { throw HEIFError(description: "no image") }
        try check(heif_image_add_plane(out, heif_channel_interleaved, Int32(image.width), Int32(image.height), 8))
        var stride: Int32 = 0
        let plane = heif_image_get_plane(out, heif_channel_interleaved, &stride)!
        for y in 0..<image.height {
            image.pixels.withUnsafeBufferPointer { px in
                (plane + y * Int(stride)).update(from: px.baseAddress! + y * image.rowBytes, count: image.rowBytes)
            }
        }
        return out
    }
}

/// A picture with four flat coloured quadrants, so orientation and colour can be read back by
/// sampling the middle of each quadrant (away from edges, chroma subsampling and ringing).
enum Quadrants {
    /// Upright top-left, top-right, bottom-left, bottom-right.
    static let colours: [[Double]] = [[200, 40, 40], [40, 170, 60], [40, 60, 200], [220, 200, 50]]

    static func upright(width: Int, height: Int) -> PixelImage {
        var px = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let q = (y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)
                for c in 0..<3 { px[(y * width + x) * 3 + c] = UInt8(colours[q][c]) }
            }
        }
        return PixelImage(width: width, height: height, channels: 3, hasAlpha: false, pixels: px)
    }

    /// The stored pixels that show `upright` once `orientation` is applied (inverse transform;
    /// `Orient` itself is checked against the EXIF definition in EXIFOrientationTests).
    static func stored(_ upright: PixelImage, orientation: ImageOrientation) -> PixelImage {
        let inverse: ImageOrientation = orientation == .right ? .left : (orientation == .left ? .right : orientation)
        return Orient.apply(inverse, to: upright)
    }

    /// Mean colour of the middle third of the quadrant `q` (0 TL, 1 TR, 2 BL, 3 BR).
    static func sample(_ image: PixelImage, quadrant q: Int) -> [Double] {
        let qw = image.width / 2, qh = image.height / 2
        let x0 = (q % 2) * qw + qw / 3, y0 = (q / 2) * qh + qh / 3
        return mean(image, x: x0..<(x0 + max(1, qw / 3)), y: y0..<(y0 + max(1, qh / 3)))
    }

    static func mean(_ image: PixelImage, x: Range<Int>, y: Range<Int>) -> [Double] {
        var sums = [0.0, 0.0, 0.0], n = 0.0
        let colours = image.hasAlpha ? image.channels - 1 : image.channels
        for yy in y {
            for xx in x {
                let i = (yy * image.width + xx) * image.channels
                for k in 0..<3 { sums[k] += Double(image.pixels[i + (colours == 1 ? 0 : k)]) }
                n += 1
            }
        }
        return sums.map { $0 / n }
    }

    /// Largest channel difference between each quadrant's sample and its expected colour.
    static func worstDifference(_ image: PixelImage) -> Double {
        (0..<4).map { q in zip(sample(image, quadrant: q), colours[q]).map { abs($0 - $1) }.max()! }.max()!
    }
}
