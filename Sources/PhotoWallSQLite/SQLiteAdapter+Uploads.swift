import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// tus upload records and their single-writer lease in `_UPLOADS`.
extension SQLiteAdapter: UploadRecordStore {
    static let uploadColumns = "id, owner, length, offset, fileName, contentType, metadata, createdAt, expiresAt, completedName, partState, digestState, writer, writerSeenAt"

    static func decodeUpload(_ r: [SQLValue]) -> UploadRecord {
        var metadata: [String: String] = [:]
        if let text = r[6].text, let json = try? JSON.parse(text) {
            for (k, v) in json.objectValue ?? [:] { metadata[k] = v.stringValue }
        }
        return UploadRecord(id: r[0].text ?? "", owner: r[1].text ?? "", length: r[2].integer, offset: r[3].integer ?? 0,
                            fileName: r[4].text ?? "", contentType: r[5].text ?? "", metadata: metadata,
                            createdAt: ParseDate(millisecondsSince1970: r[7].integer ?? 0),
                            expiresAt: ParseDate(millisecondsSince1970: r[8].integer ?? 0), completedName: r[9].text,
                            partState: r[10].text ?? "", digestState: r[11].blob, writer: r[12].text, writerSeenAt: r[13].integer)
    }

    public func insertUpload(_ u: UploadRecord) throws(ParseError) {
        let metadata = JSON.object(u.metadata.mapValues { .string($0) }).text
        _ = try guarded {
            try db.write { conn in
                try conn.run("INSERT INTO _UPLOADS(\(Self.uploadColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,NULL,NULL)", [
                    .text(u.id), .text(u.owner), u.length.map { .integer($0) } ?? .null, .integer(u.offset), .text(u.fileName),
                    .text(u.contentType), .text(metadata), .integer(u.createdAt.millisecondsSince1970),
                    .integer(u.expiresAt.millisecondsSince1970), u.completedName.map { .text($0) } ?? .null,
                    .text(u.partState), u.digestState.map { .blob($0) } ?? .null,
                ])
            }
        }
    }

    public func upload(id: String) throws(ParseError) -> UploadRecord? {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT \(Self.uploadColumns) FROM _UPLOADS WHERE id = ?", [.text(id)]).first.map(Self.decodeUpload)
            }
        }
    }

    public func claimUploadWriter(id: String, writer: String, now: ParseDate, staleBefore: ParseDate) throws(ParseError) -> Bool {
        try guarded {
            try db.write(durable: false) { conn in
                try conn.run("UPDATE _UPLOADS SET writer = ?, writerSeenAt = ? WHERE id = ? AND (writer IS NULL OR writerSeenAt < ?)", [
                    .text(writer), .integer(now.millisecondsSince1970), .text(id), .integer(staleBefore.millisecondsSince1970),
                ])
            }
        } == 1
    }

    public func renewUploadWriter(id: String, writer: String, now: ParseDate) throws(ParseError) -> Bool {
        try guarded {
            try db.write(durable: false) { conn in
                try conn.run("UPDATE _UPLOADS SET writerSeenAt = ? WHERE id = ? AND writer = ?",
                             [.integer(now.millisecondsSince1970), .text(id), .text(writer)])
            }
        } == 1
    }

    public func releaseUploadWriter(id: String, writer: String) throws(ParseError) {
        _ = try guarded {
            try db.write(durable: false) { conn in
                try conn.run("UPDATE _UPLOADS SET writer = NULL, writerSeenAt = NULL WHERE id = ? AND writer = ?", [.text(id), .text(writer)])
            }
        }
    }

    public func commitUpload(_ u: UploadRecord, writer: String) throws(ParseError) -> Bool {
        try commitUpload(u, writer: writer, lease: "")
    }

    public func commitUploadReleasingWriter(_ u: UploadRecord, writer: String) throws(ParseError) -> Bool {
        try commitUpload(u, writer: writer, lease: ", writer = NULL, writerSeenAt = NULL")
    }

    /// The conditional update of both commits; `lease` is extra SET clauses (empty, or the release).
    private func commitUpload(_ u: UploadRecord, writer: String, lease: String) throws(ParseError) -> Bool {
        try guarded {
            try db.write { conn in
                try conn.run("""
                    UPDATE _UPLOADS SET length = ?, offset = ?, expiresAt = ?, completedName = ?, partState = ?, digestState = ?,
                        contentType = ?\(lease)
                    WHERE id = ? AND writer = ?
                    """, [
                    u.length.map { .integer($0) } ?? .null, .integer(u.offset), .integer(u.expiresAt.millisecondsSince1970),
                    u.completedName.map { .text($0) } ?? .null, .text(u.partState), u.digestState.map { .blob($0) } ?? .null,
                    .text(u.contentType),
                    .text(u.id), .text(writer),
                ])
            }
        } == 1
    }

    public func deleteUpload(id: String) throws(ParseError) {
        _ = try guarded { try db.write { conn in try conn.run("DELETE FROM _UPLOADS WHERE id = ?", [.text(id)]) } }
    }

    public func expiredUploads(before date: ParseDate, limit: Int) throws(ParseError) -> [UploadRecord] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT \(Self.uploadColumns) FROM _UPLOADS WHERE completedName IS NULL AND expiresAt < ? ORDER BY expiresAt LIMIT ?",
                               [.integer(date.millisecondsSince1970), .integer(Int64(limit))]).map(Self.decodeUpload)
            }
        }
    }
}
