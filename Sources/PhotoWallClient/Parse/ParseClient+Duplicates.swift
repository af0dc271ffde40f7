import PhotoWallCore

/// A photo of the caller's already on the wall with the same content as a local file.
public struct PostedPhoto: Sendable, Hashable {
    /// Lowercase hex SHA-256 of the content.
    public var sha256: String
    /// The `WallImage`'s objectId.
    public var objectId: String
    /// When it was posted (ISO 8601, as the server sent it).
    public var createdAt: String
}

extension ParseClient {
    /// The caller's newest posted photo for each of `digests`, from `POST /functions/duplicates`
    /// (asked 1000 digests at a time).
    /// - Parameter digests: lowercase hex SHA-256 of the files (see `sha256Hex(ofFile:)`).
    /// - Returns: the photos found, by digest; nil when the server has no such function (Parse 141:
    ///   a server from before the check).
    /// - Throws: `.unauthorized` (209) when the session is no longer valid; `.rejected`; network errors.
    public func postedPhotos(sha256 digests: [String]) throws(ClientError) -> [String: PostedPhoto]? {
        var found: [String: PostedPhoto] = [:]
        for start in stride(from: 0, to: digests.count, by: 1000) {
            let chunk = digests[start..<min(start + 1000, digests.count)]
            let result: JSON
            do {
                result = try callFunction("duplicates", params: ["sha256": .array(chunk.map { .string($0) })])
            } catch {
                if error.parseCode == 141 { return nil }
                throw error
            }
            for entry in result.arrayValue ?? [] {
                guard let d = entry["sha256"]?.stringValue, let id = entry["objectId"]?.stringValue else { continue }
                found[d] = PostedPhoto(sha256: d, objectId: id, createdAt: entry["createdAt"]?.stringValue ?? "")
            }
        }
        return found
    }

    /// Lowercase hex SHA-256 of the file at `path`, read once front to back in 1 MiB pieces.
    /// - Throws: `.fileError` when it can't be opened or read.
    public static func sha256Hex(ofFile path: String) throws(ClientError) -> String {
        let file = try SourceFile(path: path)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        return try file.digest(.sha256, offset: 0, length: file.size, buffer: &buffer).hexString
    }
}
