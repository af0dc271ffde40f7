import PhotoWallCore
import PhotoWallStorage

/// The `DatabaseAdapter` contract for resumable-upload records and their single-writer lease,
/// run against every adapter (SQLite, PostgreSQL) so they agree.
public enum UploadRecordContract {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    static func check(_ ok: Bool, _ what: String) throws(Failure) {
        if !ok { throw Failure(description: "upload record contract: \(what)") }
    }

    /// Runs every check on `db` (which must not already hold upload `0123…cdef`).
    /// - Throws: `Failure` naming the first check that failed, or the adapter's error.
    public static func run(_ db: any DatabaseAdapter) throws {
        func at(_ ms: Int64) -> ParseDate { ParseDate(millisecondsSince1970: ms) }
        var u = UploadRecord(id: "0123456789abcdef0123456789abcdef", owner: "user0001", length: nil, offset: 0, fileName: "a b.jpg",
                             contentType: "image/jpeg", metadata: ["filename": "a b.jpg", "x": "é\"'"],
                             createdAt: at(1000), expiresAt: at(2000), partState: "{\"u\":\"mp-1\"}", digestState: [0, 1, 254, 255])
        try db.insertUpload(u)
        try check(try db.upload(id: u.id) == u, "a new record reads back as inserted")

        // Nobody holds the lease: the first claim wins, a second (fresh holder) loses.
        try check(try db.claimUploadWriter(id: u.id, writer: "A", now: at(10_000), staleBefore: at(5_000)), "first claim")
        try check(try !db.claimUploadWriter(id: u.id, writer: "B", now: at(11_000), staleBefore: at(6_000)), "claim while held")
        try check(try db.upload(id: u.id)?.writer == "A", "holder is recorded")

        // Only the holder commits.
        u.length = 10; u.offset = 4; u.expiresAt = at(3000); u.partState = "{\"u\":\"mp-1\",\"p\":[1]}"; u.digestState = [7]
        try check(try !db.commitUpload(u, writer: "B"), "commit without the lease")
        try check(try db.upload(id: u.id)?.offset == 0, "a refused commit changes nothing")
        try check(try db.commitUpload(u, writer: "A"), "commit by the holder")
        var read = try db.upload(id: u.id)
        try check(read?.offset == 4 && read?.length == 10 && read?.partState == u.partState && read?.digestState == [7]
                  && read?.expiresAt == at(3000), "committed fields read back")

        // A holder that shows progress keeps it; one that stalls past `staleBefore` loses it.
        try check(try db.renewUploadWriter(id: u.id, writer: "A", now: at(20_000)), "renew by the holder")
        try check(try !db.claimUploadWriter(id: u.id, writer: "B", now: at(21_000), staleBefore: at(19_000)), "claim from a live holder")
        try check(try db.claimUploadWriter(id: u.id, writer: "B", now: at(30_000), staleBefore: at(25_000)), "takeover from a stalled holder")
        try check(try !db.renewUploadWriter(id: u.id, writer: "A", now: at(30_001)), "the old holder learns it lost")
        try check(try !db.commitUpload(u, writer: "A"), "the old holder can't commit")
        try db.releaseUploadWriter(id: u.id, writer: "A")
        try check(try db.upload(id: u.id)?.writer == "B", "release by a non-holder is a no-op")
        try db.releaseUploadWriter(id: u.id, writer: "B")
        read = try db.upload(id: u.id)
        try check(read?.writer == nil && read?.writerSeenAt == nil, "release clears the lease")
        try check(try db.claimUploadWriter(id: u.id, writer: "C", now: at(30_002), staleBefore: at(0)), "claim after release")

        try check(try db.expiredUploads(before: at(3001), limit: 10).map(\.id) == [u.id], "expired before 3001")
        try check(try db.expiredUploads(before: at(3000), limit: 10).isEmpty, "not expired at 3000")
        u.completedName = "ffff_a b.jpg"
        try check(try db.commitUpload(u, writer: "C"), "completion commit")
        try check(try db.expiredUploads(before: at(9999), limit: 10).isEmpty, "a completed upload never expires")
        try db.deleteUpload(id: u.id)
        try check(try db.upload(id: u.id) == nil, "deleted")
        try check(try !db.claimUploadWriter(id: u.id, writer: "D", now: at(40_000), staleBefore: at(40_000)), "no lease on a deleted upload")
    }
}
