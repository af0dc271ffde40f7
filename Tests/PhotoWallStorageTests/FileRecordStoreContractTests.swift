import Testing
import PhotoWallCore
import PhotoWallStorage

/// The `FileRecordStore` contract on every adapter: records read back whole, names are unique,
/// owners and unclaimed files are found oldest first, claiming clears `unclaimed`.
@Suite struct FileRecordStoreContractTests {
    @Test(arguments: Backend.allCases)
    func filesMetadata(_ backend: Backend) throws {
        let db = try backend.open().db
        let r = FileRecord(name: "abc_x.jpg", contentType: "image/jpeg", byteCount: 3, sha256: "00", createdAt: ParseDate(millisecondsSince1970: 5))
        try db.insertFile(r)
        #expect(try db.file(named: "abc_x.jpg") == r)
        do {
            try db.insertFile(r)
            Issue.record("expected a duplicate")
        } catch {
            #expect(error.code == .duplicateValue)
        }
        #expect(try db.deleteFile(named: "abc_x.jpg"))
        #expect(try db.file(named: "abc_x.jpg") == nil)
        // The client's own name and a declared type its bytes contradicted are kept.
        let named = FileRecord(name: "def_y.jpg", contentType: "image/gif", byteCount: 1, sha256: "01", createdAt: ParseDate(millisecondsSince1970: 6),
                               originalName: "y (1) 灯泡.jpg", declaredType: "image/jpeg", owner: "u1", unclaimed: true)
        try db.insertFile(named)
        #expect(try db.file(named: "def_y.jpg") == named)
        #expect(try !db.deleteFile(named: "abc_x.jpg"))
    }

    @Test(arguments: Backend.allCases)
    func ownersAndUnclaimedFiles(_ backend: Backend) throws {
        let db = try backend.open().db
        func record(_ name: String, at ms: Int64, owner: String?, unclaimed: Bool) -> FileRecord {
            FileRecord(name: name, contentType: "image/jpeg", byteCount: 1, sha256: "00", createdAt: ParseDate(millisecondsSince1970: ms),
                       owner: owner, unclaimed: unclaimed)
        }
        try db.insertFile(record("c_3.jpg", at: 30, owner: "u1", unclaimed: true))
        try db.insertFile(record("a_1.jpg", at: 10, owner: "u1", unclaimed: false))
        try db.insertFile(record("b_2.jpg", at: 20, owner: "u2", unclaimed: true))
        try db.insertFile(record("d_4.jpg", at: 40, owner: nil, unclaimed: true))
        #expect(try db.fileNames(ownedBy: "u1", limit: 10) == ["a_1.jpg", "c_3.jpg"])
        #expect(try db.fileNames(ownedBy: "u1", limit: 1) == ["a_1.jpg"])
        #expect(try db.fileNames(ownedBy: "nobody", limit: 10) == [])
        #expect(try db.unclaimedFileNames(before: ParseDate(millisecondsSince1970: 40), limit: 10) == ["b_2.jpg", "c_3.jpg"])
        #expect(try db.unclaimedFileNames(before: ParseDate(millisecondsSince1970: 41), limit: 2) == ["b_2.jpg", "c_3.jpg"])
        try db.claimFiles(named: ["c_3.jpg", "missing.jpg"])
        try db.claimFiles(named: [])
        #expect(try db.file(named: "c_3.jpg")?.unclaimed == false)
        #expect(try db.unclaimedFileNames(before: ParseDate(millisecondsSince1970: 41), limit: 10) == ["b_2.jpg", "d_4.jpg"])
    }

    /// A photo's display and thumbnail are recorded together: both, or (one name taken) neither.
    @Test(arguments: Backend.allCases)
    func severalFilesAreRecordedAllOrNone(_ backend: Backend) throws {
        let db = try backend.open().db
        func record(_ name: String) -> FileRecord {
            FileRecord(name: name, contentType: "image/jpeg", byteCount: 1, sha256: "00", createdAt: ParseDate(millisecondsSince1970: 7),
                       owner: "u1", unclaimed: true)
        }
        try db.insertFiles([record("e_display.jpg"), record("e_thumbnail.jpg")])
        #expect(try db.file(named: "e_display.jpg") == record("e_display.jpg"))
        #expect(try db.file(named: "e_thumbnail.jpg") == record("e_thumbnail.jpg"))
        do {
            try db.insertFiles([record("f_display.jpg"), record("e_thumbnail.jpg")])
            Issue.record("expected a duplicate")
        } catch {
            #expect(error.code == .duplicateValue)
        }
        #expect(try db.file(named: "f_display.jpg") == nil)
        #expect(try db.file(named: "e_thumbnail.jpg") == record("e_thumbnail.jpg"))
    }
}
