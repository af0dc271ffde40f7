import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// File metadata in `_FILES`.
extension SQLiteAdapter: FileRecordStore {
    public func insertFile(_ r: FileRecord) throws(ParseError) {
        _ = try guarded { try db.write { conn in try Self.insertFile(r, conn) } }
    }

    /// All records in one transaction: one durable commit.
    public func insertFiles(_ records: [FileRecord]) throws(ParseError) {
        _ = try guarded { try db.writeTransaction { conn in for r in records { try Self.insertFile(r, conn) } } }
    }

    private static func insertFile(_ r: FileRecord, _ conn: SQLiteConnection) throws {
        try conn.run("INSERT INTO _FILES(name, contentType, byteCount, sha256, createdAt, originalName, declaredType, owner, unclaimed) VALUES (?,?,?,?,?,?,?,?,?)",
                     [.text(r.name), .text(r.contentType), .integer(r.byteCount), .text(r.sha256), .integer(r.createdAt.millisecondsSince1970),
                      r.originalName.map { .text($0) } ?? .null, r.declaredType.map { .text($0) } ?? .null,
                      r.owner.map { .text($0) } ?? .null, .integer(r.unclaimed ? 1 : 0)])
    }

    public func file(named name: String) throws(ParseError) -> FileRecord? {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT name, contentType, byteCount, sha256, createdAt, originalName, declaredType, owner, unclaimed FROM _FILES WHERE name = ?",
                               [.text(name)]).first.map {
                    FileRecord(name: $0[0].text ?? "", contentType: $0[1].text ?? "application/octet-stream", byteCount: $0[2].integer ?? 0,
                               sha256: $0[3].text ?? "", createdAt: ParseDate(millisecondsSince1970: $0[4].integer ?? 0),
                               originalName: $0[5].text, declaredType: $0[6].text, owner: $0[7].text, unclaimed: $0[8].integer == 1)
                }
            }
        }
    }

    public func deleteFile(named name: String) throws(ParseError) -> Bool {
        try guarded { try db.write { conn in try conn.run("DELETE FROM _FILES WHERE name = ?", [.text(name)]) } } > 0
    }

    public func fileNames(ownedBy owner: String, limit: Int) throws(ParseError) -> [String] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT name FROM _FILES WHERE owner = ? ORDER BY createdAt LIMIT ?", [.text(owner), .integer(Int64(limit))])
                    .compactMap { $0[0].text }
            }
        }
    }

    public func files(ownedBy owner: String, sha256 digests: [String]) throws(ParseError) -> [FileRecord] {
        guard !digests.isEmpty else { return [] }
        return try guarded {
            try db.read { conn in
                try conn.query("SELECT name, contentType, byteCount, sha256, createdAt, originalName, declaredType, owner, unclaimed FROM _FILES "
                               + "WHERE owner = ? AND sha256 IN (\(Self.placeholders(digests.count)))",
                               [.text(owner)] + digests.map { .text($0) }).map {
                    FileRecord(name: $0[0].text ?? "", contentType: $0[1].text ?? "application/octet-stream", byteCount: $0[2].integer ?? 0,
                               sha256: $0[3].text ?? "", createdAt: ParseDate(millisecondsSince1970: $0[4].integer ?? 0),
                               originalName: $0[5].text, declaredType: $0[6].text, owner: $0[7].text, unclaimed: $0[8].integer == 1)
                }
            }
        }
    }

    public func unclaimedFileNames(before date: ParseDate, limit: Int) throws(ParseError) -> [String] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT name FROM _FILES WHERE unclaimed = 1 AND createdAt < ? ORDER BY createdAt LIMIT ?",
                               [.integer(date.millisecondsSince1970), .integer(Int64(limit))]).compactMap { $0[0].text }
            }
        }
    }

    /// Not synced before it returns (`write(durable: false)`; the next durable commit makes it
    /// durable): a claim lost in a crash is redone by `FileService.removeUnclaimed`, which claims
    /// every unclaimed file an object names instead of removing it.
    public func claimFiles(named names: [String]) throws(ParseError) {
        guard !names.isEmpty else { return }
        _ = try guarded {
            try db.write(durable: false) { conn in
                try conn.run("UPDATE _FILES SET unclaimed = 0 WHERE name IN (\(Self.placeholders(names.count)))", names.map { .text($0) })
            }
        }
    }
}
