import Testing
import PhotoWallCore
import PhotoWallStorage

/// The `UploadRecordStore` contract on every adapter: tus records and their single-writer lease.
@Suite struct UploadRecordStoreContractTests {
    @Test(arguments: Backend.allCases)
    func uploadRecordsAndTheirLease(_ backend: Backend) throws {
        let db = try backend.open().db
        func at(_ ms: Int64) -> ParseDate { ParseDate(millisecondsSince1970: ms) }
        var u = UploadRecord(id: "0123456789abcdef0123456789abcdef", owner: "user0001", length: nil, offset: 0, fileName: "a b.jpg",
                             contentType: "image/jpeg", metadata: ["filename": "a b.jpg", "x": "é\"'"],
                             createdAt: at(1000), expiresAt: at(2000), partState: "{\"u\":\"mp-1\"}", digestState: [0, 1, 254, 255])
        try db.insertUpload(u)
        #expect(try db.upload(id: u.id) == u, "a new record reads back as inserted")

        // Nobody holds the lease: the first claim wins, a second (fresh holder) loses.
        #expect(try db.claimUploadWriter(id: u.id, writer: "A", now: at(10_000), staleBefore: at(5_000)), "first claim")
        #expect(try !db.claimUploadWriter(id: u.id, writer: "B", now: at(11_000), staleBefore: at(6_000)), "claim while held")
        #expect(try db.upload(id: u.id)?.writer == "A", "holder is recorded")

        // Only the holder commits.
        u.length = 10; u.offset = 4; u.expiresAt = at(3000); u.partState = "{\"u\":\"mp-1\",\"p\":[1]}"; u.digestState = [7]
        #expect(try !db.commitUpload(u, writer: "B"), "commit without the lease")
        #expect(try db.upload(id: u.id)?.offset == 0, "a refused commit changes nothing")
        #expect(try db.commitUpload(u, writer: "A"), "commit by the holder")
        var read = try db.upload(id: u.id)
        #expect(read?.offset == 4 && read?.length == 10 && read?.partState == u.partState && read?.digestState == [7]
                && read?.expiresAt == at(3000), "committed fields read back")

        // A holder that shows progress keeps it; one that stalls past `staleBefore` loses it.
        #expect(try db.renewUploadWriter(id: u.id, writer: "A", now: at(20_000)), "renew by the holder")
        #expect(try !db.claimUploadWriter(id: u.id, writer: "B", now: at(21_000), staleBefore: at(19_000)), "claim from a live holder")
        #expect(try db.claimUploadWriter(id: u.id, writer: "B", now: at(30_000), staleBefore: at(25_000)), "takeover from a stalled holder")
        #expect(try !db.renewUploadWriter(id: u.id, writer: "A", now: at(30_001)), "the old holder learns it lost")
        #expect(try !db.commitUpload(u, writer: "A"), "the old holder can't commit")
        try db.releaseUploadWriter(id: u.id, writer: "A")
        #expect(try db.upload(id: u.id)?.writer == "B", "release by a non-holder is a no-op")
        try db.releaseUploadWriter(id: u.id, writer: "B")
        read = try db.upload(id: u.id)
        #expect(read?.writer == nil && read?.writerSeenAt == nil, "release clears the lease")
        #expect(try db.claimUploadWriter(id: u.id, writer: "C", now: at(30_002), staleBefore: at(0)), "claim after release")

        // A commit that also gives the lease up (a PATCH's last write): only by the holder, and only
        // then is the lease cleared.
        var v = u
        v.offset = 6; v.digestState = [8]
        #expect(try !db.commitUploadReleasingWriter(v, writer: "A"), "commit-and-release without the lease")
        read = try db.upload(id: u.id)
        #expect(read?.offset == 4 && read?.writer == "C", "a refused commit-and-release changes nothing")
        #expect(try db.commitUploadReleasingWriter(v, writer: "C"), "commit-and-release by the holder")
        read = try db.upload(id: u.id)
        #expect(read?.offset == 6 && read?.digestState == [8] && read?.writer == nil && read?.writerSeenAt == nil,
                "committed fields read back and the lease is free")
        #expect(try db.claimUploadWriter(id: u.id, writer: "C", now: at(30_003), staleBefore: at(0)), "claim after commit-and-release")
        v.offset = 4; v.digestState = [7]
        #expect(try db.commitUpload(v, writer: "C"))

        #expect(try db.expiredUploads(before: at(3001), limit: 10).map(\.id) == [u.id], "expired before 3001")
        #expect(try db.expiredUploads(before: at(3000), limit: 10).isEmpty, "not expired at 3000")
        u.completedName = "ffff_a b.jpg"
        #expect(try db.commitUpload(u, writer: "C"), "completion commit")
        #expect(try db.expiredUploads(before: at(9999), limit: 10).isEmpty, "a completed upload never expires")
        try db.deleteUpload(id: u.id)
        #expect(try db.upload(id: u.id) == nil, "deleted")
        #expect(try !db.claimUploadWriter(id: u.id, writer: "D", now: at(40_000), staleBefore: at(40_000)), "no lease on a deleted upload")
    }
}
