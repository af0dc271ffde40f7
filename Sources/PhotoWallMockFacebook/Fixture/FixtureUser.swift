/// One person in the mock provider's world, as listed in `Samples/facebook/users.json`.
///
/// JSON shape (one object per user in the fixture's `users` array):
/// `{"id":"100003512345678","name":"Ava Lindqvist","first_name":"Ava","last_name":"Lindqvist",
///   "email":"ava.lindqvist@example.com","color":"#3a7bd5","app_user":true,"community":3,"friends":["…"]}`
public struct FixtureUser: Sendable, Hashable {
    /// Graph user id: a numeric string (15 digits in generated fixtures, like Facebook's).
    public var id: String
    /// Display name, `first_name last_name`.
    public var name: String
    public var firstName: String
    public var lastName: String
    /// Returned by `/me?fields=email` only when the token was granted the `email` permission.
    public var email: String?
    /// Avatar colour `#rrggbb`, used to draw the profile picture.
    public var color: String
    /// Whether this person had already authorised the app (with `user_friends`) when the mock
    /// started. Only app users appear in other people's `/me/friends` (Graph v2+; notes §2.3).
    /// Logging in through the mock with `user_friends` makes a person an app user.
    public var appUser: Bool
    /// The generator's friend cluster (informational; nil when absent).
    public var community: Int?

    public init(id: String, name: String, firstName: String, lastName: String, email: String? = nil,
                color: String = "#7f8c8d", appUser: Bool = true, community: Int? = nil) {
        self.id = id; self.name = name; self.firstName = firstName; self.lastName = lastName
        self.email = email; self.color = color; self.appUser = appUser; self.community = community
    }
}
