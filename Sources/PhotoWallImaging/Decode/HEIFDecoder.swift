internal import CHeif

/// Reads and decodes HEIC, HEIF and AVIF with libheif (HEVC through libde265, AV1 through dav1d).
///
/// - Orientation: libheif applies the file's own transforms (`irot`, `imir`, `clap`) while
///   decoding, and `heif_image_handle_get_width/height` are already the transformed size, so the
///   header reports `.up`. The EXIF Orientation inside a HEIC is ignored on purpose: HEIF
///   (ISO/IEC 23008-12 section 6.5.3 note, and MIAF) says the transforms are authoritative, and
///   iPhones write both, so applying EXIF too would turn the photo twice.
/// - Grid (tiled) images and sequences: the primary image handle covers them; libheif composes the
///   tiles of a grid into one picture.
/// - Speed: when the file has a `thmb` item at least as large as the largest target (and the
///   primary's aspect ratio and alpha), that item is decoded instead of the primary image.
/// - Memory: libheif decodes the whole (primary or thumbnail) picture; the planes plus the 8-bit
///   interleaved copy are estimated first and refused over `maxDecoderMemoryBytes`, and libheif's
///   own side limit is set to `maxSidePixels`.
///
/// Owns the libheif context; single use, one thread. `bytes` must stay valid while it lives.
struct HEIFDecoder: ~Copyable {
    private let context: OpaquePointer
    private let primary: OpaquePointer
    let type: ImageType

    /// Parses the boxes (no pixels are decoded).
    /// - Throws: `.truncated` / `.corrupt` for damaged boxes, `.unsupportedType` for a HEIF whose
    ///   primary image libheif cannot decode, `.tooLarge` for libheif's security limits.
    init(_ bytes: UnsafeRawBufferPointer, type: ImageType, maxSidePixels: Int) throws(ImagingError) {
        self.type = type
        guard let context = heif_context_alloc() else {
            throw ImagingError(code: .decoderMemoryExceeded, message: "Out of memory creating the \(type) decoder.",
                               detectedType: type)
        }
        heif_context_set_maximum_image_size_limit(context, Int32(clamping: maxSidePixels))
        // The error's message lives in the context: map it before freeing the context.
        var err = heif_context_read_from_memory_without_copy(context, bytes.baseAddress, bytes.count, nil)
        guard err.code == heif_error_Ok else {
            let failure = Self.error(err, type: type, bytes: bytes)
            heif_context_free(context)
            throw failure
        }
        var handle: OpaquePointer?
        err = heif_context_get_primary_image_handle(context, &handle)
        guard err.code == heif_error_Ok, let handle else {
            let failure = Self.error(err, type: type, bytes: bytes)
            heif_context_free(context)
            throw failure
        }
        self.context = context
        self.primary = handle
    }

    deinit {
        heif_image_handle_release(primary)
        heif_context_free(context)
    }

    /// The primary image's size after libheif's transforms; orientation is always `.up`.
    var header: ImageHeader {
        ImageHeader(type: type, width: Int(heif_image_handle_get_width(primary)),
                    height: Int(heif_image_handle_get_height(primary)), orientation: .up, isProgressive: false)
    }

