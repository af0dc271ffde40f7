internal import CImageShim

/// Decodes a PNG with libpng (through CImageShim) into resize streams, row
/// by row for non-interlaced files; Adam7 files need one full frame, which is
/// checked against `maxDecoderMemoryBytes` first.
///
/// Owns the C decoder; single use, one thread.
struct PNGDecoder: ~Copyable {
    private let raw: OpaquePointer
    /// No ancillary chunk (iCCP in practice; text is skipped) may inflate past this.
    static let chunkMaxBytes = 16 << 20

    init() throws(ImagingError) {
        guard let raw = CImageShim_png_decoder_create() else {
            throw ImagingError(code: .decoderMemoryExceeded, message: "Out of memory creating the PNG decoder.",
                               detectedType: .png)
        }
        self.raw = raw
    }

    deinit { CImageShim_png_decoder_destroy(raw) }

    private var message: String { String(cString: CImageShim_png_decoder_message(raw)) }

    /// - Throws: `.corrupt` (bad chunks, CRC, zlib), `.truncated`, `.tooLarge`,
    ///   `.decoderMemoryExceeded` (interlaced frame over the cap).
    consuming func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, targets: [ResizeTarget],
                          options: ThumbnailOptions) throws(ImagingError) -> DecodedImages {
        var info = CImageShim_PNGHeader()
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let maxSide = UInt32(clamping: options.maxSidePixels)
        try ShimStatus.check(CImageShim_png_read_header(raw, base, bytes.count, maxSide, Self.chunkMaxBytes, &info),
                             message, type: .png, options: options)
        let width = Int(info.width), height = Int(info.height), channels = Int(info.channels)
        guard width == header.width, height == header.height else {
            throw .corrupt(.png, "IHDR size changed between reads")
        }
        let icc: [UInt8]? = info.icc == nil ? nil
            : Array(UnsafeBufferPointer(start: info.icc, count: Int(info.icc_length)))
        let streams = targets.map {
            ResizeStream(channels: channels, hasAlpha: channels == 2 || channels == 4, inWidth: width,
                         inHeight: height, extentX: Double(width), extentY: Double(height),
                         outWidth: $0.width, outHeight: $0.height, gap: options.reducingGap)
        }
        let stride = width * channels
        if info.interlaced != 0 {
            let (frameBytes, overflow) = stride.multipliedReportingOverflow(by: height)
            guard !overflow, frameBytes <= options.maxDecoderMemoryBytes else {
                throw ImagingError(code: .decoderMemoryExceeded,
                                   message: "Interlaced PNG \(width)x\(height) needs a full frame of "
                                       + "\(frameBytes >> 20) MiB, over the \(options.maxDecoderMemoryBytes >> 20) MiB limit.",
                                   detectedType: .png)
            }
            let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: frameBytes)
            defer { frame.deallocate() }
            try ShimStatus.check(CImageShim_png_read_image(raw, frame, stride), message, type: .png, options: options)
            for y in 0..<height {
                for stream in streams { stream.push(frame + y * stride) }
            }
        } else {
            let stripRows = 16
            let strip = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * stripRows)
            defer { strip.deallocate() }
            var y = 0
            while y < height {
                let n = min(stripRows, height - y)
                try ShimStatus.check(CImageShim_png_read_rows(raw, strip, stride, Int32(n)), message, type: .png,
                                     options: options)
                for r in 0..<n {
                    for stream in streams { stream.push(strip + r * stride) }
                }
                y += n
            }
        }
        let colour: SourceColour = channels <= 2 ? .grey : .rgb
        return DecodedImages(images: streams.map { $0.finish() }, colour: colour, iccProfile: icc)
    }
}
