import Dispatch
import Foundation
import PhotoWallCore
import PhotoWallCrypto
@testable import PhotoWallServices
import PhotoWallSQLite
import PhotoWallStorage
import PhotoWallTesting
import Synchronization
import Testing

/// `UploadService` in process on a real SQLite file and a real part folder: how a PATCH that comes
/// while the one before it is letting go of the upload is taken.
@Suite struct UploadHandOverTests {
    /// The upload service as `photowall serve` builds it on SQLite and the file system, in `dir`.
    static func service(in dir: String) throws -> (UploadService, SQLiteAdapter) {
        let database = try SQLiteAdapter(path: dir + "/photowall.sqlite")
        var config = ServerConfig()
        config.publicServerURL = "http://127.0.0.1:1/parse"
        let files = FileService(records: database, objects: database, store: try FileSystemStore(root: dir), config: config)
        let uploads = UploadService(records: database, fileRecords: database, parts: try FileSystemUploadParts(root: dir),
                                    files: files, config: config, logger: Logger(label: "t", level: .error))
        return (uploads, database)
    }

    /// The next PATCH of a pipelining client can read the offset the PATCH before it has just stored
    /// while that one has not yet freed the upload's writer slot. It waits for the slot and goes on,
    /// instead of being refused with 423 (`Retry-After`: the client would stall for seconds). This is
    /// the window `TusProtocolTests.threePipelinedPatches…` hit under load in CI.
    @Test func aPatchAtTheJustCommittedOffsetWaitsForTheSlotInsteadOf423() throws {
        try withTemporaryDirectory { dir in
            let (uploads, database) = try Self.service(in: dir)
            let bytes = Crypto.randomBytes(2000)
            let upload = try uploads.create(length: 2000, metadata: ["filename": "a.bin"], auth: .master)

            let first = try uploads.beginAppend(id: upload.id, offset: 0, length: nil, checksum: nil, contentLength: 1000, auth: .master)
            try bytes[..<1000].withUnsafeBytes { try first.write($0) }
            // The first PATCH's commit is stored (offset 1000, lease given up); its slot is not freed yet.
            let sums = try first.digests.digests(of: first.segment, endingAt: 1000)
            #expect(try first.commit(mayRelease: true, digestState: sums.running))
            #expect(try database.upload(id: upload.id)?.offset == 1000)

            let second = Mutex<Result<UploadAppend, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                let r = Result { try uploads.beginAppend(id: upload.id, offset: 1000, length: nil, checksum: nil, contentLength: 1000, auth: .master) }
                second.withLock { $0 = r }
                done.signal()
            }
            // It waits for the first one to end (the first would otherwise hold the slot for good here).
            #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "answered while the first one still held the upload")
            _ = try? first.finish()  // ends the request: frees the slot, tells its outcome
            #expect(done.wait(timeout: .now() + 10) == .success)

            let next = try #require(try second.withLock { $0 }?.get())
            #expect(next.startOffset == 1000)
            try bytes[1000...].withUnsafeBytes { try next.write($0) }
            let finished = try next.finish()
            #expect(finished.offset == 2000)
            #expect(finished.isComplete)
        }
    }

    /// A second PATCH at the same offset while the first one's body still streams is refused with 423
    /// at once (tus: one writer at a time), not held back.
    @Test func aPatchBesideOneStillStreamingIsRefusedAtOnce() throws {
        try withTemporaryDirectory { dir in
            let (uploads, _) = try Self.service(in: dir)
            let upload = try uploads.create(length: 2000, metadata: ["filename": "a.bin"], auth: .master)
            let first = try uploads.beginAppend(id: upload.id, offset: 0, length: nil, checksum: nil, contentLength: 1000, auth: .master)
            try Crypto.randomBytes(500).withUnsafeBytes { try first.write($0) }
            do {
                _ = try uploads.beginAppend(id: upload.id, offset: 0, length: nil, checksum: nil, contentLength: 1000, auth: .master)
                Issue.record("a second writer was let in")
            } catch UploadError.locked {
            }
            first.abort()
        }
    }
}
