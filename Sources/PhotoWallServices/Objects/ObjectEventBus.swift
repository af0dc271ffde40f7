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
/// `UserService`'s new sessions and session ends) publishes here once the change is committed;
/// LiveQuery listens.
/// With several instances on one PostgreSQL (`ClusterEvents`), other instances' events arrive
/// through `publishFromOtherInstance` and reach the same `listen` listeners.
///
/// Listeners run on the writer's (or the notifier's) thread, synchronously: they must only enqueue
/// work, never block.
public final class ObjectEventBus: Sendable {
    private let listeners = Mutex<[@Sendable (ObjectEvent) -> Void]>([])
    private let localListeners = Mutex<[@Sendable (ObjectEvent) -> Void]>([])

    public init() {}

    /// Adds a listener for every later event, this instance's and other instances'.
    public func listen(_ listener: @escaping @Sendable (ObjectEvent) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Adds a listener for this instance's own later events only (what it forwards to the others).
    public func listenLocal(_ listener: @escaping @Sendable (ObjectEvent) -> Void) {
        localListeners.withLock { $0.append(listener) }
    }

    /// Hands `event`, a change committed by this instance, to every listener.
    public func publish(_ event: ObjectEvent) {
        let current = listeners.withLock { $0 } + localListeners.withLock { $0 }
        for l in current { l(event) }
    }

    /// Hands `event`, a change another instance committed, to the `listen` listeners (not to
    /// `listenLocal` ones, so it is never sent back out).
    public func publishFromOtherInstance(_ event: ObjectEvent) {
        let current = listeners.withLock { $0 }
        for l in current { l(event) }
    }

    /// Whether anyone listens (so a write path may skip work done only for events).
    public var hasListeners: Bool { listeners.withLock { !$0.isEmpty } || localListeners.withLock { !$0.isEmpty } }
}
