/// Makes upright, sRGB thumbnails from JPEG, PNG, WebP, HEIC/HEIF and AVIF uploads.
///
/// Pipeline: sniff magic bytes -> read the header (size, orientation) ->
/// refuse over-limit images -> decode with shrink-on-load (JPEG DCT scaling,
/// libwebp scaled decoding, a HEIF thumbnail item when it is large enough)
/// streaming rows into box pre-shrink + Lanczos3 (alpha premultiplied) ->
/// ICC (or HEIF nclx) / CMYK to sRGB -> orientation -> JPEG (opaque) or PNG (transparent).
/// A box that a JPEG already fits as it is (upright, baseline, no profile, coded no finer than the
/// quality) gets the source's coded data without its metadata instead (`JPEGPassthrough`); the
/// source is still decoded, for the other boxes or at 1/8 scale, so a damaged file is refused.
///
/// Orientation: JPEG, PNG and WebP apply their EXIF Orientation; HEIF/AVIF apply
/// their own `irot`/`imir`/`clap` (libheif) and never the EXIF tag inside them.
///
/// All entry points are synchronous, CPU-bound and thread-safe: call them
/// from a worker pool, never from an event loop. Typical cost for a 12 MP
/// baseline photo to a 256 box is tens of milliseconds on one core.
///
/// ```swift
/// let thumb = try Thumbnailer.makeThumbnail(from: uploadBytes)
/// // thumb.bytes is a JPEG (or PNG when transparent), thumb.width <= 256
/// ```
public enum Thumbnailer {
    /// Reads type, size and orientation from the header without decoding pixels.
    ///
    /// - Parameter bytes: The start of the file (the whole file is fine; the
    ///   JPEG markers up to the first scan or the PNG chunks up to IDAT are read).
    /// - Returns: Stored size in pixels, EXIF orientation, upright size (HEIF/AVIF:
    ///   the size after the file's transforms, orientation `.up`).
    /// - Throws: `ImagingError` `.unsupportedType` for a type that is not decodable
    ///   (by magic bytes); `.corrupt` / `.truncated` for a damaged header.
    public static func readHeader(_ bytes: [UInt8]) throws(ImagingError) -> ImageHeader {
        try withBytes(bytes) { (b) throws(ImagingError) -> ImageHeader in try HeaderReader.read(b) }
    }

    /// Makes one thumbnail that fits `options.longestEdgePixels`.
    ///
    /// - Parameters:
    ///   - bytes: A whole JPEG, PNG, WebP, HEIC/HEIF or AVIF file.
    ///   - options: Box, format, quality, background and limits.
    /// - Returns: The encoded thumbnail, upright, never larger than the source.
    /// - Throws: `ImagingError`: `.unsupportedType` (GIF, TIFF, SVG... or
    ///   12-bit/lossless JPEG), `.tooLarge` (over `maxMegapixels` or
    ///   `maxSidePixels`, decided from the header), `.corrupt`, `.truncated`,
    ///   `.decoderMemoryExceeded`, `.encodeFailed`.
    public static func makeThumbnail(from bytes: [UInt8], options: ThumbnailOptions = ThumbnailOptions())
        throws(ImagingError) -> Thumbnail {
        try makeThumbnails(from: bytes, longestEdges: [options.longestEdgePixels], options: options)[0]
    }

    /// Same as ``makeThumbnail(from:options:)`` for bytes already in memory
    /// (e.g. `Data.withUnsafeBytes`); the buffer is only read during the call.
    public static func makeThumbnail(from buffer: UnsafeRawBufferPointer,
                                     options: ThumbnailOptions = ThumbnailOptions()) throws(ImagingError) -> Thumbnail {
        try makeThumbnails(from: buffer, longestEdges: [options.longestEdgePixels], options: options)[0]
    }

    /// Reads the file at `path` (at most `options.maxFileBytes`) and makes one thumbnail.
    /// A JPEG is read in 64 KiB blocks as it decodes, never whole (see
    /// ``makeThumbnails(fromFile:longestEdges:options:)``).
    ///
    /// - Throws: `.readFailed` when the file cannot be read, otherwise as
    ///   ``makeThumbnail(from:options:)``.
    public static func makeThumbnail(fromFile path: String, options: ThumbnailOptions = ThumbnailOptions())
        throws(ImagingError) -> Thumbnail {
        try makeThumbnails(fromFile: path, longestEdges: [options.longestEdgePixels], options: options)[0]
    }

