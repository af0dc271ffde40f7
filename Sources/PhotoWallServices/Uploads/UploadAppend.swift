import Foundation
import PhotoWallCore
import PhotoWallCrypto
import PhotoWallStorage

/// One PATCH in progress: the body streams into the part (engine thread), then `finish` (worker
/// thread) verifies the checksum, makes the bytes durable and moves the offset; or `abort`
/// (connection cut) keeps what arrived.
///
/// `@unchecked Sendable`: used by one request at a time — the engine thread writes, then exactly
/// one of `finish`/`abort` runs after the body ends (ordered by the engine's suspend/resume or
/// completion callback). The upload's single-writer lock is held from creation to that end.
public final class UploadAppend: @unchecked Sendable {
    let service: UploadService
    public private(set) var record: UploadRecord
    let writer: any UploadPartWriter
    let expected: (Digest, [UInt8])?
    let running: Digest?
    var received: Int64 = 0
    var failure: ParseError?
    var ended = false

    init(service: UploadService, record: UploadRecord, writer: any UploadPartWriter, expected: (Digest, [UInt8])?, running: Digest?) {
        self.service = service; self.record = record; self.writer = writer; self.expected = expected; self.running = running
    }

    /// Appends body bytes. - Throws: when the disk write fails (the connection is then cut).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            try writer.write(bytes)
        } catch {
            failure = error
            throw error
        }
        expected?.0.update(bytes)
        running?.update(bytes)
        received += Int64(bytes.count)
    }

    /// The body arrived whole. - Returns: the upload after the chunk (complete when it was the last).
    /// - Throws: `UploadError.checksumMismatch` (the chunk is discarded); `ParseError` on storage failures.
    public func finish() throws -> UploadRecord {
        guard !ended else { return record }
        ended = true
        defer { writer.close(); service.release(record.id) }
        if let failure { throw failure }
        if let (digest, want) = expected, digest.finalize() != want {
            try writer.truncate(to: record.offset)
            service.runningDigests.withLock { _ = $0.removeValue(forKey: record.id) }
            throw UploadError.checksumMismatch
        }
        try commit()
        if let length = record.length, record.offset == length {
            record = try service.complete(record)
        }
        return record
    }

    /// The connection ended mid-body: keep what arrived (tus §PATCH "should store as much of the
    /// received data as possible"), unless a checksum was promised, which a partial chunk can't meet.
    public func abort() {
        guard !ended else { return }
        ended = true
        defer { writer.close(); service.release(record.id) }
        do {
            if expected != nil || failure != nil {
                try writer.truncate(to: record.offset)
                service.runningDigests.withLock { _ = $0.removeValue(forKey: record.id) }
            } else if received > 0 {
                try commit()
            }
        } catch {
            service.logger.warning("could not keep a cut upload chunk", ["upload.id": record.id, "cause": "\(error)"])
        }
    }

    /// fsync, then record the new offset (the order that keeps HEAD honest) and push the expiry on.
    func commit() throws {
        let size = try writer.sync()
        var u = record
        u.offset = size
        let now = ParseDate.now()
        u.expiresAt = ParseDate(millisecondsSince1970: now.millisecondsSince1970 + service.expirySeconds * 1000)
        try service.database.updateUpload(u)
        record = u
        if let running {
            service.runningDigests.withLock { $0[u.id] = DigestState(offset: size, digest: running) }
        }
    }
}

/// Standard base64 (RFC 4648 §4), as tus uses in `Upload-Metadata` and `Upload-Checksum` (Foundation's codec).
public enum Base64 {
    /// - Returns: nil for text that is not base64.
    public static func decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text, options: .ignoreUnknownCharacters).map { [UInt8]($0) }
    }

    public static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}
