import Foundation
import Testing
import PhotoWallCore
import PhotoWallS3
import PhotoWallStorage
import PhotoWallTesting
#if canImport(Glibc)
import Glibc
#endif

/// S3FileStore against a real S3 server; skipped without one.
@Suite struct S3FileStoreTests {
    static func withStore(cacheLimitBytes: Int64 = 1 << 30, _ body: (S3FileStore, String) throws -> Void) throws {
        let dir = NSTemporaryDirectory() + "pw-s3store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try S3FileStore(client: S3TestEnv.client(), keyPrefix: S3TestEnv.prefix() + "files/",
                                    cacheDirectory: dir + "/s3-cache", cacheLimitBytes: cacheLimitBytes, partBytes: S3Client.minimumPartBytes)
        try body(store, dir)
    }

    @Test func contract() throws {
        if S3TestEnv.skipNote() { return }
        try Self.withStore { store, dir in
            try store.checkReachable()
            try FileStoreContract.run(store, scratch: dir)
        }
    }

    @Test func writerStreamsMultipartAndCommitsAtTheEnd() throws {
        if S3TestEnv.skipNote() { return }
        try Self.withStore { store, _ in
            let part = S3Client.minimumPartBytes
            for size in [part, part + 1, 2 * part + 777] {
                let name = ParseIdentifier.hex() + "_big.bin"
                let data = testBytes(size, seed: UInt64(size))
                let w = try store.makeWriter(for: name)
                var offset = 0
                var step = 1
                while offset < data.count {
                    let n = min(step, data.count - offset)
                    try data.withUnsafeBytes { try w.write(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
                    offset += n
                    step = step * 3 + 1000
                }
                #expect(try store.client.headObject(key: store.key(name)) == nil, "not visible before commit")
                try w.commit()
                let info = try #require(try store.client.headObject(key: store.key(name)))
                #expect(info.byteCount == Int64(size))
                #expect(info.etag.contains("-") == (size > part), "multipart only above one part: \(info.etag)")
                #expect(try store.read(name) == data)
                #expect(try store.delete(name))
            }
        }
    }

    @Test func writerAbortAfterPartsLeavesNothing() throws {
        if S3TestEnv.skipNote() { return }
        try Self.withStore { store, _ in
            let name = ParseIdentifier.hex() + "_aborted.bin"
            let w = try store.makeWriter(for: name)
            try testBytes(2 * S3Client.minimumPartBytes + 10).withUnsafeBytes { try w.write($0) }
            w.abort()
            #expect(try store.location(of: name) == nil)
            #expect(try store.client.listAllObjects(prefix: store.keyPrefix).isEmpty)
            #expect(throws: ParseError.self) { try testBytes(1).withUnsafeBytes { try w.write($0) } }
        }
    }

    /// `write` (on the HTTP engine's event thread for `POST /files`) only spools: with an S3 endpoint
    /// that accepts connections and never answers, writing three parts' worth still succeeds, and
    /// the failure surfaces at `commit` (on a worker thread), leaving no spool file behind.
    @Test func writesOnlySpoolAndNeverWaitForS3() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound)
        var c = S3Configuration(endpoint: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))", region: "us-east-1", bucket: "b",
                                credentials: S3Credentials(accessKeyId: "k", secretAccessKey: "s"))
        c.stallTimeoutSeconds = 1
        c.maxAttempts = 1
        let dir = NSTemporaryDirectory() + "pw-s3spool-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try S3FileStore(client: S3Client(c), cacheDirectory: dir, partBytes: S3Client.minimumPartBytes)
        let w = try store.makeWriter(for: "tarpit.bin")
        let data = testBytes(3 * S3Client.minimumPartBytes + 1)
        try data.withUnsafeBytes { try w.write($0) }
        #expect(w.byteCount == Int64(data.count))
        #expect(throws: ParseError.self) { try w.commit() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/tmp").isEmpty, "the spool file is never visible")
    }

    @Test func largeImportIsMultipartAndIdempotent() throws {
        if S3TestEnv.skipNote() { return }
        try Self.withStore { store, dir in
            let data = testBytes(S3Client.minimumPartBytes * 2 + 5, seed: 4)
            try #require(FileManager.default.createFile(atPath: dir + "/upload.part", contents: Data(data)), "test setup: could not write the file")
            let name = ParseIdentifier.hex() + "_import.bin"
            try store.importFile(at: dir + "/upload.part", as: name)
            let etag = try store.client.headObject(key: store.key(name))?.etag
            #expect(etag?.hasSuffix("-3") == true)
            try store.importFile(at: dir + "/upload.part", as: name)
            #expect(try store.client.headObject(key: store.key(name))?.etag == etag, "a second import sends nothing")
            #expect(try store.read(name) == data)
        }
    }

    @Test func cacheEvictsLeastRecentlyUsed() throws {
        if S3TestEnv.skipNote() { return }
        try Self.withStore(cacheLimitBytes: 250_000) { store, dir in
            let names = (0..<4).map { "\(ParseIdentifier.hex())_\($0).bin" }
            for (i, n) in names.enumerated() {
                let w = try store.makeWriter(for: n)
                try testBytes(100_000, seed: UInt64(i)).withUnsafeBytes { try w.write($0) }
                try w.commit()
            }
            let cacheDir = dir + "/s3-cache"
            func cachedFiles() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: cacheDir).filter { $0 != "tmp" }.count }
            let a = try #require(try store.location(of: names[0]))
            _ = try store.location(of: names[1])
            #expect(try cachedFiles() == 2)
            _ = try store.location(of: names[0])           // 0 is now more recent than 1
            _ = try store.location(of: names[2])           // 300 kB > 250 kB: evicts 1
            #expect(try cachedFiles() == 2)
            #expect(FileManager.default.fileExists(atPath: a.path), "the recently used entry stays")
            let again = try #require(try store.location(of: names[1]))  // a miss: downloaded again, evicts 0
            #expect(again.byteCount == 100_000)
            #expect(!FileManager.default.fileExists(atPath: a.path))
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: again.path))) == testBytes(100_000, seed: 1))
            // delete removes the cached copy
            #expect(try store.delete(names[1]))
            #expect(!FileManager.default.fileExists(atPath: again.path))
            #expect(try store.location(of: names[1]) == nil)
            // a new store over the same folder finds what is cached, and drops stale temporaries
            try #require(FileManager.default.createFile(atPath: cacheDir + "/tmp/x.part", contents: Data([1])), "test setup: could not write the file")
            let reopened = try S3FileStore(client: store.client, keyPrefix: store.keyPrefix, cacheDirectory: cacheDir, cacheLimitBytes: 250_000)
            #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDir + "/tmp").isEmpty)
            #expect(try reopened.location(of: names[2])?.byteCount == 100_000)
            #expect(try cachedFiles() == 1)
        }
    }
}
