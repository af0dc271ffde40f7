import PhotoWallCore
import PhotoWallStorage

/// The friend graph (`"_FRIENDS"` edges per viewer, `"_FRIEND_SYNC"` times), as in `SQLiteAdapter`.
extension PostgresAdapter {
    /// Replaces the edges in one transaction. The sync row is upserted first, so it serialises
    /// concurrent syncs of the same viewer (its row lock) before their DELETE and INSERT meet.
    public func replaceFriends(of userFBId: String, with friendFBIds: [String], syncedAt: ParseDate) throws(ParseError) {
        let friends = Array(Set(friendFBIds)).filter { $0 != userFBId }
        try writeTransaction { conn, _ in
            try conn.query("""
                INSERT INTO "_FRIEND_SYNC"("userFBId", "syncedAt") VALUES ($1::text, $2::bigint)
                ON CONFLICT ("userFBId") DO UPDATE SET "syncedAt" = excluded."syncedAt"
                """, [userFBId, String(syncedAt.millisecondsSince1970)])
            try conn.query("DELETE FROM \"_FRIENDS\" WHERE \"userFBId\" = $1::text", [userFBId])
            if !friends.isEmpty {
                try conn.query("INSERT INTO \"_FRIENDS\"(\"userFBId\", \"friendFBId\") SELECT $1::text, unnest($2::text[])",
                               [userFBId, PostgresQueryCompiler.textArrayLiteral(friends)])
            }
        }
    }

    public func friends(of userFBId: String) throws(ParseError) -> [String] {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT \"friendFBId\" FROM \"_FRIENDS\" WHERE \"userFBId\" = $1::text", [userFBId]).rows.compactMap { $0[0] }
            }
        }
    }

    public func friendCount(of userFBId: String) throws(ParseError) -> Int {
        try guarded {
            try pool.withConnection { conn in
                Int(try conn.query("SELECT count(*) FROM \"_FRIENDS\" WHERE \"userFBId\" = $1::text", [userFBId]).first?[0] ?? "0") ?? 0
            }
        }
    }

    public func friendsSyncedAt(_ userFBId: String) throws(ParseError) -> ParseDate? {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT \"syncedAt\" FROM \"_FRIEND_SYNC\" WHERE \"userFBId\" = $1::text", [userFBId]).first?[0]
                    .flatMap { Int64($0) }.map { ParseDate(millisecondsSince1970: $0) }
            }
        }
    }

    public func isFriend(_ friendFBId: String, of userFBId: String) throws(ParseError) -> Bool {
        try guarded {
            try pool.withConnection { conn in
                !(try conn.query("SELECT 1 FROM \"_FRIENDS\" WHERE \"userFBId\" = $1::text AND \"friendFBId\" = $2::text",
                                 [userFBId, friendFBId]).rows.isEmpty)
            }
        }
    }
}
