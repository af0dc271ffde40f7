import Foundation
import Testing
import PhotoWallS3

/// S3Client against a real S3 server (SeaweedFS from `scripts/s3.sh`); skipped without one.
@Suite struct S3ClientTests {
    @Test func wrongSecretIsRefusedClearly() throws {
        if S3TestEnv.skipNote() { return }
        let bad = S3Client(S3TestEnv.configuration(secret: "not-the-secret"))
        do {
            _ = try bad.putObject(key: S3TestEnv.prefix() + "x", bytes: [1, 2, 3])
            Issue.record("a wrong secret was accepted")
        } catch {
            #expect(error.isAuthorizationFailure, "\(error)")
            #expect(error.httpStatus == 403)
            #expect(error.code == .signatureDoesNotMatch || error.code == .accessDenied, "\(error.code)")
            #expect(error.attempts == 1, "4xx is not retried")
            #expect(!error.description.contains("not-the-secret"))
        }
        #expect(throws: S3Error.self) { _ = try bad.headObject(key: "x") }
    }

    @Test func unreachableEndpointIsAConnectionFailure() throws {
        var c = S3Configuration(endpoint: "http://127.0.0.1:1", region: "us-east-1", bucket: "b",
                                credentials: S3Credentials(accessKeyId: "k", secretAccessKey: "s"))
        c.retryBaseDelayMilliseconds = 1
        c.maxAttempts = 2
        do {
            _ = try S3Client(c).getObject(key: "x")
            Issue.record("no error")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(error.attempts == 2)
            #expect(error.parseError(.read, name: "x").code == .connectionFailed)
            #expect(error.parseError(.write, name: "x").code == .fileSaveError)
        }
    }

    @Test func putGetRangeHeadDelete() throws {
        if S3TestEnv.skipNote() { return }
        let s3 = S3TestEnv.client()
        let p = S3TestEnv.prefix()
        let data = testBytes(100_000)
        for key in [p + "plain.bin", p + "with space/and+plus & amp.bin", p + "ünïcødé/写真 ✓.jpg", p + "a=b?c#d%20e.bin"] {
            let etag = try s3.putObject(key: key, bytes: data, contentType: "image/jpeg")
            #expect(!etag.isEmpty && !etag.hasPrefix("\""))
            #expect(try s3.getObject(key: key) == data, "\(key)")
            #expect(try s3.getObject(key: key, range: 10...19) == Array(data[10...19]))
            #expect(try s3.getObject(key: key, range: 99_990...99_999) == Array(data[99_990...]))
            let info = try #require(try s3.headObject(key: key))
            #expect(info.byteCount == 100_000)
            #expect(info.etag == etag)
            #expect(info.contentType == "image/jpeg")
            #expect(try s3.listObjectsV2(prefix: key).objects.map(\.key) == [key])
            try s3.deleteObject(key: key)
            #expect(try s3.headObject(key: key) == nil)
            #expect { _ = try s3.getObject(key: key) } throws: { ($0 as? S3Error)?.code == .noSuchKey }
        }
    }

    @Test func streamedPutAndGetToFile() throws {
        if S3TestEnv.skipNote() { return }
        let s3 = S3TestEnv.client()
        let key = S3TestEnv.prefix() + "streamed.bin"
        let data = testBytes(3_000_000, seed: 9)
        let dir = NSTemporaryDirectory() + "pw-s3-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #require(FileManager.default.createFile(atPath: dir + "/src", contents: Data(data)), "test setup: could not write the file")
        let src = open(dir + "/src", O_RDONLY)
        defer { close(src) }
        _ = try s3.putObject(key: key, fileDescriptor: src, offset: 1000, length: 2_000_000, contentType: "application/x-test")
        #expect(try s3.headObject(key: key)?.byteCount == 2_000_000)
        let dst = open(dir + "/dst", O_RDWR | O_CREAT | O_TRUNC, 0o644)
        defer { close(dst) }
        #expect(try s3.getObject(key: key, toFileDescriptor: dst) == 2_000_000)
        #expect(try s3.getObject(key: key, range: 0...9, toFileDescriptor: dst) == 10)
        let got = [UInt8](FileManager.default.contents(atPath: dir + "/dst")!)
        #expect(got == Array(data[1000..<2_001_000]) + Array(data[1000..<1010]))
        try s3.deleteObject(key: key)
    }

