import Testing
@testable import PhotoWallImaging

@Suite("Limits, bombs, damaged data and concurrency")
struct LimitsAndErrorsTests {
    static let photo: [UInt8] = try! Pixels.jpeg(Pixels.pattern(width: 1500, height: 1000, channels: 3))

    @Test("megapixel and side limits are applied from the header")
    func limits() {
        var options = ThumbnailOptions()
        options.maxMegapixels = 1
        do {
            _ = try Thumbnailer.makeThumbnail(from: Self.photo, options: options)
            Issue.record("1.5 MP accepted with a 1 MP limit")
        } catch {
            #expect(error.code == .tooLarge && error.message.contains("1500x1000") && error.message.contains("1 megapixels"))
        }
        options = ThumbnailOptions()
        options.maxSidePixels = 1000
        #expect(throws: ImagingError(code: .tooLarge, message: "Image too large: 1500x1000 (1.5 megapixels); the limit is 1000 pixels per side.", detectedType: .jpeg)) {
            try Thumbnailer.makeThumbnail(from: Self.photo, options: options)
        }
    }

    @Test("a zTXt decompression bomb is never inflated")
    func textBomb() throws {
        let bomb = PNGBuilder.zTXtBomb(copies: 400_000)          // about 103 MB of text
        let clock = ContinuousClock()
        let start = clock.now
        let t = try Thumbnailer.makeThumbnail(from: bomb)
        #expect(t.width == 1 && t.height == 1)
        #expect(clock.now - start < .seconds(2))
    }

    @Test("every truncation of a JPEG and a PNG is rejected cleanly or decodes complete pixels")
    func truncations() throws {
        let jpeg = try Pixels.jpeg(Pixels.pattern(width: 97, height: 61, channels: 3))
        let png = try Pixels.png(Pixels.pattern(width: 97, height: 61, channels: 3))
        for file in [jpeg, png] {
            var cut = 1
            while cut < file.count {
                do {
                    let t = try Thumbnailer.makeThumbnail(from: Array(file.prefix(cut)))
                    // Only the trailer (JPEG EOI, PNG IEND) may be missing.
                    #expect(cut >= file.count - 12, "accepted a file cut at \(cut) of \(file.count)")
                    #expect(t.width == 97)
                } catch {
                    #expect([.truncated, .corrupt, .unsupportedType].contains(error.code), "\(error.code): \(error.message)")
                    #expect(!error.message.contains("\n"))
                }
                cut += cut < 64 ? 1 : 37
            }
        }
    }

    @Test("bit flips in the data are rejected or decode, never crash")
    func bitFlips() throws {
        let jpeg = try Pixels.jpeg(Pixels.pattern(width: 64, height: 48, channels: 3))
        let png = try Pixels.png(Pixels.pattern(width: 64, height: 48, channels: 3))
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for file in [jpeg, png] {
            for _ in 0..<150 {
                var damaged = file
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let at = Int(seed >> 33) % damaged.count
                damaged[at] ^= UInt8(truncatingIfNeeded: seed >> 20) | 1
                do {
                    _ = try Thumbnailer.makeThumbnail(from: damaged)
                } catch {
                    #expect(!error.message.isEmpty)
                }
            }
        }
    }

    @Test("errors match by code in catch clauses")
    func codeMatching() {
        do {
            _ = try Thumbnailer.makeThumbnail(from: Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 20))
        } catch ImagingError.Code.unsupportedType {
            return
        } catch {
            Issue.record("wrong code \(error.code)")
        }
        Issue.record("GIF accepted")
    }

    @Test("empty and garbage input")
    func garbage() {
        for bytes: [UInt8] in [[], [0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0xFF, 0xD9], Array(repeating: 7, count: 100)] {
            #expect(throws: ImagingError.self) { try Thumbnailer.makeThumbnail(from: bytes) }
        }
    }

    @Test("the file API reads files and reports missing ones")
    func files() {
        do {
            _ = try Thumbnailer.makeThumbnail(fromFile: "/nonexistent/photowall.jpg")
            Issue.record("missing file accepted")
        } catch {
            #expect(error.code == .readFailed && error.message.contains("/nonexistent/photowall.jpg"))
        }
    }

    @Test("concurrent calls are independent and deterministic")
    func concurrency() async throws {
        let expected = try Thumbnailer.makeThumbnail(from: Self.photo).bytes
        try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<8 {
                group.addTask { try Thumbnailer.makeThumbnail(from: Self.photo).bytes }
            }
            for try await bytes in group { #expect(bytes == expected) }
        }
    }
}
