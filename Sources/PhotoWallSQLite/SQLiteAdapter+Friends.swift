import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// The friend graph: `_FRIENDS` edges per viewer, `_FRIEND_SYNC` times.
extension SQLiteAdapter: FriendGraphStore {
    public func replaceFriends(of userId: String, with friendIds: [String], syncedAt: ParseDate) throws(ParseError) {
        try guarded {
            try writeTransaction { conn in
                try conn.run("DELETE FROM _FRIENDS WHERE userId = ?", [.text(userId)])
                for f in Set(friendIds) where f != userId {
                    try conn.run("INSERT INTO _FRIENDS(userId, friendId) VALUES (?, ?)", [.text(userId), .text(f)])
                }
                try conn.run("INSERT INTO _FRIEND_SYNC(userId, syncedAt) VALUES (?, ?) ON CONFLICT(userId) DO UPDATE SET syncedAt = excluded.syncedAt",
                             [.text(userId), .integer(syncedAt.millisecondsSince1970)])
            }
        }
    }

    public func friends(of userId: String) throws(ParseError) -> [String] {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT friendId FROM _FRIENDS WHERE userId = ?", [.text(userId)]).compactMap { $0[0].text }
            }
        }
    }

    public func friendsSyncedAt(_ userId: String) throws(ParseError) -> ParseDate? {
        try guarded {
            try db.read { conn in
                try conn.query("SELECT syncedAt FROM _FRIEND_SYNC WHERE userId = ?", [.text(userId)]).first?.first?.integer
                    .map { ParseDate(millisecondsSince1970: $0) }
            }
        }
    }

    public func isFriend(_ friendId: String, of userId: String) throws(ParseError) -> Bool {
        try guarded {
            try db.read { conn in
                !(try conn.query("SELECT 1 FROM _FRIENDS WHERE userId = ? AND friendId = ?", [.text(userId), .text(friendId)]).isEmpty)
            }
        }
    }

    public func friendCount(of userId: String, upTo limit: Int) throws(ParseError) -> Int {
        try guarded {
            try db.read { conn in
                Int(try conn.query("SELECT count(*) FROM (SELECT 1 FROM _FRIENDS WHERE userId = ? LIMIT ?)",
                                   [.text(userId), .integer(Int64(clamping: limit))]).first?.first?.integer ?? 0)
            }
        }
    }
}
