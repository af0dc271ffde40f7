/// The few MIME types a photo wall meets, both ways (parse-server uses the `mime` package).
enum MimeTypes {
    static let byExtension: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "heif": "image/heif", "hif": "image/heif", "avif": "image/avif", "svg": "image/svg+xml",
        "bmp": "image/bmp", "tif": "image/tiff",
        "tiff": "image/tiff", "txt": "text/plain", "json": "application/json", "pdf": "application/pdf",
        "mp4": "video/mp4", "mov": "video/quicktime", "html": "text/html", "css": "text/css", "js": "text/javascript",
        "bin": "application/octet-stream",
    ]
    static let extensionByType: [String: String] = [
        "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp", "image/heic": "heic",
        "image/heif": "heif", "image/avif": "avif", "text/plain": "txt", "application/json": "json", "application/pdf": "pdf", "video/mp4": "mp4",
    ]

    static func type(forName name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return byExtension[name[name.index(after: dot)...].lowercased()]
    }
}
