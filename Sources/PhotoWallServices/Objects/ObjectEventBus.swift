import PhotoWallCore
import PhotoWallStorage
import Synchronization

/// A committed change, as the write path saw it (stored encodings, `_` columns included: listeners
/// render through `ObjectService` before anything leaves the process).
public enum ObjectEvent: Sendable {
    /// A create (`original` nil) or an update.
    case saved(original: StoredObject?, current: StoredObject)
    /// A delete, including cascades (a photo's comments, a deleted user's photos and comments).
    case deleted(StoredObject)
    /// Sessions ended without an object delete of their own: a logout (`sessionToken` set) or every
    /// session of a deleted user or of a password change (`sessionToken` nil).
    case sessionsEnded(userId: String, sessionToken: String?)
}

/// The one after-save/after-delete notification point: every write path (`ObjectService`'s create,
/// update and delete, which REST, `/batch` and `_method` reach, the wall's cascading deletes and
/// `UserService`'s session ends) publishes here once the change is committed; LiveQuery listens.
///
/// Listeners run on the writer's thread, synchronously: they must only enqueue work, never block.
public final class ObjectEventBus: Sendable {
    private let listeners = Mutex<[@Sendable (ObjectEvent) -> Void]>([])

    public init() {}

    /// Adds a listener for every later event.
    public func listen(_ listener: @escaping @Sendable (ObjectEvent) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Hands `event` to every listener.
    public func publish(_ event: ObjectEvent) {
        let current = listeners.withLock { $0 }
        for l in current { l(event) }
    }

    /// Whether anyone listens (so a write path may skip work done only for events).
    public var hasListeners: Bool { listeners.withLock { !$0.isEmpty } }
}
