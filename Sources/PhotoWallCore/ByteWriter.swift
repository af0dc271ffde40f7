#if canImport(Glibc)
import Glibc
#endif

/// A byte buffer for renderers that append many small pieces, such as a stored row's keys, commas and
/// quotes between copies of its values (`ObjectService.writeStoredRow`). Each `Array.append` is a call
/// with a uniqueness check, a capacity check and a `memmove`; here a piece is stored through a pointer
/// after one inlined capacity check, and the bytes become an array once (`bytes`).
///
/// Noncopyable: the storage is the writer's own and freed when it ends.
public struct ByteWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var written: Int
    /// How many bytes are written.
    @inlinable public var count: Int { written }

    /// An empty buffer with room for `capacity` bytes (at least 16) before it grows.
    public init(capacity: Int) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
        written = 0
    }

    deinit { base.deallocate() }

    /// Makes room for `n` more bytes: at least doubles the storage when it has to grow.
    @inlinable @inline(__always)
    public mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    @usableFromInline
    mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        written += 1
    }

    /// Appends `bytes`: pieces of up to 16 bytes byte by byte (no call), longer ones with `memcpy`.
    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        let n = bytes.count
        guard n > 0 else { return }
        reserve(n)
        let p = base + count
        if n <= 16 {
            for i in 0..<n { p[i] = bytes[i] }
        } else {
            p.initialize(from: bytes.baseAddress!, count: n)
        }
        written += n
    }

    /// Appends a literal's UTF-8 bytes.
    @inlinable @inline(__always)
    public mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends bytes an array holds (e.g. a value `JSON.write` rendered on a rarer path).
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Calls `body` with a pointer to room for `n` more bytes; the bytes count as written when it returns
    /// how many it wrote (at most `n`).
    @inlinable
    public mutating func write(upTo n: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(n)
        let written = body(base + count)
        precondition(written >= 0 && written <= n, "ByteWriter.write wrote past the room it asked for")
        self.written += written
    }

    /// Forgets the bytes from `index` on (`index` ≤ `count`).
    public mutating func removeSuffix(from index: Int) {
        precondition(index >= 0 && index <= count)
        written = index
    }

    /// The written bytes as an array (one copy).
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}
