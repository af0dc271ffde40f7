import PhotoWallCore
import PhotoWallMockFacebook
#if canImport(Glibc)
import Glibc
#endif

/// `photowall COMMAND …`: the server and its tools.
@main
struct PhotoWallCLI {
    /// `photowall --version` prints `photowall <version>`.
    static let version = "0.15.0"

    static let usage = """
        usage: photowall COMMAND [options]          (photowall COMMAND --help for a command's options)

        Run a wall:
          serve          the Parse-compatible API server and the browser wall
          mock-facebook  mock Facebook login and Graph API for development and tests

        Use a wall from the command line:
          login          log in and keep the session: photowall login [USERNAME] [--password P]
                         or with Facebook: photowall login --facebook [--as USER]
          upload         post photos (resumable): photowall upload FILE... [--comment TEXT] [--parallel N] [--json]
                         skips photos you already posted (same SHA-256) unless --allow-duplicate
          feed           your wall, newest first: photowall feed [--limit N] [--urls] [--json]
          comment        comment on a photo: photowall comment IMAGE_ID TEXT
          watch          follow your wall live, a line per new photo or comment: photowall watch [--json]
          logout         end the stored session

        Tools:
          thumbnail      make a thumbnail: photowall thumbnail IN OUT [--size N] [--format jpeg|png] [--quality Q]
          samples        render photo-like sample images with EXIF orientations 1-8: photowall samples OUTDIR
          seed-demo      fill a data folder with a demo wall: photowall seed-demo --users N --images M --friends-per-user K

        Examples:
          photowall serve --port 8080                          # the wall on http://127.0.0.1:8080/
          photowall login --facebook --as "Ann Lee"            # as a mock Facebook user (make run)
          photowall upload ~/Pictures/*.jpg --comment "Holiday"
          photowall feed --limit 5
          photowall comment 8fK2a9QxZp "What a view"

          help, --help   show this text
          --version      print the version

        """

    static func main() {
        let args = Array(CommandLine.arguments.dropFirst())
        guard let command = args.first else {
            Terminal.write(usage, to: 2)
            exit(64)
        }
        let rest = Array(args.dropFirst())
        let code: Int32
        switch command {
        case "serve": code = ServeCommand.run(rest)
        case "thumbnail": code = runThumbnailCommand(rest)
        case "samples": code = SamplesCommand.run(rest)
        case "seed-demo": code = SeedDemoCommand.run(rest)
        case "feed": code = FeedCommand.run(rest)
        case "comment": code = CommentCommand.run(rest)
        case "watch": code = WatchCommand.run(rest)
        case "mock-facebook": code = runMockFacebookCommand(rest)
        case "login": code = LoginCommand.run(rest)
        case "logout": code = LogoutCommand.run(rest)
        case "upload": code = UploadCommand.run(rest)
        case "help", "--help", "-h": Terminal.write(usage, to: 1); code = 0
        case "--version", "version": Terminal.write("photowall \(version)\n", to: 1); code = 0
        default:
            Terminal.write("photowall: unknown command '\(command)'\n\n" + usage, to: 2)
            code = 64
        }
        exit(code)
    }
}

/// Writes to stdout/stderr with `write(2)` (Swift 6 forbids the libc `stdout` global).
enum Terminal {
    static func write(_ text: String, to fd: Int32) {
        var t = text
        _ = t.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }
}
