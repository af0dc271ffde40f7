internal import CImageShim

/// Decodes a JPEG with libjpeg (through CImageShim) straight into resize
/// streams: DCT-domain downscaling, then rows in strips, so a baseline file
/// is never held at full size in memory.
///
/// Owns the C decompressor; single use, one thread.
struct JPEGDecoder: ~Copyable {
    private let raw: OpaquePointer

    init() throws(ImagingError) {
        guard let raw = CImageShim_jpeg_decoder_create() else {
            throw ImagingError(code: .decoderMemoryExceeded, message: "Out of memory creating the JPEG decoder.",
                               detectedType: .jpeg)
        }
        self.raw = raw
    }

    deinit { CImageShim_jpeg_decoder_destroy(raw) }

    private var message: String { String(cString: CImageShim_jpeg_decoder_message(raw)) }

    /// Smallest DCT scale (1/8, 1/4, 1/2, 1) that still leaves `gap` x for the
    /// final filter on both axes of the largest target.
    static func scaleDenominator(width: Int, height: Int, largest: ResizeTarget, gap: Double) -> Int {
        for d in [8, 4, 2] where Double(width) / Double(d) >= gap * Double(largest.width)
            && Double(height) / Double(d) >= gap * Double(largest.height) {
            return d
        }
        return 1
    }

    /// - Parameters:
    ///   - bytes: The whole file, or with `descriptor` the start of it; must stay valid for the call.
    ///   - descriptor: -1, or an open file positioned just after `bytes` that libjpeg reads the
    ///     rest from in 64 KiB blocks (`.readFailed` when a read fails).
    ///   - targets: Output sizes in stored orientation, each at most the source size.
    /// - Throws: `.corrupt`, `.truncated`, `.unsupportedType` (12-bit, lossless),
    ///   `.decoderMemoryExceeded` (progressive coefficients over the cap), `.tooLarge`.
    consuming func decode(_ bytes: UnsafeRawBufferPointer, descriptor: Int32 = -1, header: ImageHeader,
                          targets: [ResizeTarget], options: ThumbnailOptions) throws(ImagingError) -> DecodedImages {
        var info = CImageShim_JPEGHeader()
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        try ShimStatus.check(CImageShim_jpeg_read_header(raw, base, bytes.count, descriptor,
                                                          UInt64(options.maxDecoderMemoryBytes), &info),
                             message, type: .jpeg, options: options)
        guard Int(info.width) == header.width, Int(info.height) == header.height else {
            throw .corrupt(.jpeg, "frame size \(info.width)x\(info.height) differs from the first SOF marker")
        }
        let channels = Int(info.layout)
        let colour: SourceColour = switch channels {
        case 1: .grey
        case 3: .rgb
        default: .cmyk(adobeInverted: info.adobe_inverted != 0)
        }
        let icc: [UInt8]? = info.icc == nil ? nil
            : Array(UnsafeBufferPointer(start: info.icc, count: Int(info.icc_length)))

        let largest = targets.max { $0.width * $0.height < $1.width * $1.height }!
        let denom = Self.scaleDenominator(width: header.width, height: header.height, largest: largest,
                                          gap: options.jpegScaleGap)
        var outWidth: UInt32 = 0, outHeight: UInt32 = 0
        try ShimStatus.check(CImageShim_jpeg_start(raw, Int32(denom), &outWidth, &outHeight), message,
                             type: .jpeg, options: options)
        let width = Int(outWidth), height = Int(outHeight)
        let extentX = Double(header.width) / Double(denom), extentY = Double(header.height) / Double(denom)
        let streams = targets.map {
            ResizeStream(channels: channels, hasAlpha: false, inWidth: width, inHeight: height,
                         extentX: extentX, extentY: extentY, outWidth: $0.width, outHeight: $0.height,
                         gap: options.reducingGap)
        }
        let stripRows = 16
        let stride = width * channels
        let strip = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * stripRows)
        defer { strip.deallocate() }
        var rowsDone = 0
        while rowsDone < height {
            var got: Int32 = 0
            try ShimStatus.check(CImageShim_jpeg_read_rows(raw, strip, stride, Int32(stripRows), &got), message,
                                 type: .jpeg, options: options)
            guard got > 0 else { break }
            for r in 0..<Int(got) {
                for stream in streams { stream.push(strip + r * stride) }
            }
            rowsDone += Int(got)
        }
        guard rowsDone == height else {
            throw .truncated(.jpeg, "only \(rowsDone) of \(height) rows could be decoded")
        }
        return DecodedImages(images: streams.map { $0.finish() }, colour: colour, iccProfile: icc)
    }
}
