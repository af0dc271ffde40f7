import PhotoWallCore

/// A value written once at start-up and then read on every request, behind a read-write lock so
/// readers never contend.
final class SetOnce<Value: Sendable>: Sendable {
    private let storage = ReadMostly<Value?>(nil)
    func set(_ v: Value) { storage.write { $0 = v } }
    func get() -> Value? { storage.read { $0 } }
}
