import PhotoWallCore

/// The friend graph taken from the identity provider: for each user (by provider id), the
/// provider ids of their friends who use the app, and when that list was last synced.
///
/// Stored per viewer (a directed edge list), replaced whole at each sync, so a friendship removed
/// at the provider disappears at the viewer's next sync. Held by `FriendService`; also read by the
/// feed stores, which join it in the database. Implementations: `SQLiteAdapter`, `PostgresAdapter`.
public protocol FriendGraphStore: Sendable {
    /// Replaces the friends of `userFBId` in one transaction.
    func replaceFriends(of userFBId: String, with friendFBIds: [String], syncedAt: ParseDate) throws(ParseError)
    /// The friends of `userFBId`, in no particular order (empty when never synced).
    func friends(of userFBId: String) throws(ParseError) -> [String]
    /// When `userFBId`'s friends were last synced, or nil.
    func friendsSyncedAt(_ userFBId: String) throws(ParseError) -> ParseDate?
    /// Whether `friendFBId` is among `userFBId`'s friends (an index probe).
    func isFriend(_ friendFBId: String, of userFBId: String) throws(ParseError) -> Bool
    /// How many friends `userFBId` has (an index count; no list is built).
    func friendCount(of userFBId: String) throws(ParseError) -> Int
}

extension FriendGraphStore {
    public func friendCount(of userFBId: String) throws(ParseError) -> Int { try friends(of: userFBId).count }
}
