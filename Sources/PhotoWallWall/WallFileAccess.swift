import PhotoWallCore
import PhotoWallCrypto
import PhotoWallServices
import PhotoWallStorage

/// Who may download a stored file.
///
/// Files referenced by a `WallImage` (its `image`, `thumbnail` and `display`) follow the wall's
/// visibility: they are served to the owner and the owner's friends only. Browsers can't send
/// session headers for `<img src>`, so the URLs handed to allowed viewers carry a signature:
/// `?exp=<unix seconds>&sig=<hex>`, HMAC-SHA256 over `name` and `exp` with a key derived from the
/// master key (stable across restarts and instances). A URL is valid until `exp` (at least
/// `validitySeconds`, rounded to the hour so URLs stay cacheable). Requests with a session or the
/// master key are also checked directly. Other files stay public, as in Parse.
public final class WallFileAccess: FileAccess {
    /// HMAC-SHA256 under the key derived from the master key (its padded states hashed once).
    let key: HMACSHA256Key
    let database: any ObjectStore
    let wall: WallRules
    public let validitySeconds: Int64

    public init(masterKey: String, database: any ObjectStore, wall: WallRules, validitySeconds: Int64 = 3600) {
        key = HMACSHA256Key(Crypto.hmacSHA256(key: Array(masterKey.utf8), message: Array("photowall file URLs v1".utf8)))
        self.database = database; self.wall = wall; self.validitySeconds = validitySeconds
    }

    /// `exp` and `sig` for a file name, as a query string (without `?`).
    public func signature(for name: String, now: ParseDate = .now()) -> String {
        signer(now: now).signature(for: name)
    }

    /// Signs file names with the expiry of URLs handed out at `now` (`signature(for:now:)` for each
    /// name): the expiry's text is made once, for a page that signs many URLs (the feed: three per image).
    public func signer(now: ParseDate = .now()) -> Signer {
        let seconds = now.millisecondsSince1970 / 1000
        return Signer(key: key, exp: (seconds + validitySeconds + 3599) / 3600 * 3600)
    }

    /// Signatures with one expiry (`signer(now:)`).
    public struct Signer: Sendable {
        let key: HMACSHA256Key
        /// `exp=<exp>&sig=`, and the MAC's message after the name: `\n<exp>`.
        let query: [UInt8], messageTail: [UInt8]

        init(key: HMACSHA256Key, exp: Int64) {
            self.key = key; query = Array("exp=\(exp)&sig=".utf8); messageTail = Array("\n\(exp)".utf8)
        }

        /// `exp=<unix seconds>&sig=<32 hex digits>` for `name`.
        public func signature(for name: String) -> String {
            var out: [UInt8] = []
            appendSignature(for: name, to: &out)
            return String(decoding: out, as: UTF8.self)
        }

        /// Appends `signature(for: name)`'s UTF-8 to `out` (ASCII, nothing JSON escapes), without a
        /// `String` or an array on the way: the feed writes three per image.
        public func appendSignature(for name: String, to out: inout [UInt8]) {
            out.append(contentsOf: query)
            appendMAC(name, to: &out)
        }

        /// Appends the first 16 bytes of HMAC-SHA256 over `<name>\n<exp>`, in lowercase hex.
        func appendMAC(_ name: String, to out: inout [UInt8]) {
            var name = name
            withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
                name.withUTF8 { n in
                    messageTail.withUnsafeBytes { key.mac(UnsafeRawBufferPointer(n), $0, into: digest) }
                }
                digest.prefix(16).appendHex(to: &out)
            }
        }

        /// The first 16 bytes of HMAC-SHA256 over `<name>\n<exp>`, in hex.
        func mac(_ name: String) -> String {
            var out: [UInt8] = []
            appendMAC(name, to: &out)
            return String(decoding: out, as: UTF8.self)
        }
    }

    func mac(_ name: String, _ exp: Int64) -> String { Signer(key: key, exp: exp).mac(name) }

    /// Adds signatures to the wall files of a wire-form `WallImage`, when the wall is friends-only.
    public func signWallFiles(_ object: inout [String: JSON]) {
        guard wall.visibility == .friends else { return }
        let signer = signer()  // one clock read and expiry text for the object's files
        for field in WallSchema.fileFields {
            guard case .object(var f) = object[field], let name = f["name"]?.stringValue, let url = f["url"]?.stringValue else { continue }
            f["url"] = .string(url + "?" + signer.signature(for: name))
            object[field] = .object(f)
        }
    }

    /// Whether a request may download `name`.
    /// - Parameters:
    ///   - query: the request's query parameters (`exp`, `sig`).
    ///   - auth: credentials from headers, when sent.
    ///   - objects: decides whether a session may see the photo (`ObjectService.isVisible`, as GET).
    public func mayDownload(_ name: String, query: [String: String], auth: AuthContext?, objects: ObjectService) throws(ParseError) -> Bool {
        guard wall.visibility == .friends else { return true }
        let referencing = try database.find(StoredQuery(
            className: WallSchema.imageClass,
            predicate: .or(WallSchema.fileFields.map { .compare("\($0).name", .eq, .string(name)) }),
            limit: 1, readers: nil)).first
        guard let image = referencing else { return true }  // not a wall file: public, as in Parse
        if let exp = query["exp"].flatMap({ Int64($0) }), let sig = query["sig"],
           exp >= ParseDate.now().millisecondsSince1970 / 1000,
           Crypto.constantTimeEquals(Array(sig.utf8), Array(mac(name, exp).utf8)) {
            return true
        }
        guard let auth else { return false }
        return try objects.isVisible(image, auth: auth)
    }
}
