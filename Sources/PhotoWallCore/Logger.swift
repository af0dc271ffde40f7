#if canImport(Glibc)
import Glibc
#endif

/// A small value-type logger writing one line per event to standard error.
///
/// Lines look like `2026-11-30T04:32:23.001Z info  request method=GET path=/parse/health status=200 ms=0.4 request.id=…`.
/// Library code logs at `.info` or below; secrets (tokens, passwords, SQL arguments) are never passed in.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case trace, debug, info, notice, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public init?(name: String) {
            guard let l = Level.allCases.first(where: { "\($0)" == name.lowercased() }) else { return nil }
            self = l
        }
    }

    public var label: String
    public var level: Level

    public init(label: String, level: Level = .info) {
        self.label = label
        self.level = level
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, String> = [:]) {
        guard level >= self.level else { return }
        var line = "\(ParseDate.now().iso) \(level) [\(label)] \(message())"
        for (k, v) in metadata { line += " \(k)=\(v)" }
        line += "\n"
        Logger.writeStderr(line)
    }

    public func trace(_ m: @autoclosure () -> String, _ md: KeyValuePairs<String, String> = [:]) { log(.trace, m(), md) }
    public func debug(_ m: @autoclosure () -> String, _ md: KeyValuePairs<String, String> = [:]) { log(.debug, m(), md) }
    public func info(_ m: @autoclosure () -> String, _ md: KeyValuePairs<String, String> = [:]) { log(.info, m(), md) }
    public func notice(_ m: @autoclosure () -> String, _ md: KeyValuePairs<String, String> = [:]) { log(.notice, m(), md) }
    public func warning(_ m: @autoclosure () -> String, _ md: KeyValuePairs<String, String> = [:]) { log(.warning, m(), md) }
    public func error(_ m: @autoclosure () -> String, _ md: KeyValuePairs<String, String> = [:]) { log(.error, m(), md) }

    /// Writes text to fd 2 in one `write(2)` call (Swift 6 forbids touching libc's `stderr` global).
    public static func writeStderr(_ text: String) {
        var t = text
        t.withUTF8 { buf in
            var off = 0
            while off < buf.count {
                let n = write(2, buf.baseAddress! + off, buf.count - off)
                if n <= 0 { break }
                off += n
            }
        }
    }
}
