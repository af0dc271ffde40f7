import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// What an interrupted `photowall upload` of one file had done, so running the same command
/// again picks up where it stopped: the tus upload URL, then the Parse file, then the
/// `WallImage`, then the comment. Removed once the file is fully done.
///
/// Stored as JSON in `$XDG_CACHE_HOME/photowall/uploads/<key>.json` (mode 0600), where the key
/// hashes server + absolute path + size + mtime; the same fields are stored and compared on load,
/// so an edited file (new size or mtime) starts a new upload.
struct UploadResumeState: Equatable {
    var server: String
    var path: String
    var size: Int64
    /// Modification time in nanoseconds since 1970.
    var mtimeNanoseconds: Int64
    var uploadURL: String?
    var fileName: String?
    var fileURL: String?
    var wallImageId: String?
    var commentId: String?

    var json: JSON {
        var o: [String: JSON] = ["server": .string(server), "path": .string(path), "size": .number(Double(size)),
                                 "mtimeNs": .string(String(mtimeNanoseconds))]
        if let uploadURL { o["uploadURL"] = .string(uploadURL) }
        if let fileName { o["fileName"] = .string(fileName) }
        if let fileURL { o["fileURL"] = .string(fileURL) }
        if let wallImageId { o["wallImageId"] = .string(wallImageId) }
        if let commentId { o["commentId"] = .string(commentId) }
        return .object(o)
    }

    init(server: String, path: String, size: Int64, mtimeNanoseconds: Int64) {
        self.server = server; self.path = path; self.size = size; self.mtimeNanoseconds = mtimeNanoseconds
    }

    init?(_ j: JSON) {
        guard let server = j["server"]?.stringValue, let path = j["path"]?.stringValue, let size = j["size"]?.intValue,
              let mtime = j["mtimeNs"]?.stringValue.flatMap({ Int64($0) }) else { return nil }
        self.init(server: server, path: path, size: Int64(size), mtimeNanoseconds: mtime)
        uploadURL = j["uploadURL"]?.stringValue
        fileName = j["fileName"]?.stringValue
        fileURL = j["fileURL"]?.stringValue
        wallImageId = j["wallImageId"]?.stringValue
        commentId = j["commentId"]?.stringValue
    }

    /// Where this file's state lives.
    var storePath: String {
        // FNV-1a 64 of the identifying fields: a short file name; collisions only cost a fresh
        // upload because `load` compares the fields themselves.
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in "\(server)\n\(path)\n\(size)\n\(mtimeNanoseconds)".utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        let hex = String(h, radix: 16)
        return UploadResumeState.directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex + ".json"
    }

    static var directory: String { ClientPaths.cacheDirectory + "/uploads" }

    /// The stored state for the same server, path, size and mtime, else a fresh one.
    static func load(server: String, path: String, size: Int64, mtimeNanoseconds: Int64) -> UploadResumeState {
        let fresh = UploadResumeState(server: server, path: path, size: size, mtimeNanoseconds: mtimeNanoseconds)
        guard let bytes = ClientPaths.read(fresh.storePath), let j = try? JSON.parse(bytes), let stored = UploadResumeState(j),
              stored.server == server, stored.path == path, stored.size == size, stored.mtimeNanoseconds == mtimeNanoseconds else {
            return fresh
        }
        return stored
    }

    /// Writes the state (best effort: a failure only loses resumability).
    func save() {
        ClientPaths.makeDirectories(Self.directory)
        _ = ClientPaths.writeAtomically(storePath, json.serialized + [10], mode: 0o600)
    }

    func remove() { unlink(storePath) }
}
