import PhotoWallImaging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `photowall-thumbnail IN OUT [--size N] [--format auto|jpeg|png] [--quality Q] [--repeat N] [--reducing-gap G]
/// [--jpeg-scale-gap G]` (also run as `photowall thumbnail …`, which executes this program)
///
/// Makes one thumbnail of IN (JPEG, PNG, WebP, HEIC/HEIF or AVIF, by magic bytes) and writes it to
/// OUT. `--repeat N` makes the same thumbnail N times in this process and
/// prints the time per image to stderr (for benchmarks; OUT is written once).
/// `--reducing-gap G` sets `ThumbnailOptions.reducingGap` (default 2.0), `--jpeg-scale-gap G`
/// `ThumbnailOptions.jpegScaleGap` (default 1.25; 2.0 is libvips' JPEG shrink-on-load).
///
/// A program of its own that links only PhotoWallImaging and the image libraries (no Foundation,
/// no database or HTTP clients), so a thumbnail costs the imaging code's memory, not the server's
/// runtime's: the `photowall` executable maps about 20 MiB of libraries before its `main` runs.
///
/// Exit status: 0 on success; 1 with a one-line reason on stderr for bad input
/// or a failed write; 2 for a usage error.
@main
struct ThumbnailCommand {
    static func main() {
        exit(runThumbnailCommand(Array(CommandLine.arguments.dropFirst())))
    }
}

func runThumbnailCommand(_ args: [String]) -> Int32 {
    let usage = "usage: photowall-thumbnail IN OUT [--size N] [--format auto|jpeg|png] [--quality Q] [--repeat N]"
        + " [--reducing-gap G] [--jpeg-scale-gap G]"
    var positional: [String] = []
    var options = ThumbnailOptions()
    var repeats = 1
    var i = 0
    func value(_ name: String, in range: ClosedRange<Int>) -> Int? {
        guard i + 1 < args.count, let v = Int(args[i + 1]), range.contains(v) else {
            printError("photowall-thumbnail: \(name) needs an integer in \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        i += 1
        return v
    }
    func gap(_ name: String) -> Double? {
        guard i + 1 < args.count, let v = Double(args[i + 1]), (1.0...8.0).contains(v) else {
            printError("photowall-thumbnail: \(name) needs a number in 1.0...8.0")
            return nil
        }
        i += 1
        return v
    }
    while i < args.count {
        switch args[i] {
        case "--size":
            guard let v = value("--size", in: 1...16384) else { return 2 }
            options.longestEdgePixels = v
        case "--quality":
            guard let v = value("--quality", in: 1...100) else { return 2 }
            options.quality = v
        case "--repeat":
            guard let v = value("--repeat", in: 1...100_000) else { return 2 }
            repeats = v
        case "--reducing-gap":
            guard let v = gap("--reducing-gap") else { return 2 }
            options.reducingGap = v
        case "--jpeg-scale-gap":
            guard let v = gap("--jpeg-scale-gap") else { return 2 }
            options.jpegScaleGap = v
        case "--format":
            guard i + 1 < args.count, let format = ThumbnailFormat(rawValue: args[i + 1]) else {
                printError("photowall-thumbnail: --format needs auto, jpeg or png")
                return 2
            }
            options.format = format
            i += 1
        case "-h", "--help":
            print(usage)
            return 0
        default:
            if args[i].hasPrefix("--") {
                printError("photowall-thumbnail: unknown option \(args[i])\n\(usage)")
                return 2
            }
            positional.append(args[i])
        }
        i += 1
    }
    guard positional.count == 2 else {
        printError(usage)
        return 2
    }
    do {
        let start = monotonicMilliseconds()
        var thumbnail = try Thumbnailer.makeThumbnail(fromFile: positional[0], options: options)
        for _ in 1..<max(repeats, 1) {
            thumbnail = try Thumbnailer.makeThumbnail(fromFile: positional[0], options: options)
        }
        let elapsed = monotonicMilliseconds() - start
        if repeats > 1 {
            let perImage = (elapsed / Double(repeats) * 100).rounded() / 100
            printError("thumbnail: \(repeats) images in \(Int(elapsed)) ms, \(perImage) ms per image")
        }
        guard writeFile(positional[1], thumbnail.bytes) else {
            printError("photowall-thumbnail: cannot write \(positional[1]): \(String(cString: strerror(errno)))")
            return 1
        }
        return 0
    } catch {
        printError("photowall-thumbnail: \(error.message)")
        return 1
    }
}

/// Writes one line to standard error (fd 2; the C `stderr` global is not concurrency-safe in Swift 6).
private func printError(_ line: String) {
    let text = Array((line + "\n").utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

private func monotonicMilliseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
}

private func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
    guard let file = fopen(path, "wb") else { return false }
    let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    return fclose(file) == 0 && written == bytes.count
}
