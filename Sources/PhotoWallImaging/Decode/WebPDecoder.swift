internal import CWebP

/// Reads and decodes WebP with libwebp: the simple/advanced API for still images (with libwebp's
/// own scaled decoding, `use_scaling`, so a large file is never held at full size) and the demux
/// API for the `EXIF` and `ICCP` chunks and for animations (first frame, composed on the canvas).
///
/// Orientation comes from the EXIF chunk's Orientation tag and is applied after resizing, as for
/// JPEG. Sources: WebP container specification (RIFF layout, VP8X flags, ICCP/EXIF chunks),
/// libwebp `decode.h` / `demux.h`.
enum WebPDecoder {
    struct Info {
        var width: Int
        var height: Int
        var hasAlpha: Bool
        var animated: Bool
        var orientation: ImageOrientation
    }

    /// Canvas size, alpha, animation and EXIF orientation from the headers (no pixels decoded).
    /// - Throws: `.truncated` when the data ends inside the headers, `.corrupt` otherwise.
    static func readInfo(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) -> Info {
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base, bytes.count, &features)
        guard status == VP8_STATUS_OK else { throw error(status, "reading the header") }
        guard features.width > 0, features.height > 0 else {
            throw .corrupt(.webp, "the header declares an empty \(features.width)x\(features.height) image")
        }
        var orientation = ImageOrientation.up
        if let exif = chunk("EXIF", in: bytes) {
            orientation = exif.withUnsafeBytes { EXIFOrientation.parse($0) } ?? .up
        }
        return Info(width: Int(features.width), height: Int(features.height), hasAlpha: features.has_alpha != 0,
                    animated: features.has_animation != 0, orientation: orientation)
    }

    /// The payload of the first chunk with this FourCC (`EXIF`, `ICCP`), from a partial demux so a
    /// truncated file still gives the chunks before the cut.
    static func chunk(_ fourCC: String, in bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var data = WebPData(bytes: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        var state = WEBP_DEMUX_PARSING_HEADER
        guard let demux = WebPDemuxPartial(&data, &state) else { return nil }
        defer { WebPDemuxDelete(demux) }
        var iterator = WebPChunkIterator()
        guard WebPDemuxGetChunk(demux, fourCC, 1, &iterator) != 0 else { return nil }
        defer { WebPDemuxReleaseChunkIterator(&iterator) }
        guard let start = iterator.chunk.bytes else { return nil }
        return Array(UnsafeBufferPointer(start: start, count: iterator.chunk.size))
    }

    /// - Parameters:
    ///   - targets: Output sizes in stored orientation, each at most the source size.
    /// - Throws: `.corrupt`, `.truncated`, `.unsupportedType`, `.decoderMemoryExceeded`.
    static func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, targets: [ResizeTarget],
                       options: ThumbnailOptions) throws(ImagingError) -> DecodedImages {
        let info = try readInfo(bytes)
        guard info.width == header.width, info.height == header.height else {
            throw .corrupt(.webp, "header size changed between reads")
        }
        let icc = chunk("ICCP", in: bytes)
        let images = info.animated
            ? try decodeFirstFrame(bytes, info: info, targets: targets, options: options)
            : try decodeStill(bytes, info: info, targets: targets, options: options)
        return DecodedImages(images: images, colour: .rgb, iccProfile: icc)
    }

    /// Still image: libwebp scales while decoding to the largest target x `reducingGap` (area
    /// averaging, alpha premultiplied by libwebp), then the usual Lanczos3 streams finish.
    private static func decodeStill(_ bytes: UnsafeRawBufferPointer, info: Info, targets: [ResizeTarget],
                                    options: ThumbnailOptions) throws(ImagingError) -> [PixelImage] {
        let largest = ResizeTarget(width: targets.map(\.width).max()!, height: targets.map(\.height).max()!)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw ImagingError(code: .unsupportedType, message: "libwebp version mismatch.", detectedType: .webp)
        }
        defer { WebPFreeDecBuffer(&config.output) }
        let scaledWidth = min(info.width, Int((Double(largest.width) * options.reducingGap).rounded(.up)))
        let scaledHeight = min(info.height, Int((Double(largest.height) * options.reducingGap).rounded(.up)))
        if scaledWidth < info.width || scaledHeight < info.height {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(scaledWidth)
            config.options.scaled_height = Int32(scaledHeight)
        }
        let channels = info.hasAlpha ? 4 : 3
        let needed = Double(scaledWidth) * Double(scaledHeight) * Double(channels)
            + (config.options.use_scaling != 0 ? Double(info.width) * Double(channels) * 16 : 0)
        try checkMemory(needed, info: info, options: options)
        config.output.colorspace = info.hasAlpha ? MODE_RGBA : MODE_RGB
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let status = WebPDecode(base, bytes.count, &config)
        guard status == VP8_STATUS_OK else { throw error(status, "decoding") }
        let width = Int(config.output.width), height = Int(config.output.height)
        guard width == scaledWidth, height == scaledHeight, let rgba = config.output.u.RGBA.rgba else {
            throw .corrupt(.webp, "decoded size \(width)x\(height) differs from the requested \(scaledWidth)x\(scaledHeight)")
        }
        return resize(rgba, stride: Int(config.output.u.RGBA.stride), width: width, height: height,
                      channels: channels, hasAlpha: info.hasAlpha, info: info, targets: targets, options: options)
    }

    /// Animation: the first frame composed on a transparent canvas (WebPAnimDecoder), full size.
    private static func decodeFirstFrame(_ bytes: UnsafeRawBufferPointer, info: Info, targets: [ResizeTarget],
                                         options: ThumbnailOptions) throws(ImagingError) -> [PixelImage] {
        // The decoder keeps the current and the previous canvas.
        try checkMemory(Double(info.width) * Double(info.height) * 8, info: info, options: options)
        var animOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&animOptions) != 0 else {
            throw ImagingError(code: .unsupportedType, message: "libwebp version mismatch.", detectedType: .webp)
        }
        animOptions.color_mode = MODE_RGBA
        animOptions.use_threads = 0
        var data = WebPData(bytes: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let decoder = WebPAnimDecoderNew(&data, &animOptions) else {
            // WebPAnimDecoderNew only says "failed": tell truncation from damage by the RIFF size.
            throw riffSize(bytes) > bytes.count
                ? .truncated(.webp, "the animation ends before its frames do")
                : .corrupt(.webp, "the animation could not be parsed")
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var frame: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
            throw riffSize(bytes) > bytes.count
                ? .truncated(.webp, "the first frame is cut short")
                : .corrupt(.webp, "the first frame could not be decoded")
        }
        return resize(frame, stride: info.width * 4, width: info.width, height: info.height, channels: 4,
                      hasAlpha: true, info: info, targets: targets, options: options)
    }

    private static func resize(_ pixels: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int,
                               channels: Int, hasAlpha: Bool, info: Info, targets: [ResizeTarget],
                               options: ThumbnailOptions) -> [PixelImage] {
        // Geometric extent in decoded pixels: the scaled image covers the whole source.
        let streams = targets.map {
            ResizeStream(channels: channels, hasAlpha: hasAlpha, inWidth: width, inHeight: height,
                         extentX: Double(width), extentY: Double(height), outWidth: $0.width,
                         outHeight: $0.height, gap: options.reducingGap)
        }
        for y in 0..<height {
            let row = UnsafePointer(pixels + y * stride)
            for stream in streams { stream.push(row) }
        }
        return streams.map { $0.finish() }
    }

    private static func checkMemory(_ needed: Double, info: Info, options: ThumbnailOptions) throws(ImagingError) {
        guard needed <= Double(options.maxDecoderMemoryBytes) else {
            throw ImagingError(code: .decoderMemoryExceeded,
                               message: "WebP image \(info.width)x\(info.height) needs about \(Int(needed) >> 20) MiB "
                                   + "to decode, over the \(options.maxDecoderMemoryBytes >> 20) MiB limit.",
                               detectedType: .webp)
        }
    }

    /// The size the RIFF header declares for the whole file (8 + chunk size), 0 when unreadable.
    private static func riffSize(_ b: UnsafeRawBufferPointer) -> Int {
        guard b.count >= 8 else { return 0 }
        return 8 + (Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24)
    }

    private static func error(_ status: VP8StatusCode, _ doing: String) -> ImagingError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA:
            return .truncated(.webp, "the data ends while \(doing)")
        case VP8_STATUS_OUT_OF_MEMORY:
            return ImagingError(code: .decoderMemoryExceeded, message: "Out of memory \(doing) the WebP image.",
                                detectedType: .webp)
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            return ImagingError(code: .unsupportedType, message: "Unsupported WebP variant (libwebp refused it while \(doing)).",
                                detectedType: .webp)
        default:
            return .corrupt(.webp, "libwebp status \(status.rawValue) while \(doing)")
        }
    }
}
