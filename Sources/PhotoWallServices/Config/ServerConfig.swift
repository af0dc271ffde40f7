import PhotoWallCore

/// Settings of one PhotoWall app, named as parse-server names them.
public struct ServerConfig: Sendable {
    /// `X-Parse-Application-Id` every request must carry (`PARSE_SERVER_APPLICATION_ID`).
    public var appId: String { didSet { fileURLPrefixText = Self.fileURLPrefixText(publicServerURL, appId) } }
    /// Bypasses ACLs (`PARSE_SERVER_MASTER_KEY`).
    public var masterKey: String
    /// When any of these is set, one of them must match the request's key header.
    public var restAPIKey: String?
    public var clientKey: String?
    public var javascriptKey: String?
    /// Base of file URLs, e.g. `http://127.0.0.1:1337/parse` (`PARSE_PUBLIC_SERVER_URL`).
    public var publicServerURL: String { didSet { fileURLPrefixText = Self.fileURLPrefixText(publicServerURL, appId) } }
    /// URL path prefix of the API, `/parse`.
    public var mountPath: String
    /// Largest accepted file upload in bytes (`maxUploadSize`, default 20 MiB).
    public var maxUploadBytes: Int
    /// Largest accepted JSON request body in bytes (default 1 MiB).
    public var maxJSONBytes: Int
    /// Session lifetime in seconds (`sessionLength`, default one year).
    public var sessionLengthSeconds: Int64
    /// Whether clients without the master key may create classes (`allowClientClassCreation`, default false).
    public var allowClientClassCreation: Bool
    /// `limit` when a query sets none (100) and the most a query may return.
    public var defaultLimit: Int
    public var maxLimit: Int

    public init(appId: String = "photowall", masterKey: String = "photowall-master", restAPIKey: String? = nil,
                clientKey: String? = nil, javascriptKey: String? = nil,
                publicServerURL: String = "http://127.0.0.1:1337/parse", mountPath: String = "/parse",
                maxUploadBytes: Int = 20 << 20, maxJSONBytes: Int = 1 << 20,
                sessionLengthSeconds: Int64 = 31_536_000, allowClientClassCreation: Bool = false,
                defaultLimit: Int = 100, maxLimit: Int = 10_000) {
        self.appId = appId; self.masterKey = masterKey; self.restAPIKey = restAPIKey; self.clientKey = clientKey
        self.javascriptKey = javascriptKey; self.publicServerURL = publicServerURL; self.mountPath = mountPath
        self.maxUploadBytes = maxUploadBytes; self.maxJSONBytes = maxJSONBytes
        self.sessionLengthSeconds = sessionLengthSeconds; self.allowClientClassCreation = allowClientClassCreation
        self.defaultLimit = defaultLimit; self.maxLimit = maxLimit
        fileURLPrefixText = Self.fileURLPrefixText(publicServerURL, appId)
    }

    /// `fileURLJSONPrefix()`, kept up to date with `publicServerURL` and `appId`.
    private var fileURLPrefixText: [UInt8] = []

    /// The public URL of a stored file: `<publicServerURL>/files/<appId>/<percent-encoded name>`.
    public func fileURL(_ name: String) -> String {
        let app = Self.encodeURIComponent(appId), file = Self.encodeURIComponent(name)
        var url = publicServerURL
        url.reserveCapacity(url.utf8.count + app.utf8.count + file.utf8.count + 8)
        url += "/files/"
        url += app
        url += "/"
        url += file
        return url
    }

    /// The JSON text every `fileURL` starts with: the opening quote, then `<publicServerURL>/files/<appId>/`
    /// JSON-escaped, for writers of file URLs (`writeFileURL`). Made when `publicServerURL` or `appId` is
    /// set, not per response.
    public func fileURLJSONPrefix() -> [UInt8] { fileURLPrefixText }

    private static func fileURLPrefixText(_ publicServerURL: String, _ appId: String) -> [UInt8] {
        var out: [UInt8] = []
        JSON.writeString(publicServerURL + "/files/" + Self.encodeURIComponent(appId) + "/", into: &out)
        out.removeLast()  // the closing quote: the name follows
        return out
    }

    /// Appends `fileURL(name)` as a JSON string to `out`, from `prefix` (`fileURLJSONPrefix()`) and the
    /// name's UTF-8 bytes percent-encoded in place: the same text `JSON.writeString(fileURL(name))` gives
    /// (the encoded name holds only bytes JSON leaves as they are), without a `String` on the way.
    public static func writeFileURL(name: UnsafeBufferPointer<UInt8>, prefix: UnsafeBufferPointer<UInt8>, into out: inout ByteWriter) {
        out.append(prefix)
        let hex: StaticString = "0123456789ABCDEF"
        var runStart = 0, i = 0
        while i < name.count {
            // Eight bytes at a time while they all stay (a stored name is mostly hex digits, letters
            // and `_`): the byte loop, a branch per byte, was 5% of a 100-object query's CPU.
            if i + 8 <= name.count,
               allURIComponentBytes(UnsafeRawPointer(name.baseAddress! + i).loadUnaligned(as: UInt64.self)) {
                i += 8
                continue
            }
            if !isURIComponentByte(name[i]) {
                out.append(UnsafeBufferPointer(rebasing: name[runStart..<i]))
                out.append(UInt8(ascii: "%"))
                out.append(hex.utf8Start[Int(name[i] >> 4)])
                out.append(hex.utf8Start[Int(name[i] & 15)])
                runStart = i + 1
            }
            i += 1
        }
        out.append(UnsafeBufferPointer(rebasing: name[runStart..<name.count]))
        out.append(UInt8(ascii: "\""))
    }

    /// JavaScript's `encodeURIComponent`.
    public static func encodeURIComponent(_ s: String) -> String {
        // The common case (nothing to escape) checked here, where the test inlines, rather than
        // through percentEncode's closure call per byte.
        var text = s
        if text.withUTF8({ $0.allSatisfy(isURIComponentByte) }) { return text }
        return percentEncode(s, keeping: isURIComponentByte)
    }

    /// Bytes `encodeURIComponent` leaves as they are: `A-Z a-z 0-9 - _ . ! ~ * ' ( )`. One load from a
    /// 256-byte literal table per byte (`uriComponentTable`; a literal, not an array in a global, whose
    /// lazy-initialisation check per byte was 6% of a 100-object query).
    @inline(__always)
    static func isURIComponentByte(_ b: UInt8) -> Bool {
        uriComponentTable.utf8Start[Int(b)] == UInt8(ascii: "1")
    }

    /// Whether `isURIComponentByte` keeps all eight bytes of `word`: the eight table loads are ANDed
    /// and tested once (a `1` in the table is 0x31, a `0` is 0x30: bit 0 tells them apart), with no
    /// branch per byte. (Swift's `SIMD16` comparisons, tried first, were not lowered to vector code
    /// here and were many times slower than the byte loop.)
    @inline(__always)
    static func allURIComponentBytes(_ word: UInt64) -> Bool {
        let t = uriComponentTable.utf8Start
        var all: UInt8 = 1
        for k in 0..<8 { all &= t[Int(truncatingIfNeeded: word >> (8 * UInt64(k)) & 0xFF)] }
        return all & 1 != 0
    }

    /// `1` at each byte `isURIComponentByte` keeps, `0` elsewhere, from byte 0 (a 256-byte literal).
    private static var uriComponentTable: StaticString {
        "0000000000000000000000000000000001000001111001101111111111000000011111111111111111111111111000010111111111111111111111111110001000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
}
