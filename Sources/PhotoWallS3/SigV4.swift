import PhotoWallCore
import PhotoWallCrypto
#if canImport(Glibc)
import Glibc
#endif

/// AWS Signature Version 4 for header authentication (`Authorization: AWS4-HMAC-SHA256 …`) and
/// presigned URLs (the same signature in the query string).
///
/// The four steps of the spec: a canonical request (method, URI-encoded path, sorted encoded
/// query, sorted lower-case headers, signed header list, payload hash), a string to sign
/// (algorithm, timestamp, credential scope, SHA-256 of the canonical request), a signing key
/// (HMAC-SHA256 chained over date, region, service and `aws4_request`), and the signature (hex
/// HMAC of the string to sign).
///
/// - Source: AWS, "Signature Version 4 signing process" and "Authenticating Requests: Using the
///   Authorization Header (AWS Signature Version 4)" (Amazon S3 API reference,
///   `sig-v4-header-based-auth.html`), whose GET-object example is checked in `SigV4Tests`.
public struct SigV4Signer: Sendable {
    /// The hex SHA-256 of an empty payload.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// `x-amz-content-sha256` for a body that is not hashed (S3 only; streamed uploads).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    public var credentials: S3Credentials
    /// e.g. `us-east-1`.
    public var region: String
    /// `s3` for S3.
    public var service: String

    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials; self.region = region; self.service = service
    }

    /// Signs one request and returns the headers to add to it.
    ///
    /// - Parameters:
    ///   - method: `GET`, `PUT`, …
    ///   - host: the `Host` header exactly as sent (`host[:port]`, port only when not the default).
    ///   - encodedPath: the path as sent on the wire, already encoded with `uriEncode(_:encodeSlash: false)`
    ///     (S3 paths are encoded once, not twice).
    ///   - query: raw (unencoded) query parameters; a parameter without value has `""`.
    ///   - headers: other headers to sign (e.g. `Range`, `Content-Type`), any case.
    ///   - payloadHash: lower-case hex SHA-256 of the body, or `unsignedPayload`.
    ///   - time: seconds since 1970 (UTC); the signature is valid for 15 minutes around it.
    /// - Returns: `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` (with a session
    ///   token) and `Authorization`; `Host` is not included (the caller sends it).
    public func sign(method: String, host: String, encodedPath: String, query: [(String, String)],
                     headers: [(String, String)], payloadHash: String, time: Int) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(time)
        var added: [(String, String)] = [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }

        // Canonical headers: lower-case names, trimmed values with inner runs of spaces folded, sorted.
        var all = [(String, String)]()
        all.append(("host", host))
        for (n, v) in headers + added { all.append((n.lowercased(), Self.foldSpaces(v))) }
        all.sort { $0.0 < $1.0 }
        let canonicalHeaders = all.map { "\($0.0):\($0.1)\n" }.joined()
        let signedHeaders = all.map(\.0).joined(separator: ";")

        let canonicalRequest = [method, encodedPath, Self.canonicalQuery(query), canonicalHeaders, signedHeaders, payloadHash]
            .joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hexSHA256(Array(canonicalRequest.utf8))].joined(separator: "\n")

        let signature = Crypto.hmacSHA256(key: signingKey(day: day), message: Array(stringToSign.utf8)).hexString

        added.append(("Authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope),SignedHeaders=\(signedHeaders),Signature=\(signature)"))
        return added
    }

    /// Presigns a request into its query string (a URL anyone may use until it expires).
    ///
    /// - Parameters:
    ///   - method, host, encodedPath: as for `sign`.
    ///   - query: the request's own raw query parameters (e.g. `response-content-type`), if any.
    ///   - expiresSeconds: 1–604800 (7 days), S3's limits.
    ///   - time: seconds since 1970 (UTC) the URL is valid from.
    /// - Returns: the full raw query — `query` plus `X-Amz-Algorithm`, `X-Amz-Credential`,
    ///   `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-SignedHeaders` (`host`), `X-Amz-Security-Token` with a
    ///   session token, and `X-Amz-Signature` — to join with `canonicalQuery`. The payload is
    ///   `UNSIGNED-PAYLOAD`.
    /// - Source: Amazon S3 API reference, "Authenticating Requests: Using Query Parameters (AWS
    ///   Signature Version 4)" (sigv4-query-string-auth), whose GET example is checked in `SigV4Tests`.
    public func presign(method: String, host: String, encodedPath: String, query: [(String, String)] = [],
                        expiresSeconds: Int, time: Int) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(time)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        var params = query + [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", "\(credentials.accessKeyId)/\(scope)"),
            ("X-Amz-Date", amzDate), ("X-Amz-Expires", "\(min(max(expiresSeconds, 1), 604_800))"), ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { params.append(("X-Amz-Security-Token", token)) }
        let canonicalRequest = [method, encodedPath, Self.canonicalQuery(params), "host:\(host)\n", "host", Self.unsignedPayload]
            .joined(separator: "\n")
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hexSHA256(Array(canonicalRequest.utf8))].joined(separator: "\n")
        params.append(("X-Amz-Signature", Crypto.hmacSHA256(key: signingKey(day: day), message: Array(stringToSign.utf8)).hexString))
        return params
    }

    /// HMAC-SHA256 chained over the day, region, service and `aws4_request`, from the secret key.
    func signingKey(day: String) -> [UInt8] {
        var key = Crypto.hmacSHA256(key: Array("AWS4\(credentials.secretAccessKey)".utf8), message: Array(day.utf8))
        for part in [region, service, "aws4_request"] { key = Crypto.hmacSHA256(key: key, message: Array(part.utf8)) }
        return key
    }

    /// The canonical query string: each name and value `uriEncode`d (slash included), sorted by
    /// name then value, `name=value` joined by `&` (an empty value keeps its `=`).
    public static func canonicalQuery(_ query: [(String, String)]) -> String {
        query.map { (uriEncode($0.0, encodeSlash: true), uriEncode($0.1, encodeSlash: true)) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// SigV4's `UriEncode`: every UTF-8 byte except the unreserved `A–Z a–z 0–9 - . _ ~` becomes
    /// `%XX` (upper-case hex); `/` is kept when `encodeSlash` is false (object key paths).
    public static func uriEncode(_ s: String, encodeSlash: Bool) -> String {
        percentEncode(s) { isUnreservedURIByte($0) || (!encodeSlash && $0 == UInt8(ascii: "/")) }
    }

    /// Lower-case hex SHA-256.
    public static func hexSHA256(_ bytes: some Collection<UInt8>) -> String { Digest.hash(.sha256, bytes).hexString }

    /// `yyyyMMdd'T'HHmmss'Z'` and `yyyyMMdd`, UTC.
    static func timestamps(_ time: Int) -> (String, String) {
        var t = time_t(time)
        var tm = tm()
        gmtime_r(&t, &tm)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = "\(tm.tm_year + 1900)\(two(tm.tm_mon + 1))\(two(tm.tm_mday))"
        return (day + "T" + two(tm.tm_hour) + two(tm.tm_min) + two(tm.tm_sec) + "Z", day)
    }

    /// Trims and folds runs of spaces into one (SigV4 canonical header values).
    static func foldSpaces(_ v: String) -> String {
        v.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}
