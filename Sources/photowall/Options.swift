import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// The CLI's options: the shared parser of PhotoWallCore (`--name value`, `--name=value`, flags,
/// environment fallbacks through `value(_:env:)`).
typealias Options = CommandLineOptions

/// Parses sizes like `20mb`, `20MiB`, `512k`, `1g`, `1048576` into bytes (binary multiples).
func parseByteSize(_ text: String) -> Int? {
    let t = text.lowercased().replacingOccurrences(of: " ", with: "")
    let units: [(String, Int)] = [("gib", 1 << 30), ("gb", 1 << 30), ("g", 1 << 30), ("mib", 1 << 20), ("mb", 1 << 20), ("m", 1 << 20),
                                  ("kib", 1 << 10), ("kb", 1 << 10), ("k", 1 << 10), ("b", 1)]
    for (suffix, mult) in units where t.hasSuffix(suffix) {
        guard let n = Double(t.dropLast(suffix.count)), n >= 0 else { return nil }
        return Int(n * Double(mult))
    }
    return Int(t).flatMap { $0 >= 0 ? $0 : nil }
}
