import Testing
@testable import PhotoWallImaging

/// One case per `MANIFEST.tsv` row. Skipped (and reported as skipped) when
/// the corpus is not on this machine; see `Corpus.directory`.
@Suite("Corpus: every MANIFEST.tsv row",
       .enabled(if: Corpus.isAvailable, "image corpus not found: set PHOTOWALL_CORPUS or provide ../shared/imagecorpus"))
struct CorpusTests {
    @Test("behaves as the manifest expects", arguments: Corpus.rows)
    func row(_ row: ManifestRow) throws {
        let bytes = try Corpus.bytes(row.path)
        switch Expectation.of(row) {
        case .rejected(let codes):
            do {
                let t = try Thumbnailer.makeThumbnail(from: bytes)
                Issue.record("expected a rejection (\(codes)), got a \(t.width)x\(t.height) \(t.format)")
            } catch {
                #expect(codes.contains(error.code), "\(error.code): \(error.message)")
                #expect(!error.message.isEmpty && !error.message.contains("\n"))
            }
        case .decodes(let stated):
            let t = try Thumbnailer.makeThumbnail(from: bytes)
            if let s = Expectation.structure(row) {
                let upright = s.orientation >= 5 ? (s.height, s.width) : (s.width, s.height)
                #expect(t.sourceUprightWidth == upright.0 && t.sourceUprightHeight == upright.1,
                        "upright source \(t.sourceUprightWidth)x\(t.sourceUprightHeight), manifest says \(upright)")
            }
            let fit = Pixels.expectedFit(t.sourceUprightWidth, t.sourceUprightHeight, box: 256)
            #expect(t.width == fit.0 && t.height == fit.1, "thumbnail \(t.width)x\(t.height), expected \(fit)")
            if let stated {
                #expect(t.width == stated.0 && t.height == stated.1, "manifest states \(stated)")
            }
            #expect(ImageSniffer.sniff(t.bytes) == t.format)
            #expect(t.format == (t.hasAlpha ? .png : .jpeg))
            let back = try Pixels.decode(t.bytes)
            #expect(back.width == t.width && back.height == t.height)
        }
    }

    @Test("the header alone gives type, size and orientation", arguments: Corpus.rows.filter {
        if case .decodes = Expectation.of($0) { return true } else { return false }
    })
    func header(_ row: ManifestRow) throws {
        let header = try Thumbnailer.readHeader(try Corpus.bytes(row.path))
        #expect(header.type == ImageSniffer.sniff(try Corpus.bytes(row.path)) && header.type.isDecodable)
        if let s = Expectation.structure(row) {
            #expect(header.width == s.width && header.height == s.height)
            #expect(header.orientation.rawValue == s.orientation)
        }
    }
}
