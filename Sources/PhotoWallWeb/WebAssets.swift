import Foundation
import PhotoWallCrypto

/// The browser wall's static files (HTML, CSS, JavaScript, SVG), read once into memory at start.
///
/// Only files found under the root at load time are served, by exact relative path, so no request
/// path can reach outside it (`..`, encoded slashes and symlinks out of the tree are never looked up).
/// Hidden files are skipped.
public struct WebAssets: Sendable {
    /// One file ready to send.
    public struct Asset: Sendable {
        public var bytes: [UInt8]
        /// e.g. `text/html; charset=utf-8`.
        public var contentType: String
        /// A strong validator: `"` + the first 16 bytes of the SHA-256 in hex + `"`.
        public var etag: String
    }

    /// Relative path (`app.js`, `icons/x.svg`) → file.
    public let files: [String: Asset]
    /// Where the files came from (for the start-up banner).
    public let root: String

    /// Reads every regular, non-hidden file under `root` (at most 4 levels deep, 2 MiB each).
    /// - Throws: `CocoaError` when `root` can't be listed.
    public init(root: String) throws {
        self.root = root
        var files: [String: Asset] = [:]
        let fm = FileManager.default
        func walk(_ dir: String, _ prefix: String, depth: Int) throws {
            for name in try fm.contentsOfDirectory(atPath: dir).sorted() where !name.hasPrefix(".") {
                let path = dir + "/" + name
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: path, isDirectory: &isDir) else { continue }
                if isDir.boolValue {
                    if depth < 4 { try walk(path, prefix + name + "/", depth: depth + 1) }
                    continue
                }
                guard let data = fm.contents(atPath: path), data.count <= 2 << 20 else { continue }
                let bytes = [UInt8](data)
                let digest = Digest.hash(.sha256, bytes).prefix(16).hexString
                files[prefix + name] = Asset(bytes: bytes, contentType: Self.contentType(forName: name), etag: "\"\(digest)\"")
            }
        }
        try walk(root, "", depth: 0)
        self.files = files
    }

    /// The media type for a file name's extension; `application/octet-stream` for unknown ones.
    public static func contentType(forName name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json": return "application/json; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "ico": return "image/x-icon"
        case "txt": return "text/plain; charset=utf-8"
        case "webmanifest": return "application/manifest+json"
        default: return "application/octet-stream"
        }
    }

    /// The name of the resource bundle SwiftPM builds for this target (`<package>_<target>.resources`).
    static let bundleName = "PhotoWall_PhotoWallWeb.resources"

    /// Finds the shipped `Web` folder without trapping when it is missing.
    ///
    /// Tried in order: the SwiftPM resource bundle next to the executable (where `swift build` and
    /// `swift build -c release` put it, and where an installed copy must carry it; then read through
    /// `Bundle.module`), and the package's source folder (`Sources/PhotoWallWeb/Web`, for a binary run
    /// from its checkout after the build folder moved). `Bundle.module` alone would `fatalError` when the
    /// bundle is absent, so it is only touched once the bundle is known to exist.
    /// - Returns: An absolute folder path, or nil when neither exists (then pass `--web-root`).
    public static func defaultRoot() -> String? {
        let fm = FileManager.default
        let besideExecutable = Bundle.main.bundleURL.appendingPathComponent(bundleName).path
        if fm.fileExists(atPath: besideExecutable + "/Web/index.html"),
           let url = Bundle.module.url(forResource: "Web", withExtension: nil) {
            return url.path
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Web").path
        if fm.fileExists(atPath: source + "/index.html") { return source }
        return nil
    }
}
