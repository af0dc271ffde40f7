import Testing
import PhotoWallCore
@testable import PhotoWallImaging

@Suite("EXIF orientation parser")
struct EXIFOrientationTests {
    /// A TIFF block with IFD0 holding the given (tag, type, count, value) entries.
    static func tiff(bigEndian: Bool, entries: [(UInt16, UInt16, UInt32, UInt32)], ifdOffset: UInt32 = 8,
                     declaredCount: UInt16? = nil) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 255)] : [UInt8(v & 255), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] {
            let b = [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)]
            return bigEndian ? b : b.reversed()
        }
        var out: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        out += u16(42) + u32(ifdOffset)
        out += u16(declaredCount ?? UInt16(entries.count))
        for (tag, type, count, value) in entries {
            out += u16(tag) + u16(type) + u32(count)
            out += type == 3 ? u16(UInt16(value)) + [0, 0] : u32(value)
        }
        return out + [0, 0, 0, 0]
    }

    static func parse(_ bytes: [UInt8]) -> ImageOrientation? {
        bytes.withUnsafeBytes { EXIFOrientation.parse($0) }
    }

    @Test("little and big endian, SHORT and LONG, with and without the Exif prefix")
    func valid() {
        for big in [false, true] {
            #expect(Self.parse(Self.tiff(bigEndian: big, entries: [(0x0112, 3, 1, 6)])) == .right)
            #expect(Self.parse(Self.tiff(bigEndian: big, entries: [(0x010F, 2, 4, 0), (0x0112, 4, 1, 8)])) == .left)
            #expect(Self.parse(Array("Exif".utf8) + [0, 0] + Self.tiff(bigEndian: big, entries: [(0x0112, 3, 1, 3)])) == .down)
        }
    }

    @Test("malformed blocks give no orientation instead of failing")
    func malformed() {
        #expect(Self.parse([]) == nil)
        #expect(Self.parse(Array("Exif".utf8) + [0, 0]) == nil)
        #expect(Self.parse(Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 0)])) == nil)      // 0 is invalid
        #expect(Self.parse(Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 9)])) == nil)
        #expect(Self.parse(Self.tiff(bigEndian: false, entries: [(0x0112, 3, 0, 6)])) == nil)      // count 0
        #expect(Self.parse(Self.tiff(bigEndian: false, entries: [(0x0112, 7, 1, 6)])) == nil)      // wrong type
        #expect(Self.parse(Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 6)], ifdOffset: 4000)) == nil)
        #expect(Self.parse(Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 6)], ifdOffset: 2)) == nil)
        // A count of 65535 entries in a tiny block: only what fits is read.
        #expect(Self.parse(Self.tiff(bigEndian: true, entries: [(0x0112, 3, 1, 5)], declaredCount: 0xFFFF)) == .leftMirrored)
        var cut = Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 6)])
        cut.removeLast(8)                                        // entry cut short
        #expect(Self.parse(cut) == nil)
        var badMagic = Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 6)])
        badMagic[2] = 43
        #expect(Self.parse(badMagic) == nil)
    }

    @Test("orientation maps stored size to upright size")
    func uprightSize() {
        for o in ImageOrientation.allCases {
            let h = ImageHeader(type: .jpeg, width: 30, height: 20, orientation: o, isProgressive: false)
            #expect(o.rawValue >= 5 ? (h.uprightWidth, h.uprightHeight) == (20, 30) : (h.uprightWidth, h.uprightHeight) == (30, 20))
        }
    }

    @Test("Orient moves each corner where EXIF says", arguments: ImageOrientation.allCases)
    func corners(_ o: ImageOrientation) {
        // 3x2 grey image with distinct values; after orientation the stored top-left
        // pixel (value 1) must land where the EXIF definition puts it.
        let image = PixelImage(width: 3, height: 2, channels: 1, hasAlpha: false, pixels: [1, 2, 3, 4, 5, 6])
        let out = Orient.apply(o, to: image)
        let expected: [ImageOrientation: [UInt8]] = [
            .up: [1, 2, 3, 4, 5, 6], .upMirrored: [3, 2, 1, 6, 5, 4], .down: [6, 5, 4, 3, 2, 1],
            .downMirrored: [4, 5, 6, 1, 2, 3], .leftMirrored: [1, 4, 2, 5, 3, 6], .right: [4, 1, 5, 2, 6, 3],
            .rightMirrored: [6, 3, 5, 2, 4, 1], .left: [3, 6, 2, 5, 1, 4],
        ]
        #expect(out.pixels == expected[o])
        #expect(o.swapsDimensions ? (out.width, out.height) == (2, 3) : (out.width, out.height) == (3, 2))
    }

    @Test("JPEG and PNG headers carry the orientation")
    func headers() throws {
        let exif = Array("Exif".utf8) + [0, 0] + Self.tiff(bigEndian: true, entries: [(0x0112, 3, 1, 6)])
        var jpeg = try Pixels.jpeg(Pixels.pattern(width: 30, height: 20, channels: 3))
        let app1: [UInt8] = [0xFF, 0xE1, UInt8((exif.count + 2) >> 8), UInt8((exif.count + 2) & 255)] + exif
        jpeg.insert(contentsOf: app1, at: 2)
        let header = try Thumbnailer.readHeader(jpeg)
        #expect(header.orientation == .right && header.uprightWidth == 20 && header.uprightHeight == 30)
        let t = try Thumbnailer.makeThumbnail(from: jpeg)
        #expect(t.width == 20 && t.height == 30)

        var png = try Pixels.png(Pixels.pattern(width: 30, height: 20, channels: 3))
        let tiffOnly = Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 8)])
        png.insert(contentsOf: PNGContainer.chunk("eXIf", tiffOnly), at: 33)      // after IHDR
        let pngHeader = try Thumbnailer.readHeader(png)
        #expect(pngHeader.orientation == .left)
        let pt = try Thumbnailer.makeThumbnail(from: png)
        #expect(pt.width == 20 && pt.height == 30)
    }
}
