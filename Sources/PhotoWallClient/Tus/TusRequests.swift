import PhotoWallCore
internal import PhotoWallCurl
/// The tus requests of one upload on one libcurl handle (one keep-alive connection).
struct TusRequests {
    let client: TusClient
    let handle: EasyHandle
    /// Checked about every 50 ms during every request (a long connect or HEAD included).
    var cancellation: CancellationToken?

    static let version = "1.0.0"

    static func tusHeaders(_ server: ParseServer) -> [(name: String, value: String)] {
        server.authHeaders + [(name: "Tus-Resumable", value: version)]
    }

    var timeouts: Timeouts { client.configuration.timeouts }

    /// The progress callback of requests without a body: only checks for cancellation.
    var keepGoing: ((Int64) -> Bool)? {
        guard let cancellation else { return nil }
        return { _ in !cancellation.isCancelled }
    }

    /// `POST /uploads` (tus §Creation). - Returns: the absolute upload URL from `Location`.
    func create(length: Int64, metadata: [(String, String)]) throws(ClientError) -> String {
        var headers = Self.tusHeaders(client.server)
        headers.append((name: "Upload-Length", value: "\(length)"))
        let encoded = metadata.map { "\($0.0) \(Base64.encode(Array($0.1.utf8)))" }.joined(separator: ",")
        if !encoded.isEmpty { headers.append((name: "Upload-Metadata", value: encoded)) }
        let url = client.creationURL
        let r = try handle.send(HTTPRequest(method: "POST", url: url, headers: headers), timeouts: timeouts, progress: keepGoing)
        guard r.status == 201 else { throw ClientError.from(r, action: "Creating the upload") }
        guard let location = r.header("Location"), !location.isEmpty else {
            throw ClientError(.protocolError, "The server created an upload without a Location header.", httpStatus: 201)
        }
        return Self.resolve(location, against: url)
    }

    /// `HEAD <upload>` (tus §HEAD).
    func head(_ uploadURL: String) throws(ClientError) -> UploadStatus {
        let r = try handle.send(HTTPRequest(method: "HEAD", url: uploadURL, headers: Self.tusHeaders(client.server)), timeouts: timeouts,
                                   progress: keepGoing)
        guard r.status == 200 || r.status == 204 else { throw ClientError.from(r, action: "Checking the upload") }
        guard let offset = r.header("Upload-Offset").flatMap({ Int64($0) }), offset >= 0 else {
            throw ClientError(.protocolError, "HEAD \(uploadURL) answered without Upload-Offset.", httpStatus: r.status)
        }
        return UploadStatus(offset: offset, length: r.header("Upload-Length").flatMap { Int64($0) },
                            fileName: r.header("X-Parse-File-Name"), fileURL: r.header("X-Parse-File-URL"))
    }

    /// `PATCH <upload>` with `length` bytes of `file` at `offset` (tus §PATCH, §Checksum).
    /// - Parameter progress: body bytes sent so far in this request; false aborts.
    /// - Returns: the server's new state (offset, and the Parse file once complete).
    func patch(_ uploadURL: String, file: SourceFile, offset: Int64, length: Int64, checksum: String?,
               progress: @escaping (Int64) -> Bool) throws(ClientError) -> UploadStatus {
        var headers = Self.tusHeaders(client.server)
        headers.append((name: "Upload-Offset", value: "\(offset)"))
        headers.append((name: "Content-Type", value: "application/offset+octet-stream"))
        if let checksum { headers.append((name: "Upload-Checksum", value: checksum)) }
        let request = HTTPRequest(method: "PATCH", url: uploadURL, headers: headers,
                                  body: .file(fd: file.fd, offset: offset, length: length))
        let r = try handle.send(request, timeouts: timeouts, progress: progress)
        guard r.status == 204 || r.status == 200 else {
            var e = ClientError.from(r, action: "Sending bytes \(offset)–\(offset + length)")
            if r.status == 409, let current = r.header("Upload-Offset") { e.message += " (server offset \(current))" }
            throw e
        }
        guard let newOffset = r.header("Upload-Offset").flatMap({ Int64($0) }) else {
            throw ClientError(.protocolError, "PATCH \(uploadURL) answered without Upload-Offset.", httpStatus: r.status)
        }
        return UploadStatus(offset: newOffset, length: r.header("Upload-Length").flatMap { Int64($0) },
                            fileName: r.header("X-Parse-File-Name"), fileURL: r.header("X-Parse-File-URL"))
    }

    /// An absolute URL for `location`, which may be absolute, origin-relative (`/parse/uploads/…`)
    /// or relative to `base`'s directory.
    static func resolve(_ location: String, against base: String) -> String {
        if location.hasPrefix("http://") || location.hasPrefix("https://") { return location }
        guard let schemeEnd = base.range(of: "://") else { return location }
        let afterScheme = base[schemeEnd.upperBound...]
        let origin = base[..<(afterScheme.firstIndex(of: "/") ?? base.endIndex)]
        if location.hasPrefix("/") { return origin + location }
        var dir = String(base)
        if let slash = dir.lastIndex(of: "/"), slash > schemeEnd.upperBound { dir = String(dir[...slash]) } else { dir += "/" }
        return dir + location
    }
}
