import Testing
@testable import PhotoWallImaging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `makeThumbnails(fromFile:)` reads a JPEG in 64 KiB blocks as libjpeg decodes it (the file is never
/// whole in memory) when its header markers fit in the first 256 KiB, and reads other files whole.
/// Both paths must give exactly the thumbnails the in-memory API gives, and the same errors.
@Suite("Thumbnails from a file: JPEG streamed from the descriptor",
       .enabled(if: Corpus.isAvailable, "image corpus not found: set PHOTOWALL_CORPUS or provide ../shared/imagecorpus"))
struct StreamedFileTests {
    /// Every decodable corpus JPEG larger than the 256 KiB prefix: camera photos, progressive, ICC, CMYK.
    static let largeJPEGs = Corpus.rows.filter {
        guard case .decodes = Expectation.of($0), let bytes = try? Corpus.bytes($0.path) else { return false }
        return ImageSniffer.sniff(bytes) == .jpeg && bytes.count > FileInput.headerPrefixBytes
    }

    @Test("the corpus has large JPEGs, some with their headers in the prefix (streamed) and some not")
    func corpusCoversBothPaths() throws {
        let streamed = try Self.largeJPEGs.filter { row in
            let bytes = try Corpus.bytes(row.path)
            return bytes.withUnsafeBytes { HeaderReader.readJPEG(prefix: UnsafeRawBufferPointer(rebasing: $0[..<FileInput.headerPrefixBytes])) != nil }
        }
        #expect(streamed.count >= 5)
        #expect(streamed.count < Self.largeJPEGs.count)        // the 500 KB ICC file's header is longer
    }

    @Test("fromFile gives the bytes the in-memory API gives, display and thumbnail", arguments: largeJPEGs)
    func sameAsInMemory(_ row: ManifestRow) throws {
        let bytes = try Corpus.bytes(row.path)
        let path = Corpus.directory! + "/" + row.path
        let fromFile = try Thumbnailer.makeThumbnails(fromFile: path, longestEdges: [1080, 256])
        let inMemory = try Thumbnailer.makeThumbnails(from: bytes, longestEdges: [1080, 256])
        #expect(fromFile == inMemory)
    }

    @Test("a JPEG cut after its header is refused as truncated, from a file as from memory")
    func truncatedFile() throws {
        let bytes = try Corpus.bytes("photos/olympus_e-p3_4032x3024.jpg")
        let cut = Array(bytes[..<(bytes.count * 6 / 10)])
        let path = "/tmp/photowall-streamed-\(getpid()).jpg"
        defer { unlink(path) }
        let file = try #require(fopen(path, "wb"))
        #expect(cut.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) } == cut.count)
        fclose(file)
        let fromFile = #expect(throws: ImagingError.self) { try Thumbnailer.makeThumbnail(fromFile: path) }
        let inMemory = #expect(throws: ImagingError.self) { try Thumbnailer.makeThumbnail(from: cut) }
        #expect(fromFile?.code == .truncated)
        #expect(fromFile == inMemory)
    }
}
