import PhotoWallCore
import PhotoWallStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A bounded local copy of S3 objects, so the HTTP layer can serve them with `sendfile` and
/// `Range` from a path.
///
/// Files are named by the SHA-256 of the object name under `directory`; a download goes to
/// `directory/tmp/<random>.part` and is renamed into place only when complete, so a cached path
/// always holds the whole object. Least recently used entries are removed once the total passes
/// `limitBytes` (the entry just added is kept even when it alone is larger). Objects are
/// immutable, so a copy stays valid until `remove`; at start the folder is rescanned (oldest
/// modification first) and leftover temporaries deleted.
///
/// An evicted file may still be open for a response in progress (unlinking keeps its data until
/// closed); a path returned just before its eviction can miss, which the caller sees as missing.
final class S3ReadCache: Sendable {
    let directory: String
    let tmpDirectory: String
    let limitBytes: Int64

    private struct Entry { var size: Int64; var lastUse: UInt64 }
    private struct State {
        var entries: [String: Entry] = [:]
        var totalBytes: Int64 = 0
        var clock: UInt64 = 0
    }
    private let state = Mutex(State())

    /// - Throws: `ParseError` 1 when the folders can't be created.
    init(directory: String, limitBytes: Int64) throws(ParseError) {
        self.directory = directory
        tmpDirectory = directory + "/tmp"
        self.limitBytes = limitBytes
        for d in [directory, tmpDirectory] where mkdir(d, 0o755) != 0 && errno != EEXIST {
            throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "mkdir \(d)", code: errno))
        }
        for name in Self.list(tmpDirectory) { unlink(tmpDirectory + "/" + name) }
        var found: [(String, Int64, Int)] = []
        for name in Self.list(directory) where name.count == 64 {
            var st = stat()
            if stat(directory + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
                found.append((name, Int64(st.st_size), st.st_mtim.tv_sec))
            }
        }
        state.withLock { s in
            for (name, size, _) in found.sorted(by: { $0.2 < $1.2 }) {
                s.clock += 1
                s.entries[name] = Entry(size: size, lastUse: s.clock)
                s.totalBytes += size
            }
        }
        evict(keeping: nil)
    }

    static func list(_ dir: String) -> [String] {
        (directoryEntries(dir) ?? []).filter { $0 != "tmp" }
    }

    func fileName(_ name: String) -> String { SigV4Signer.hexSHA256(Array(name.utf8)) }

    /// The cached copy of `name`, marked as just used. - Returns: nil when not cached.
    func lookup(_ name: String) -> FileLocation? {
        let f = fileName(name)
        let size: Int64? = state.withLock { s in
            guard var e = s.entries[f] else { return nil }
            s.clock += 1
            e.lastUse = s.clock
            s.entries[f] = e
            return e.size
        }
        guard let size else { return nil }
        return FileLocation(path: directory + "/" + f, byteCount: size)
    }

    /// Downloads `name` with `download` (which writes the object into the given descriptor and
    /// returns false when the object does not exist) and adds it.
    /// - Returns: the cached location, or nil when the object does not exist.
    /// - Throws: `ParseError` from `download`, or 1 when the temporary file can't be made.
    func fill(_ name: String, download: (Int32) throws(ParseError) -> Bool) throws(ParseError) -> FileLocation? {
        let f = fileName(name)
        let tmp = tmpDirectory + "/" + ParseIdentifier.hex(byteCount: 12) + ".part"
        let fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "open \(tmp)", code: errno)) }
        var keep = false
        defer {
            close(fd)
            if !keep { unlink(tmp) }
        }
        guard try download(fd) else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "fstat", code: errno)) }
        let path = directory + "/" + f
        guard rename(tmp, path) == 0 else { throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "rename", code: errno)) }
        keep = true
        let size = Int64(st.st_size)
        state.withLock { s in
            if let old = s.entries[f] { s.totalBytes -= old.size }
            s.clock += 1
            s.entries[f] = Entry(size: size, lastUse: s.clock)
            s.totalBytes += size
        }
        evict(keeping: f)
        return FileLocation(path: path, byteCount: size)
    }

    /// Drops the cached copy of `name`, if any.
    func remove(_ name: String) {
        let f = fileName(name)
        state.withLock { s in
            if let e = s.entries.removeValue(forKey: f) { s.totalBytes -= e.size }
        }
        unlink(directory + "/" + f)
    }

    /// Bytes held now.
    var totalBytes: Int64 { state.withLock { $0.totalBytes } }

    /// Removes least recently used entries (never `keeping`) until the total is within the limit.
    private func evict(keeping: String?) {
        let victims: [String] = state.withLock { s in
            guard s.totalBytes > limitBytes else { return [] }
            var out: [String] = []
            for (f, e) in s.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where f != keeping {
                guard s.totalBytes > limitBytes else { break }
                s.entries.removeValue(forKey: f)
                s.totalBytes -= e.size
                out.append(f)
            }
            return out
        }
        for f in victims { unlink(directory + "/" + f) }
    }
}
