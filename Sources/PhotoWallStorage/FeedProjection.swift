/// Which classes the feed store projects, declared by the app (the adapters know no class names).
///
/// The feed is the newest `imageClass` objects whose `authorField` (a provider id, String) is the
/// viewer's or a friend's (from the `FriendGraphStore`), keyset-paginated on (`createdAt`,
/// `objectId`), with each image's `commentClass` objects found by their `commentImageField`
/// (the image's objectId, String). An adapter given a projection keeps the side structures the
/// feed queries need (SQLite: the `_FEED` table; PostgreSQL: a generated author column and two
/// indexes on the image table); given none, its `FeedStore` answers with empty pages.
public struct FeedProjection: Sendable, Hashable {
    /// The class of the posts, e.g. `"Post"`.
    public var imageClass: String
    /// The post's author id field (a String), e.g. `"userFBId"`.
    public var authorField: String
    /// The class of the comments, e.g. `"Comment"`.
    public var commentClass: String
    /// The comment's field holding its image's objectId (a String), e.g. `"imageObjectId"`.
    public var commentImageField: String

    public init(imageClass: String, authorField: String, commentClass: String, commentImageField: String) {
        self.imageClass = imageClass; self.authorField = authorField
        self.commentClass = commentClass; self.commentImageField = commentImageField
    }
}
