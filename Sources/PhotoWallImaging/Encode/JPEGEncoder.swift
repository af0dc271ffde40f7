internal import CImageShim

/// Baseline JPEG (4:2:0 for colour, the standard Huffman tables: see `jpeg_encode.c`) via libjpeg.
/// The output carries no EXIF, so no orientation tag: pixels are upright.
enum JPEGEncoder {
    /// - Parameter image: Grey or RGB, no alpha.
    /// - Parameter quality: 1...100.
    static func encode(_ image: PixelImage, quality: Int) throws(ImagingError) -> [UInt8] {
        precondition(!image.hasAlpha && (image.channels == 1 || image.channels == 3))
        return try ShimEncoding.run(format: .jpeg) { out, length, message, capacity in
            image.pixels.withUnsafeBufferPointer { px in
                CImageShim_jpeg_encode(px.baseAddress, UInt32(image.width), UInt32(image.height), image.rowBytes,
                                       Int32(image.channels), Int32(quality), out, length, message, capacity)
            }
        }
    }
}

/// Shared plumbing for the C encoders: a message buffer, the malloc'd
/// output copied into an array and freed.
enum ShimEncoding {
    typealias Call = (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>,
                      UnsafeMutablePointer<CChar>, Int) -> Int32

    static func run(format: ImageType, _ call: Call) throws(ImagingError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = message.withUnsafeMutableBufferPointer { m in
            call(&out, &length, m.baseAddress!, m.count)
        }
        defer { CImageShim_free(out) }
        guard Int(status) == CImageShim_OK, let out else {
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw ImagingError(code: .encodeFailed, message: "Could not encode the \(format) thumbnail: \(text).",
                               detectedType: format)
        }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }
}