    /// - Parameters:
    ///   - targets: Output sizes (upright = stored for HEIF), each at most the source size.
    /// - Throws: `.corrupt`, `.truncated`, `.unsupportedType`, `.decoderMemoryExceeded`, `.tooLarge`.
    consuming func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, targets: [ResizeTarget],
                          options: ThumbnailOptions) throws(ImagingError) -> DecodedImages {
        let largest = ResizeTarget(width: targets.map(\.width).max()!, height: targets.map(\.height).max()!)
        let thumbnail = usableThumbnail(covering: largest, header: header)
        defer { if let thumbnail { heif_image_handle_release(thumbnail) } }
        let handle = thumbnail ?? primary
        let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
        let channels = hasAlpha ? 4 : 3
        let width = Int(heif_image_handle_get_width(handle)), height = Int(heif_image_handle_get_height(handle))
        try checkMemory(handle, width: width, height: height, channels: channels, options: options)

        guard let decoding = heif_decoding_options_alloc() else {
            throw ImagingError(code: .decoderMemoryExceeded, message: "Out of memory decoding the \(type) image.",
                               detectedType: type)
        }
        defer { heif_decoding_options_free(decoding) }
        decoding.pointee.ignore_transformations = 0           // apply irot/imir/clap
        decoding.pointee.convert_hdr_to_8bit = 1              // 10/12-bit → 8-bit, rounded by libheif
        var image: OpaquePointer?
        let err = heif_decode_image(handle, &image, heif_colorspace_RGB,
                                    hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, decoding)
        guard err.code == heif_error_Ok, let image else {
            throw Self.error(err, type: type, bytes: bytes)
        }
        defer { heif_image_release(image) }
        let outWidth = Int(heif_image_get_width(image, heif_channel_interleaved))
        let outHeight = Int(heif_image_get_height(image, heif_channel_interleaved))
        guard outWidth == width, outHeight == height else {
            throw .corrupt(type, "decoded size \(outWidth)x\(outHeight) differs from the declared \(width)x\(height)")
        }
        guard heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved) == 8 else {
            throw ImagingError(code: .unsupportedType,
                               message: "Unsupported \(type) variant: libheif did not reduce it to 8 bits per channel.",
                               detectedType: type)
        }
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
            throw .corrupt(type, "no interleaved plane after decoding")
        }
        let streams = targets.map {
            ResizeStream(channels: channels, hasAlpha: hasAlpha, inWidth: width, inHeight: height,
                         extentX: Double(width), extentY: Double(height), outWidth: $0.width, outHeight: $0.height,
                         gap: options.reducingGap)
        }
        for y in 0..<height {
            let row = plane + y * Int(stride)
            for stream in streams { stream.push(row) }
        }
        return DecodedImages(images: streams.map { $0.finish() }, colour: .rgb,
                             iccProfile: colourProfile(handle, decoded: image))
    }

    /// The smallest thumbnail item that covers `largest` on both axes, has the primary's aspect
    /// ratio (within one pixel) and the same alpha; nil when there is none.
    private func usableThumbnail(covering largest: ResizeTarget, header: ImageHeader) -> OpaquePointer? {
        let count = Int(heif_image_handle_get_number_of_thumbnails(primary))
        guard count > 0, count <= 16 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let got = Int(heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, Int32(count)))
        let primaryAlpha = heif_image_handle_has_alpha_channel(primary)
        var best: (handle: OpaquePointer, pixels: Int)?
        for id in ids.prefix(got) {
            var thumb: OpaquePointer?
            guard heif_image_handle_get_thumbnail(primary, id, &thumb).code == heif_error_Ok, let thumb else { continue }
            let w = Int(heif_image_handle_get_width(thumb)), h = Int(heif_image_handle_get_height(thumb))
            let sameShape = abs(w * header.height - h * header.width) <= max(header.width, header.height)
            if w >= largest.width, h >= largest.height, w < header.width, sameShape,
               heif_image_handle_has_alpha_channel(thumb) == primaryAlpha, best.map({ w * h < $0.pixels }) ?? true {
                if let old = best { heif_image_handle_release(old.handle) }
                best = (thumb, w * h)
            } else {
                heif_image_handle_release(thumb)
            }
        }
        return best?.handle
    }

    /// Refuses a decode whose coded planes plus the 8-bit interleaved output would exceed the cap.
    /// Planes are estimated as 4:2:0 (what cameras and encoders write), 2 bytes per sample above 8 bits.
    /// This is a lower bound of the real peak: for a single-picture (not grid) 48 MP HEIC the estimate
    /// is 209 MiB and `make bench` measured 352 MiB peak RSS, because libde265 keeps its own decoded
    /// picture beside libheif's copy; grid images (iPhones) decode tile by tile and stay nearer it.
    private func checkMemory(_ handle: OpaquePointer, width: Int, height: Int, channels: Int,
                             options: ThumbnailOptions) throws(ImagingError) {
        let bits = Int(heif_image_handle_get_luma_bits_per_pixel(handle))
        let sampleBytes = bits > 8 ? 2.0 : 1.0
        let pixels = Double(width) * Double(height)
        let planes = pixels * sampleBytes * (1.5 + (channels == 4 ? 1 : 0))
        let needed = planes + pixels * Double(channels)
        guard needed <= Double(options.maxDecoderMemoryBytes) else {
            throw ImagingError(code: .decoderMemoryExceeded,
                               message: "\(type) image \(width)x\(height) needs about \(Int(needed) >> 20) MiB to decode, "
                                   + "over the \(options.maxDecoderMemoryBytes >> 20) MiB limit.",
                               detectedType: type)
        }
    }

    /// The embedded ICC profile (`colr` prof/rICC), else an ICC profile made from the `nclx`
    /// primaries and transfer function when they are not sRGB's; nil means sRGB. The nclx comes
    /// from the `colr` box, else from the coded stream (HEVC VUI, AV1 sequence header), which
    /// libheif 1.15 only reports on the decoded image.
    private func colourProfile(_ handle: OpaquePointer, decoded image: OpaquePointer) -> [UInt8]? {
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        if size > 0 && size <= 64 << 20 {
            var icc = [UInt8](repeating: 0, count: size)
            if heif_image_handle_get_raw_color_profile(handle, &icc).code == heif_error_Ok { return icc }
        }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        if heif_image_handle_get_nclx_color_profile(handle, &nclx).code != heif_error_Ok {
            nclx = nil
            if heif_image_get_nclx_color_profile(image, &nclx).code != heif_error_Ok { nclx = nil }
        }
        guard let nclx else { return nil }
        defer { heif_nclx_color_profile_free(nclx) }
        let n = nclx.pointee
        return NCLXProfile.icc(primaries: Int(n.color_primaries.rawValue), transfer: Int(n.transfer_characteristics.rawValue),
                               red: (Double(n.color_primary_red_x), Double(n.color_primary_red_y)),
                               green: (Double(n.color_primary_green_x), Double(n.color_primary_green_y)),
                               blue: (Double(n.color_primary_blue_x), Double(n.color_primary_blue_y)),
                               white: (Double(n.color_primary_white_x), Double(n.color_primary_white_y)))
    }

    /// Maps a libheif error to the imaging error kinds. libheif often reports a cut file as a
    /// missing box ("No 'meta' box"), so a top-level box that runs past the data makes it `.truncated`.
    private static func error(_ e: heif_error, type: ImageType, bytes: UnsafeRawBufferPointer) -> ImagingError {
        var text = (e.message.map { String(cString: $0) } ?? "")
            .split(whereSeparator: \.isNewline).joined(separator: " ")
        while text.last == " " || text.last == "." { text.removeLast() }
        if text.isEmpty { text = "libheif error \(e.code.rawValue).\(e.subcode.rawValue)" }
        if e.subcode == heif_suberror_End_of_data { return .truncated(type, text) }
        if let box = truncatedBox(bytes) { return .truncated(type, "the data ends inside the '\(box)' box (\(text))") }
        if e.subcode == heif_suberror_Security_limit_exceeded {
            return ImagingError(code: .tooLarge, message: "Image too large: \(text).", detectedType: type)
        }
        switch e.code {
        case heif_error_Memory_allocation_error:
            return ImagingError(code: .decoderMemoryExceeded, message: "Out of memory decoding the \(type) image (\(text)).",
                                detectedType: type)
        case heif_error_Unsupported_feature, heif_error_Unsupported_filetype:
            return ImagingError(code: .unsupportedType, message: "Unsupported \(type) variant: \(text).", detectedType: type)
        default:
            return .corrupt(type, text)
        }
    }

    /// The type of the first top-level ISO-BMFF box whose declared size runs past the data, if any.
    /// Source: ISO/IEC 14496-12 section 4.2 (box header: 32-bit size, type, 64-bit largesize when size is 1).
    static func truncatedBox(_ b: UnsafeRawBufferPointer) -> String? {
        var at = 0
        while at < b.count {
            guard at + 8 <= b.count else { return "header" }
            func u32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
            let name = String(decoding: (at + 4..<at + 8).map { b[$0] }, as: UTF8.self)
            var size = u32(at)
            if size == 1 {
                guard at + 16 <= b.count else { return name }
                let high = u32(at + 8), low = u32(at + 12)
                guard high < 1 << 30 else { return name }
                size = high << 32 | low
            } else if size == 0 {
                return nil                                       // runs to the end of the file
            }
            guard size >= 8 else { return nil }                  // damaged, not cut
            if size > b.count - at { return name }
            at += size
        }
        return nil
    }
}
