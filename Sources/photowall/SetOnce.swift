import Synchronization

/// A value written once and read from any thread.
final class SetOnce<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)
    func set(_ v: Value) { storage.withLock { $0 = v } }
    func get() -> Value? { storage.withLock { $0 } }
}
