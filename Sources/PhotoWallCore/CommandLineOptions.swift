#if canImport(Glibc)
import Glibc
#endif

/// A command-line usage error: the command prints it as one line and exits with 64 (`EX_USAGE`).
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line to print, without the command's name (`"unknown option --x"`).
    public var description: String
    public init(description: String) { self.description = description }
    public init(_ description: String) { self.description = description }
}

/// GNU-style long options: `--name value`, `--name=value` and value-less flags, with environment
/// variable fallbacks. The one option parser of `photowall` and `photowall mock-facebook`.
///
/// A repeated option keeps every value in `repeated` and its last one in `values` (the later one wins).
/// A flag given as `--flag=x` is set with value `x`; otherwise its value is `"true"`.
public struct CommandLineOptions: Sendable {
    /// The last value of each option given; flags map to `"true"` (or their `=value`).
    public private(set) var values: [String: String] = [:]
    /// Every value of each valued option, in order (`--redirect-uri a --redirect-uri b`).
    public private(set) var repeated: [String: [String]] = [:]
    /// The flags given.
    public private(set) var flags: Set<String> = []
    /// Arguments that are not options, in order.
    public private(set) var positional: [String] = []

    /// - Parameters:
    ///   - known: option names (without `--`) that take a value.
    ///   - flags: option names that take none.
    ///   - shortFlags: single-dash spellings of flags, e.g. `["-h": "help"]`.
    ///   - allowsPositional: when false, the first non-option argument is an error.
    /// - Throws: `UsageError` for an unknown option (`unknown option --x`), a valued option at the
    ///   end without its value (`--x needs a value`) or, when not allowed, a positional argument
    ///   (`unexpected argument 'x'`).
    public init(_ args: [String], known: Set<String>, flags flagNames: Set<String> = [],
                shortFlags: [String: String] = [:], allowsPositional: Bool = true) throws(UsageError) {
        var i = 0
        while i < args.count {
            let a = args[i]
            i += 1
            guard a.hasPrefix("--") else {
                if let flag = shortFlags[a] {
                    flags.insert(flag); values[flag] = "true"
                } else if allowsPositional {
                    positional.append(a)
                } else {
                    throw UsageError("unexpected argument '\(a)'")
                }
                continue
            }
            var name = String(a.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if flagNames.contains(name) {
                flags.insert(name)
                values[name] = value ?? "true"
            } else if known.contains(name) {
                if value == nil {
                    guard i < args.count else { throw UsageError("--\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                values[name] = value
                repeated[name, default: []].append(value!)
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    /// The option's value, else the value of the first of `env` that is set.
    public func value(_ name: String, env: [String] = []) -> String? {
        if let v = values[name] { return v }
        for e in env { if let v = getenv(e) { return String(cString: v) } }
        return nil
    }

    /// Whether the flag (or option) was given.
    public func flag(_ name: String) -> Bool { values[name] != nil }

    /// The option as a whole number, nil when absent. - Throws: `UsageError` (`bad --name 'x'`) when it is not one.
    public func int(_ name: String) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let n = Int(text) else { throw UsageError("bad --\(name) '\(text)'") }
        return n
    }

    /// The option as a number, nil when absent. - Throws: `UsageError` (`bad --name 'x'`) when it is not one.
    public func double(_ name: String) throws(UsageError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let n = Double(text) else { throw UsageError("bad --\(name) '\(text)'") }
        return n
    }
}
