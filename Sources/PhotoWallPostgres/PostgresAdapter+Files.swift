import PhotoWallCore
import PhotoWallStorage

/// File metadata (`"_FILES"`), as in `SQLiteAdapter`.
extension PostgresAdapter: FileRecordStore {
    public func insertFile(_ r: FileRecord) throws(ParseError) {
        _ = try guarded {
            try pool.withConnection { conn in
                try conn.query("INSERT INTO \"_FILES\"(name, \"contentType\", \"byteCount\", sha256, \"createdAt\", \"originalName\", \"declaredType\", owner, unclaimed) VALUES ($1::text, $2::text, $3::bigint, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::boolean)",
                               [r.name, r.contentType, String(r.byteCount), r.sha256, String(r.createdAt.millisecondsSince1970), r.originalName, r.declaredType,
                                r.owner, r.unclaimed ? "true" : "false"])
            }
        }
    }

    public func file(named name: String) throws(ParseError) -> FileRecord? {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT name, \"contentType\", \"byteCount\", sha256, \"createdAt\", \"originalName\", \"declaredType\", owner, unclaimed FROM \"_FILES\" WHERE name = $1::text", [name]).first.map {
                    FileRecord(name: $0[0] ?? "", contentType: $0[1] ?? "application/octet-stream", byteCount: Int64($0[2] ?? "0") ?? 0,
                               sha256: $0[3] ?? "", createdAt: ParseDate(millisecondsSince1970: Int64($0[4] ?? "0") ?? 0),
                               originalName: $0[5], declaredType: $0[6], owner: $0[7], unclaimed: $0[8] == "t")
                }
            }
        }
    }

    public func deleteFile(named name: String) throws(ParseError) -> Bool {
        try guarded {
            try pool.withConnection { conn in try conn.query("DELETE FROM \"_FILES\" WHERE name = $1::text", [name]).affected }
        } > 0
    }

    public func fileNames(ownedBy owner: String, limit: Int) throws(ParseError) -> [String] {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT name FROM \"_FILES\" WHERE owner = $1::text ORDER BY \"createdAt\" LIMIT $2::bigint", [owner, String(limit)])
                    .rows.compactMap { $0[0] }
            }
        }
    }

    public func files(ownedBy owner: String, sha256 digests: [String]) throws(ParseError) -> [FileRecord] {
        guard !digests.isEmpty else { return [] }
        return try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT name, \"contentType\", \"byteCount\", sha256, \"createdAt\", \"originalName\", \"declaredType\", owner, unclaimed FROM \"_FILES\" WHERE owner = $1::text AND sha256 = ANY($2::text[])",
                               [owner, PostgresQueryCompiler.textArrayLiteral(digests)]).rows.map {
                    FileRecord(name: $0[0] ?? "", contentType: $0[1] ?? "application/octet-stream", byteCount: Int64($0[2] ?? "0") ?? 0,
                               sha256: $0[3] ?? "", createdAt: ParseDate(millisecondsSince1970: Int64($0[4] ?? "0") ?? 0),
                               originalName: $0[5], declaredType: $0[6], owner: $0[7], unclaimed: $0[8] == "t")
                }
            }
        }
    }

    public func unclaimedFileNames(before date: ParseDate, limit: Int) throws(ParseError) -> [String] {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT name FROM \"_FILES\" WHERE unclaimed AND \"createdAt\" < $1::bigint ORDER BY \"createdAt\" LIMIT $2::bigint",
                               [String(date.millisecondsSince1970), String(limit)]).rows.compactMap { $0[0] }
            }
        }
    }

    public func claimFiles(named names: [String]) throws(ParseError) {
        guard !names.isEmpty else { return }
        _ = try guarded {
            try pool.withConnection { conn in
                try conn.query("UPDATE \"_FILES\" SET unclaimed = false WHERE name = ANY($1::text[])", [PostgresQueryCompiler.textArrayLiteral(names)])
            }
        }
    }
}
