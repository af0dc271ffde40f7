import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// A command-line usage error: printed as one line, exit code 64 (EX_USAGE).
struct UsageError: Error, CustomStringConvertible {
    var description: String
}

/// `--name value` / `--name=value` options with environment-variable fallbacks.
struct Options {
    var values: [String: String] = [:]
    var positional: [String] = []

    /// - Parameters:
    ///   - known: option names (without `--`) that take a value.
    ///   - flags: option names that take none.
    init(_ args: [String], known: Set<String>, flags: Set<String> = []) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a.hasPrefix("--") {
                var name = String(a.dropFirst(2))
                var value: String?
                if let eq = name.firstIndex(of: "=") {
                    value = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if flags.contains(name) {
                    values[name] = value ?? "true"
                } else if known.contains(name) {
                    if value == nil {
                        i += 1
                        guard i < args.count else { throw UsageError(description: "--\(name) needs a value") }
                        value = args[i]
                    }
                    values[name] = value
                } else {
                    throw UsageError(description: "unknown option --\(name)")
                }
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    /// The option, else the first set environment variable.
    func value(_ name: String, env: [String] = []) -> String? {
        if let v = values[name] { return v }
        for e in env { if let v = getenv(e) { return String(cString: v) } }
        return nil
    }

    func flag(_ name: String) -> Bool { values[name] != nil }
}

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
