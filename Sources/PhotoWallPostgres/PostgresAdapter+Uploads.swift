import PhotoWallCore
import PhotoWallStorage

/// Resumable-upload state and its single-writer lease (`"_UPLOADS"`), as in `SQLiteAdapter`.
extension PostgresAdapter: UploadRecordStore {
    static let uploadColumns = "id, owner, length, \"offset\", \"fileName\", \"contentType\", metadata, \"createdAt\", \"expiresAt\", \"completedName\", \"partState\", \"digestState\", writer, \"writerSeenAt\""

    static func decodeUpload(_ r: [String?]) -> UploadRecord {
        var metadata: [String: String] = [:]
        if let text = r[6], let json = try? JSON.parse(text) {
            for (k, v) in json.objectValue ?? [:] { metadata[k] = v.stringValue }
        }
        return UploadRecord(id: r[0] ?? "", owner: r[1] ?? "", length: r[2].flatMap { Int64($0) }, offset: Int64(r[3] ?? "0") ?? 0,
                            fileName: r[4] ?? "", contentType: r[5] ?? "", metadata: metadata,
                            createdAt: ParseDate(millisecondsSince1970: Int64(r[7] ?? "0") ?? 0),
                            expiresAt: ParseDate(millisecondsSince1970: Int64(r[8] ?? "0") ?? 0), completedName: r[9],
                            partState: r[10] ?? "", digestState: r[11].flatMap { HexBytes.decode($0) },
                            writer: r[12], writerSeenAt: r[13].flatMap { Int64($0) })
    }

    public func insertUpload(_ u: UploadRecord) throws(ParseError) {
        let metadata = JSON.object(u.metadata.mapValues { .string($0) }).text
        _ = try guarded {
            try pool.withConnection { conn in
                try conn.query("""
                    INSERT INTO "_UPLOADS"(\(Self.uploadColumns)) VALUES ($1::text, $2::text, $3::bigint, $4::bigint, $5::text,
                        $6::text, $7::jsonb, $8::bigint, $9::bigint, $10::text, $11::text, $12::text, NULL, NULL)
                    """, [u.id, u.owner, u.length.map { String($0) }, String(u.offset), u.fileName, u.contentType, metadata,
                          String(u.createdAt.millisecondsSince1970), String(u.expiresAt.millisecondsSince1970), u.completedName,
                          u.partState, u.digestState?.hexString])
            }
        }
    }

    public func upload(id: String) throws(ParseError) -> UploadRecord? {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT \(Self.uploadColumns) FROM \"_UPLOADS\" WHERE id = $1::text", [id]).first.map(Self.decodeUpload)
            }
        }
    }

    public func claimUploadWriter(id: String, writer: String, now: ParseDate, staleBefore: ParseDate) throws(ParseError) -> Bool {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("""
                    UPDATE "_UPLOADS" SET writer = $1::text, "writerSeenAt" = $2::bigint
                    WHERE id = $3::text AND (writer IS NULL OR "writerSeenAt" < $4::bigint)
                    """, [writer, String(now.millisecondsSince1970), id, String(staleBefore.millisecondsSince1970)]).affected
            }
        } == 1
    }

    public func renewUploadWriter(id: String, writer: String, now: ParseDate) throws(ParseError) -> Bool {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("UPDATE \"_UPLOADS\" SET \"writerSeenAt\" = $1::bigint WHERE id = $2::text AND writer = $3::text",
                               [String(now.millisecondsSince1970), id, writer]).affected
            }
        } == 1
    }

    public func releaseUploadWriter(id: String, writer: String) throws(ParseError) {
        _ = try guarded {
            try pool.withConnection { conn in
                try conn.query("UPDATE \"_UPLOADS\" SET writer = NULL, \"writerSeenAt\" = NULL WHERE id = $1::text AND writer = $2::text", [id, writer])
            }
        }
    }

    public func commitUpload(_ u: UploadRecord, writer: String) throws(ParseError) -> Bool {
        try commitUpload(u, writer: writer, lease: "")
    }

    public func commitUploadReleasingWriter(_ u: UploadRecord, writer: String) throws(ParseError) -> Bool {
        try commitUpload(u, writer: writer, lease: ", writer = NULL, \"writerSeenAt\" = NULL")
    }

    /// The conditional update of both commits; `lease` is extra SET clauses (empty, or the release).
    private func commitUpload(_ u: UploadRecord, writer: String, lease: String) throws(ParseError) -> Bool {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("""
                    UPDATE "_UPLOADS" SET length = $1::bigint, "offset" = $2::bigint, "expiresAt" = $3::bigint,
                        "completedName" = $4::text, "partState" = $5::text, "digestState" = $6::text, "contentType" = $9::text\(lease)
                    WHERE id = $7::text AND writer = $8::text
                    """, [u.length.map { String($0) }, String(u.offset), String(u.expiresAt.millisecondsSince1970), u.completedName,
                          u.partState, u.digestState?.hexString, u.id, writer, u.contentType]).affected
            }
        } == 1
    }

    public func deleteUpload(id: String) throws(ParseError) {
        _ = try guarded { try pool.withConnection { conn in try conn.query("DELETE FROM \"_UPLOADS\" WHERE id = $1::text", [id]) } }
    }

    public func expiredUploads(before date: ParseDate, limit: Int) throws(ParseError) -> [UploadRecord] {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT \(Self.uploadColumns) FROM \"_UPLOADS\" WHERE \"completedName\" IS NULL AND \"expiresAt\" < $1::bigint ORDER BY \"expiresAt\" LIMIT $2::bigint",
                               [String(date.millisecondsSince1970), String(limit)]).rows.map(Self.decodeUpload)
            }
        }
    }
}
