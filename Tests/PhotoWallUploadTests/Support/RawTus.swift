import Foundation
import PhotoWallCrypto
import PhotoWallTesting

/// Raw tus requests over `TestHTTPClient` (one keep-alive connection), for protocol tests that
/// need exact headers or a half-sent body.
struct RawTus {
    let server: ParseTestServer
    let token: String
    let client: TestHTTPClient

    init(_ server: ParseTestServer, token: String) throws {
        self.server = server
        self.token = token
        client = try TestHTTPClient(port: server.port)
    }

    func headers(_ extra: [(String, String)] = [], tusVersion: String? = "1.0.0") -> [(String, String)] {
        var h = [("X-Parse-Application-Id", server.appId), ("X-Parse-Session-Token", token)]
        if let tusVersion { h.append(("Tus-Resumable", tusVersion)) }
        return h + extra
    }

    /// `POST /parse/uploads`. - Returns: the response and the upload's path (from `Location`).
    func create(length: Int, name: String = "blob.bin", body: [UInt8]? = nil, extra: [(String, String)] = []) throws -> (TestHTTPResponse, String) {
        var h = headers([("Upload-Length", "\(length)"), ("Upload-Metadata", "filename \(Data(name.utf8).base64EncodedString())")] + extra)
        if body != nil { h.append(("Content-Type", "application/offset+octet-stream")) }
        let r = try client.request("POST", "/parse/uploads", headers: h, body: body)
        return (r, Self.path(of: r.header("Location") ?? ""))
    }

    func patch(_ path: String, offset: Int, body: [UInt8], checksum: String? = nil,
               contentType: String = "application/offset+octet-stream", extra: [(String, String)] = []) throws -> TestHTTPResponse {
        var h = headers([("Upload-Offset", "\(offset)"), ("Content-Type", contentType)] + extra)
        if let checksum { h.append(("Upload-Checksum", checksum)) }
        return try client.request("PATCH", path, headers: h, body: body)
    }

    func head(_ path: String) throws -> TestHTTPResponse {
        try client.request("HEAD", path, headers: headers())
    }

    /// `sha256 <base64>` (or sha1) of `bytes`, as `Upload-Checksum` wants it.
    static func checksum(_ bytes: [UInt8], _ algorithm: Digest.Algorithm = .sha256) -> String {
        let name = algorithm == .sha1 ? "sha1" : "sha256"
        return "\(name) \(Data(Digest.hash(algorithm, bytes)).base64EncodedString())"
    }

    /// The path (`/parse/uploads/<id>`) of an absolute upload URL.
    static func path(of url: String) -> String {
        guard let r = url.range(of: "/parse/") else { return url }
        return String(url[r.lowerBound...])
    }
}
