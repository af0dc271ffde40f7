#if canImport(Glibc)
import Glibc
#endif

/// The names in folder `path` (`.` and `..` left out), in `readdir` order.
/// - Returns: nil when the folder can't be opened (`errno` says why).
public func directoryEntries(_ path: String) -> [String]? {
    guard let d = opendir(path) else { return nil }
    defer { closedir(d) }
    var names: [String] = []
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}