    @Test func multipartThreePartsWithShortLast() throws {
        if S3TestEnv.skipNote() { return }
        let s3 = S3TestEnv.client()
        let key = S3TestEnv.prefix() + "multi part ü.bin"
        let part = S3Client.minimumPartBytes
        let data = testBytes(2 * part + 12_345, seed: 3)
        let id = try s3.createMultipartUpload(key: key, contentType: "video/mp4")
        var parts: [S3CompletedPart] = []
        parts.append(S3CompletedPart(partNumber: 1, etag: try s3.uploadPart(key: key, uploadId: id, partNumber: 1, bytes: Array(data[0..<part]))))
        // Part 2 from a file region.
        let path = NSTemporaryDirectory() + "pw-s3-part-\(UUID().uuidString)"
        try #require(FileManager.default.createFile(atPath: path, contents: Data(data)), "test setup: could not write the file")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        parts.append(S3CompletedPart(partNumber: 2, etag: try s3.uploadPart(key: key, uploadId: id, partNumber: 2, fileDescriptor: fd,
                                                                            offset: Int64(part), length: Int64(part))))
        parts.append(S3CompletedPart(partNumber: 3, etag: try s3.uploadPart(key: key, uploadId: id, partNumber: 3, bytes: Array(data[(2 * part)...]))))
        let listed = try s3.listParts(key: key, uploadId: id)
        #expect(listed.parts.map(\.partNumber) == [1, 2, 3])
        #expect(listed.parts.map(\.byteCount) == [Int64(part), Int64(part), 12_345])
        #expect(listed.parts.map(\.etag) == parts.map(\.etag))
        #expect(try s3.headObject(key: key) == nil, "not visible before completion")
        _ = try s3.completeMultipartUpload(key: key, uploadId: id, parts: parts.reversed())
        #expect(try s3.headObject(key: key)?.byteCount == Int64(data.count))
        #expect(try s3.getObject(key: key) == data)
        #expect(try s3.getObject(key: key, range: Int64(part - 5)...Int64(part + 4)) == Array(data[(part - 5)...(part + 4)]))
        try s3.deleteObject(key: key)
    }

    @Test func abortedMultipartLeavesNothing() throws {
        if S3TestEnv.skipNote() { return }
        let s3 = S3TestEnv.client()
        let p = S3TestEnv.prefix()
        let key = p + "aborted.bin"
        let id = try s3.createMultipartUpload(key: key)
        _ = try s3.uploadPart(key: key, uploadId: id, partNumber: 1, bytes: testBytes(S3Client.minimumPartBytes))
        try s3.abortMultipartUpload(key: key, uploadId: id)
        #expect(try s3.headObject(key: key) == nil)
        #expect(try s3.listAllObjects(prefix: p).isEmpty)
        #expect { _ = try s3.listParts(key: key, uploadId: id) } throws: { ($0 as? S3Error)?.code == .noSuchUpload }
    }

    @Test func listingFollowsContinuation() throws {
        if S3TestEnv.skipNote() { return }
        let s3 = S3TestEnv.client()
        let p = S3TestEnv.prefix()
        let keys = (0..<7).map { p + "k\($0)" }
        for k in keys { _ = try s3.putObject(key: k, bytes: Array(k.utf8)) }
        let first = try s3.listObjectsV2(prefix: p, maxKeys: 3)
        #expect(first.objects.count == 3)
        #expect(first.nextContinuationToken != nil)
        #expect(try s3.listAllObjects(prefix: p).map(\.key) == keys)
        var seen: [String] = []
        var token: String?
        repeat {
            let page = try s3.listObjectsV2(prefix: p, continuationToken: token, maxKeys: 3)
            seen += page.objects.map(\.key)
            token = page.nextContinuationToken
        } while token != nil
        #expect(seen == keys)
        for k in keys { try s3.deleteObject(key: k) }
    }

    @Test func createBucketIfMissingIsIdempotent() throws {
        if S3TestEnv.skipNote() { return }
        var c = S3TestEnv.configuration()
        c.bucket = "pw-\(UUID().uuidString.lowercased().prefix(8))"
        let s3 = S3Client(c)
        #expect(try !s3.bucketExists())
        try s3.createBucketIfMissing()
        try s3.createBucketIfMissing()
        #expect(try s3.bucketExists())
    }

    @Test func concurrentRequestsShareThePool() async throws {
        if S3TestEnv.skipNote() { return }
        let s3 = S3TestEnv.client()
        let p = S3TestEnv.prefix()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<16 {
                group.addTask {
                    let data = testBytes(10_000 + i, seed: UInt64(i))
                    _ = try s3.putObject(key: p + "\(i)", bytes: data)
                    #expect(try s3.getObject(key: p + "\(i)") == data)
                }
            }
            try await group.waitForAll()
        }
        #expect(try s3.listAllObjects(prefix: p).count == 16)
    }
}
