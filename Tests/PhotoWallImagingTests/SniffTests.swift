import Testing
@testable import PhotoWallImaging

@Suite("Sniffing by magic bytes")
struct SniffTests {
    static let cases: [([UInt8], ImageType)] = [
        ([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10], .jpeg),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13], .png),
        (Array("GIF89a".utf8) + [1, 0, 1, 0], .gif),
        (Array("GIF87a".utf8) + [1, 0, 1, 0], .gif),
        (Array("RIFF".utf8) + [0x10, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
        ([0, 0, 0, 0x1C] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("avifmif1miaf".utf8), .avif),
        ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8), .heic),
        ([0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8), .heic),
        ([0, 0, 0, 0x18] + Array("ftypheix".utf8) + [0, 0, 0, 0] + Array("mif1heix".utf8), .heic),
        ([0, 0, 0, 0x18] + Array("ftypmsf1".utf8) + [0, 0, 0, 0] + Array("msf1hevc".utf8), .heic),
        ([0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1miaf".utf8), .heif),
        ([0, 0, 0, 0x14] + Array("ftypmsf1".utf8) + [0, 0, 0, 0] + Array("msf1".utf8), .heif),
        ([0, 0, 0, 0x18] + Array("ftypavis".utf8) + [0, 0, 0, 0] + Array("avismsf1".utf8), .avif),
        ([0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 0, 0] + Array("isommp41".utf8), .unknown),
        (Array("%PDF-1.4\n".utf8), .pdf),
        ([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], .tiff),
        ([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8], .tiff),
        (Array("BM".utf8) + [0x36, 3, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0], .bmp),
        (Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8), .svg),
        ([0xEF, 0xBB, 0xBF] + Array("  <svg width=\"1\"/>".utf8), .svg),
        (Array("<html><body>".utf8), .unknown),
        (Array("BMx".utf8), .unknown),
        ([], .unknown),
        ([0xFF, 0xD8], .unknown),
        ([0x89, 0x51, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], .unknown),
    ]

    @Test("each signature", arguments: cases.indices)
    func signature(_ i: Int) {
        #expect(ImageSniffer.sniff(Self.cases[i].0) == Self.cases[i].1)
    }

    @Test("types PhotoWall cannot decode are refused as unsupported, naming the type")
    func unsupportedMessage() throws {
        #expect(ImageType.allCases.filter(\.isDecodable) == [.jpeg, .png, .webp, .avif, .heic, .heif])
        for (bytes, type) in Self.cases where !type.isDecodable && type != .unknown {
            do {
                _ = try Thumbnailer.makeThumbnail(from: bytes + [UInt8](repeating: 0, count: 64))
                Issue.record("\(type) was accepted")
            } catch {
                #expect(error.code == .unsupportedType && error.detectedType == type)
                #expect(error.message.contains(type.description) && !error.message.contains("\n"))
            }
        }
    }

    @Test("a damaged PNG signature is reported as a corrupt PNG")
    func damagedSignature() {
        let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0D, 0x1A, 0x0D] + [UInt8](repeating: 0, count: 40)
        #expect(throws: ImagingError.self) { try Thumbnailer.makeThumbnail(from: bytes) }
        do { _ = try Thumbnailer.readHeader(bytes) } catch { #expect(error.code == .corrupt) }
    }
}
