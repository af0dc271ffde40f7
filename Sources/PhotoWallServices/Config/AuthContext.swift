import PhotoWallCore
import PhotoWallStorage

/// Who a request acts as: the master key, a logged-in user, or the public.
public struct AuthContext: Sendable {
    public var isMaster: Bool
    /// The session's `_User`, when a valid session token was sent.
    public var user: StoredObject?
    public var sessionToken: String?
    public var installationId: String?

    public init(isMaster: Bool = false, user: StoredObject? = nil, sessionToken: String? = nil, installationId: String? = nil) {
        self.isMaster = isMaster; self.user = user; self.sessionToken = sessionToken; self.installationId = installationId
    }

    public static let master = AuthContext(isMaster: true)
    public static let anonymous = AuthContext()

    public var userId: String? { user?.objectId }

    /// ACL entries that grant this caller access; nil (no filter) for the master key.
    public var permissions: PermissionSet {
        if isMaster { return nil }
        if let id = user?.objectId { return ["*", id] }
        return ["*"]
    }
}
