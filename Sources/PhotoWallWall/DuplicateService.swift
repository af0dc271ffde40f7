import PhotoWallCore
import PhotoWallServices
import PhotoWallStorage

/// The upload's duplicate check: which of the caller's files, by content, are already on the wall
/// as the caller's own `WallImage`s (`photowall upload` skips those unless `--allow-duplicate`).
///
/// Only the caller's files (`FileRecord.owner`) and the caller's images (`user`) count: another
/// user's identical photo is not reported, and a file uploaded but never posted is not a duplicate.
/// Two index probes: `_FILES` by (`owner`, `sha256`), then `WallImage` by `image.name`.
public struct DuplicateService: Sendable {
    /// The wall classes' objects, read by the master's rights, scoped to the caller here.
    let objects: any ObjectStore
    /// File metadata: the caller's files by content.
    let fileRecords: any FileRecordStore
    /// Digests per call.
    public static let maxDigests = 1000

    public init(objects: any ObjectStore, fileRecords: any FileRecordStore) { self.objects = objects; self.fileRecords = fileRecords }

    /// `POST /functions/duplicates {"sha256": ["<64 lowercase hex>", …]}`.
    /// - Returns: an array with, for each digest (in the order asked, once each) of which the caller
    ///   has a posted photo, the newest such photo: `{"sha256": String, "objectId": String, "createdAt": ISO date}`.
    ///   Digests without one are left out.
    /// - Throws: 209 without a session (the master key alone included); 142 when `sha256` is not an
    ///   array of at most 1000 lowercase hex SHA-256 digests.
    public func duplicates(params: [String: JSON], auth: AuthContext) throws(ParseError) -> JSON {
        guard let user = auth.user else { throw ParseError(.invalidSessionToken, "Session token required.") }
        guard let list = params["sha256"]?.arrayValue else {
            throw ParseError(.validationError, "sha256 must be an array of SHA-256 digests (64 lowercase hex digits).")
        }
        guard list.count <= Self.maxDigests else {
            throw ParseError(.validationError, "sha256 has \(list.count) digests; at most \(Self.maxDigests) per call.")
        }
        var digests: [String] = []
        var seen = Set<String>()
        for (i, value) in list.enumerated() {
            guard let d = value.stringValue, Self.isDigest(d) else {
                throw ParseError(.validationError, "sha256[\(i)] is not a SHA-256 digest (64 lowercase hex digits).")
            }
            if seen.insert(d).inserted { digests.append(d) }
        }
        let files = try fileRecords.files(ownedBy: user.objectId, sha256: digests)
        let digestOfName = Dictionary(files.map { ($0.name, $0.sha256) }, uniquingKeysWith: { a, _ in a })
        var newest: [String: StoredObject] = [:]
        let names = digestOfName.keys.sorted()
        for start in stride(from: 0, to: names.count, by: 500) {
            let chunk = names[start..<min(start + 500, names.count)]
            // By `image` alone, so the image-name index is the one probed (the caller's photos can be
            // many, the photos naming these files are few); the author is checked here.
            let images = try objects.find(StoredQuery(
                className: WallSchema.imageClass, predicate: .inList("image", chunk.map { .file(name: $0) }, negated: false), readers: nil))
            for image in images where image.fields["user"]?["objectId"]?.stringValue == user.objectId {
                guard let name = image.fields["image"]?["name"]?.stringValue, let d = digestOfName[name] else { continue }
                if let other = newest[d], (other.createdAt.millisecondsSince1970, other.objectId) >= (image.createdAt.millisecondsSince1970, image.objectId) {
                    continue
                }
                newest[d] = image
            }
        }
        return .array(digests.compactMap { d in
            newest[d].map { ["sha256": .string(d), "objectId": .string($0.objectId), "createdAt": .string($0.createdAt.iso)] }
        })
    }

    /// 64 lowercase hex digits.
    static func isDigest(_ s: String) -> Bool {
        s.utf8.count == 64 && s.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
