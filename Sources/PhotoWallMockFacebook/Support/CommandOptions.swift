import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// The mock provider's options, parsed by the shared `CommandLineOptions`: `--name value`,
/// `--name=value`, flags, `-h`; `--redirect-uri` may repeat; no positional arguments.
enum CommandOptions {
    static let valued: Set<String> = ["port", "host", "fixture", "app-id", "app-secret", "app-name", "public-url", "redirect-uri",
                                      "token-ttl", "code-ttl", "log-level", "generate-fixture", "out", "seed", "avg-friends",
                                      "max-friends", "app-user-ratio"]
    static let flagNames: Set<String> = ["help", "no-appsecret-proof", "no-control", "stop-on-stdin-eof"]

    /// - Throws: `UsageError` for an unknown option, a missing value or a positional argument.
    static func parse(_ args: [String]) throws(UsageError) -> CommandLineOptions {
        try CommandLineOptions(args, known: valued, flags: flagNames, shortFlags: ["-h": "help"], allowsPositional: false)
    }
}

/// `write(2)` of all of `text` (Swift 6 forbids the libc `stdout` global).
func writeOut(_ text: String, to fd: Int32) {
    var t = text
    _ = t.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
}