    /// Makes several thumbnails from one decode, e.g. `[1080, 256]` for a
    /// display image and a grid thumbnail.
    ///
    /// The JPEG is decoded once, at the DCT scale the largest box needs; each
    /// box then has its own box pre-shrink and Lanczos3 pass over the same rows.
    ///
    /// - Parameters:
    ///   - longestEdges: Box sizes in pixels (1...16384 each), any order.
    ///     `options.longestEdgePixels` is ignored.
    /// - Returns: One thumbnail per box, in the order given.
    /// - Throws: As ``makeThumbnail(from:options:)``.
    public static func makeThumbnails(from bytes: [UInt8], longestEdges: [Int],
                                      options: ThumbnailOptions = ThumbnailOptions()) throws(ImagingError) -> [Thumbnail] {
        try withBytes(bytes) { (b) throws(ImagingError) -> [Thumbnail] in
            try makeThumbnails(from: b, longestEdges: longestEdges, options: options)
        }
    }

    /// Reads the file at `path` (at most `options.maxFileBytes`) and makes one
    /// thumbnail per box from a single decode.
    ///
    /// Memory: a JPEG whose header markers fit in its first 256 KiB is read in
    /// 64 KiB blocks by libjpeg as it decodes, so the file never sits in memory
    /// whole; other files (and JPEGs with longer headers) are read whole first.
    ///
    /// - Throws: `.readFailed` when the file cannot be read, otherwise as
    ///   ``makeThumbnail(from:options:)``.
    public static func makeThumbnails(fromFile path: String, longestEdges: [Int],
                                      options: ThumbnailOptions = ThumbnailOptions()) throws(ImagingError) -> [Thumbnail] {
        let file = try FileInput(path, maxBytes: options.maxFileBytes)
        var bytes = try file.read(upTo: min(file.size, FileInput.headerPrefixBytes))
        if bytes.count == FileInput.headerPrefixBytes {
            let fd = file.descriptor
            let streamed = try withBytes(bytes) { (prefix) throws(ImagingError) -> [Thumbnail]? in
                validate(options, longestEdges)
                guard let header = HeaderReader.readJPEG(prefix: prefix) else { return nil }
                // A JPEG that may be copied for a box is read whole: it fits the box, so it is small.
                if mayPassThrough(header, longestEdges, options), file.size <= JPEGPassthrough.maxSourceBytes { return nil }
                let decoded = try decodeJPEG(prefix, descriptor: fd, header: header, longestEdges: longestEdges,
                                             options: options)
                return try finish(decoded, header: header, options: options)
            }
            if let streamed { return streamed }
            bytes += try file.read(upTo: file.size - bytes.count)
        }
        return try makeThumbnails(from: bytes, longestEdges: longestEdges, options: options)
    }

    /// Same as the `[UInt8]` overload, for bytes already in memory; the buffer
    /// is only read during the call.
    public static func makeThumbnails(from buffer: UnsafeRawBufferPointer, longestEdges: [Int],
                                      options: ThumbnailOptions = ThumbnailOptions()) throws(ImagingError) -> [Thumbnail] {
        validate(options, longestEdges)
        let header = try HeaderReader.read(buffer, maxSidePixels: options.maxSidePixels)
        if let copied = try withPassthrough(buffer, header: header, longestEdges: longestEdges, options: options) {
            return copied
        }
        let decoded = try decode(buffer, header: header, longestEdges: longestEdges, options: options)
        return try finish(decoded, header: header, options: options)
    }

    /// Whether `JPEGPassthrough` may copy a JPEG with this header for one of the boxes: upright,
    /// sequential, fitting the box, and a JPEG thumbnail wanted.
    private static func mayPassThrough(_ header: ImageHeader, _ longestEdges: [Int], _ options: ThumbnailOptions) -> Bool {
        header.type == .jpeg && header.orientation == .up && !header.isProgressive && options.format != .png
            && longestEdges.contains { fitsAsIs(header, box: $0) }
    }

    /// Whether the stored image fits `box` x `box` without a resize (the thumbnailer never enlarges).
    private static func fitsAsIs(_ header: ImageHeader, box: Int) -> Bool { header.width <= box && header.height <= box }

    /// Every box's thumbnail when `buffer` (a whole file) is a JPEG that `JPEGPassthrough` copies
    /// for the boxes it fits: the copy for those, decoded and encoded ones for the rest. Nil when
    /// it does not qualify.
    private static func withPassthrough(_ buffer: UnsafeRawBufferPointer, header: ImageHeader, longestEdges: [Int],
                                        options: ThumbnailOptions) throws(ImagingError) -> [Thumbnail]? {
        guard mayPassThrough(header, longestEdges, options), buffer.count <= JPEGPassthrough.maxSourceBytes,
              let bytes = JPEGPassthrough.copy(of: buffer, quality: options.quality) else { return nil }
        let fits = longestEdges.map { fitsAsIs(header, box: $0) }
        let others = zip(longestEdges, fits).filter { !$0.1 }.map(\.0)
        // Decoded for the other boxes, or at 1/8 scale when there are none: a damaged file is refused
        // as it would be without the copy.
        let decoded = try decodeJPEG(buffer, descriptor: -1, header: header,
                                     longestEdges: others.isEmpty ? [max(1, max(header.width, header.height) / 8)] : others,
                                     options: options)
        var made = others.isEmpty ? [] : try finish(decoded, header: header, options: options)
        let copy = Thumbnail(bytes: bytes, format: .jpeg, width: header.width, height: header.height,
                             sourceUprightWidth: header.uprightWidth, sourceUprightHeight: header.uprightHeight, hasAlpha: false)
        return fits.map { $0 ? copy : made.removeFirst() }
    }

