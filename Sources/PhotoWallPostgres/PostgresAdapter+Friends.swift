import PhotoWallCore
import PhotoWallStorage

/// The friend graph (`"_FRIENDS"` edges per viewer, `"_FRIEND_SYNC"` times), as in `SQLiteAdapter`.
extension PostgresAdapter: FriendGraphStore {
    /// Replaces the edges in one transaction. The sync row is upserted first, so it serialises
    /// concurrent syncs of the same viewer (its row lock) before their DELETE and INSERT meet.
    public func replaceFriends(of userId: String, with friendIds: [String], syncedAt: ParseDate) throws(ParseError) {
        let friends = Array(Set(friendIds)).filter { $0 != userId }
        try writeTransaction { conn, _ in
            try conn.query("""
                INSERT INTO "_FRIEND_SYNC"("userId", "syncedAt") VALUES ($1::text, $2::bigint)
                ON CONFLICT ("userId") DO UPDATE SET "syncedAt" = excluded."syncedAt"
                """, [userId, String(syncedAt.millisecondsSince1970)])
            try conn.query("DELETE FROM \"_FRIENDS\" WHERE \"userId\" = $1::text", [userId])
            if !friends.isEmpty {
                try conn.query("INSERT INTO \"_FRIENDS\"(\"userId\", \"friendId\") SELECT $1::text, unnest($2::text[])",
                               [userId, PostgresQueryCompiler.textArrayLiteral(friends)])
            }
        }
    }

    public func friends(of userId: String) throws(ParseError) -> [String] {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT \"friendId\" FROM \"_FRIENDS\" WHERE \"userId\" = $1::text", [userId]).rows.compactMap { $0[0] }
            }
        }
    }

    public func friendCount(of userId: String, upTo limit: Int) throws(ParseError) -> Int {
        try guarded {
            try pool.withConnection { conn in
                Int(try conn.query("SELECT count(*) FROM (SELECT 1 FROM \"_FRIENDS\" WHERE \"userId\" = $1::text LIMIT $2::bigint) f",
                                   [userId, String(limit)]).first?[0] ?? "0") ?? 0
            }
        }
    }

    public func friendsSyncedAt(_ userId: String) throws(ParseError) -> ParseDate? {
        try guarded {
            try pool.withConnection { conn in
                try conn.query("SELECT \"syncedAt\" FROM \"_FRIEND_SYNC\" WHERE \"userId\" = $1::text", [userId]).first?[0]
                    .flatMap { Int64($0) }.map { ParseDate(millisecondsSince1970: $0) }
            }
        }
    }

    public func isFriend(_ friendId: String, of userId: String) throws(ParseError) -> Bool {
        try guarded {
            try pool.withConnection { conn in
                !(try conn.query("SELECT 1 FROM \"_FRIENDS\" WHERE \"userId\" = $1::text AND \"friendId\" = $2::text",
                                 [userId, friendId]).rows.isEmpty)
            }
        }
    }
}
