#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` with a fresh empty directory under `$TMPDIR` (default `/tmp`), removed afterwards with
/// everything in it, also when `body` throws.
/// - Parameter prefix: start of the directory name, for finding leftovers of a crashed run.
public func withTemporaryDirectory<T>(prefix: String = "photowall-test", _ body: (String) throws -> T) throws -> T {
    let path = try makeTemporaryDirectory(prefix: prefix)
    defer { removeTree(path) }
    return try body(path)
}

/// Async variant of `withTemporaryDirectory`.
public func withTemporaryDirectory<T>(prefix: String = "photowall-test", _ body: (String) async throws -> T) async throws -> T {
    let path = try makeTemporaryDirectory(prefix: prefix)
    defer { removeTree(path) }
    return try await body(path)
}

private func makeTemporaryDirectory(prefix: String) throws -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestHTTPClientError("mkdtemp failed", systemError: errno) }
    return String(cString: made)
}

/// Removes `path` recursively (files, symlinks, directories); ignores errors.
public func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if (info.st_mode & S_IFMT) == S_IFDIR {
        if let dir = opendir(path) {
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names { removeTree("\(path)/\(name)") }
        }
        rmdir(path)
    } else {
        unlink(path)
    }
}