    private static func finish(_ decoded: DecodedImages, header: ImageHeader,
                               options: ThumbnailOptions) throws(ImagingError) -> [Thumbnail] {
        var thumbnails: [Thumbnail] = []
        thumbnails.reserveCapacity(decoded.images.count)
        for image in decoded.images {
            thumbnails.append(try Finish.thumbnail(from: image, decoded: decoded, header: header, options: options))
        }
        return thumbnails
    }

    /// The finished pixels (upright, sRGB, alpha resolved) for each box, before
    /// encoding, with the format each would be encoded in. Used by tests.
    static func uprightImages(from buffer: UnsafeRawBufferPointer, longestEdges: [Int],
                              options: ThumbnailOptions) throws(ImagingError) -> [(PixelImage, ImageType)] {
        validate(options, longestEdges)
        let header = try HeaderReader.read(buffer, maxSidePixels: options.maxSidePixels)
        let decoded = try decode(buffer, header: header, longestEdges: longestEdges, options: options)
        return decoded.images.map { Finish.prepare($0, decoded: decoded, header: header, options: options) }
    }

    private static func decode(_ buffer: UnsafeRawBufferPointer, header: ImageHeader, longestEdges: [Int],
                               options: ThumbnailOptions) throws(ImagingError) -> DecodedImages {
        if header.type == .jpeg {
            return try decodeJPEG(buffer, descriptor: -1, header: header, longestEdges: longestEdges, options: options)
        }
        try HeaderReader.checkLimits(header, options)
        let stored = storedTargets(header, longestEdges)
        switch header.type {
        case .webp:
            return try WebPDecoder.decode(buffer, header: header, targets: stored, options: options)
        case .heic, .heif, .avif:
            let decoder = try HEIFDecoder(buffer, type: header.type, maxSidePixels: options.maxSidePixels)
            return try decoder.decode(buffer, header: header, targets: stored, options: options)
        default:
            return try PNGDecoder().decode(buffer, header: header, targets: stored, options: options)
        }
    }

    /// Traps on invalid options or boxes (a programming error, see ``ThumbnailOptions``).
    private static func validate(_ options: ThumbnailOptions, _ longestEdges: [Int]) {
        options.validate()
        precondition(!longestEdges.isEmpty && longestEdges.allSatisfy { (1...16384).contains($0) },
                     "each box must be in 1...16384")
    }

    /// JPEG from the whole file (`descriptor` -1) or from its start plus an open file
    /// libjpeg reads the rest from.
    private static func decodeJPEG(_ bytes: UnsafeRawBufferPointer, descriptor: Int32, header: ImageHeader,
                                   longestEdges: [Int], options: ThumbnailOptions) throws(ImagingError) -> DecodedImages {
        try HeaderReader.checkLimits(header, options)
        return try JPEGDecoder().decode(bytes, descriptor: descriptor, header: header,
                                        targets: storedTargets(header, longestEdges), options: options)
    }

    /// Each box's fitted size in stored orientation (width and height swapped for orientations 5-8).
    private static func storedTargets(_ header: ImageHeader, _ longestEdges: [Int]) -> [ResizeTarget] {
        longestEdges.map {
            let upright = fit(width: header.uprightWidth, height: header.uprightHeight, box: $0)
            return header.orientation.swapsDimensions
                ? ResizeTarget(width: upright.height, height: upright.width) : upright
        }
    }

    /// The upright size that fits `box` x `box`, keeping the aspect ratio
    /// (rounded, at least 1 pixel) and never enlarging.
    public static func fittedSize(width: Int, height: Int, box: Int) -> (width: Int, height: Int) {
        let t = fit(width: width, height: height, box: box)
        return (t.width, t.height)
    }

    /// `Array.withUnsafeBytes` only rethrows untyped errors; this keeps `ImagingError`.
    private static func withBytes<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(ImagingError) -> T)
        throws(ImagingError) -> T {
        let result = bytes.withUnsafeBytes { b in Result { () throws(ImagingError) -> T in try body(b) } }
        return try result.get()
    }

    static func fit(width: Int, height: Int, box: Int) -> ResizeTarget {
        if width <= box && height <= box { return ResizeTarget(width: width, height: height) }
        if width >= height {
            let h = Int((Double(height) * Double(box) / Double(width)).rounded())
            return ResizeTarget(width: box, height: min(max(h, 1), box))
        }
        let w = Int((Double(width) * Double(box) / Double(height)).rounded())
        return ResizeTarget(width: min(max(w, 1), box), height: box)
    }
}
