import PhotoWallCore

/// The friend graph taken from the identity provider: for each user (by provider id), the
/// provider ids of their friends who use the app, and when that list was last synced.
///
/// Stored per viewer (a directed edge list), replaced whole at each sync, so a friendship removed
/// at the provider disappears at the viewer's next sync. Held by `FriendService`; also read by the
/// feed stores, which join it in the database. Implementations: `SQLiteAdapter`, `PostgresAdapter`.
public protocol FriendGraphStore: Sendable {
    /// Replaces the friends of `userId` in one transaction.
    func replaceFriends(of userId: String, with friendIds: [String], syncedAt: ParseDate) throws(ParseError)
    /// The friends of `userId`, in no particular order (empty when never synced).
    func friends(of userId: String) throws(ParseError) -> [String]
    /// When `userId`'s friends were last synced, or nil.
    func friendsSyncedAt(_ userId: String) throws(ParseError) -> ParseDate?
    /// Whether `friendId` is among `userId`'s friends (an index probe).
    func isFriend(_ friendId: String, of userId: String) throws(ParseError) -> Bool
    /// How many friends `userId` has, counted up to `limit` (an index count that stops there, so
    /// choosing a feed strategy costs the same for 50 friends as for 5,000; no list is built).
    /// - Returns: min(the friend count, `limit`).
    func friendCount(of userId: String, upTo limit: Int) throws(ParseError) -> Int
}

extension FriendGraphStore {
    public func friendCount(of userId: String, upTo limit: Int) throws(ParseError) -> Int { min(try friends(of: userId).count, limit) }
    /// How many friends `userId` has.
    public func friendCount(of userId: String) throws(ParseError) -> Int { try friendCount(of: userId, upTo: Int.max) }
}
