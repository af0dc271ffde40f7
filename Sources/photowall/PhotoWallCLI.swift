import PhotoWallCore
import PhotoWallMockFacebook
#if canImport(Glibc)
import Glibc
#endif

/// `photowall COMMAND …`: the server and its tools.
@main
struct PhotoWallCLI {
    static let usage = """
        usage: photowall COMMAND [options]

        commands:
          serve       run the Parse-compatible API server (photowall serve --help)
          thumbnail   make a thumbnail: photowall thumbnail IN OUT [--size N] [--format jpeg|png] [--quality Q]
          mock-facebook  mock Facebook login and Graph API for development and tests (photowall mock-facebook --help)
          feed        print your wall: photowall feed [--limit N] [--json]
          comment     comment on a photo: photowall comment IMAGE_ID TEXT
          seed-demo   fill a data folder with a demo wall: photowall seed-demo --users N --images M --friends-per-user K
          samples     render photo-like sample images with EXIF orientations 1-8: photowall samples OUTDIR
          login       log in and store the session: photowall login [USERNAME] [--password P] [--server URL]
          logout      end the stored session: photowall logout
          upload      post photos to the wall (resumable): photowall upload FILE... [--comment TEXT] [--parallel N] [--json]
          help        show this text

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
        case "mock-facebook": code = runMockFacebookCommand(rest)
        case "login": code = LoginCommand.run(rest)
        case "logout": code = LogoutCommand.run(rest)
        case "upload": code = UploadCommand.run(rest)
        case "help", "--help", "-h": Terminal.write(usage, to: 1); code = 0
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
        t.withUTF8 { buf in
            var off = 0
            while off < buf.count {
                let n = Glibc.write(fd, buf.baseAddress! + off, buf.count - off)
                if n <= 0 { break }
                off += n
            }
        }
    }
}
