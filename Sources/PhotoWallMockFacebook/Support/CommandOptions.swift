#if canImport(Glibc)
import Glibc
#endif

/// A command-line mistake: printed on one line, exit code 64.
struct CommandUsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// `--name value`, `--name=value`, flags; `--redirect-uri` may repeat.
struct CommandOptions {
    static let valued: Set<String> = ["port", "host", "fixture", "app-id", "app-secret", "app-name", "public-url", "redirect-uri",
                                      "token-ttl", "code-ttl", "log-level", "generate-fixture", "out", "seed", "avg-friends",
                                      "max-friends", "app-user-ratio"]
    static let flagNames: Set<String> = ["help", "no-appsecret-proof", "no-control", "stop-on-stdin-eof"]

    var values: [String: String] = [:]
    var repeated: [String: [String]] = [:]
    var flags: Set<String> = []

    init(_ args: [String]) throws(CommandUsageError) {
        var i = 0
        while i < args.count {
            let arg = args[i]
            guard arg.hasPrefix("--") else {
                if arg == "-h" { flags.insert("help"); i += 1; continue }
                throw CommandUsageError("unexpected argument '\(arg)'")
            }
            var name = String(arg.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if CommandOptions.flagNames.contains(name) {
                flags.insert(name)
            } else if CommandOptions.valued.contains(name) {
                if value == nil {
                    i += 1
                    guard i < args.count else { throw CommandUsageError("--\(name) needs a value") }
                    value = args[i]
                }
                values[name] = value
                repeated[name, default: []].append(value!)
            } else {
                throw CommandUsageError("unknown option --\(name)")
            }
            i += 1
        }
    }

    func int(_ name: String) throws(CommandUsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let n = Int(text) else { throw CommandUsageError("bad --\(name) '\(text)'") }
        return n
    }

    func double(_ name: String) throws(CommandUsageError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let n = Double(text) else { throw CommandUsageError("bad --\(name) '\(text)'") }
        return n
    }
}

/// `write(2)` of all of `text` (Swift 6 forbids the libc `stdout` global).
func writeOut(_ text: String, to fd: Int32) {
    var t = text
    t.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 { break }
            offset += n
        }
    }
}
