internal import PhotoWallCurl
#if canImport(Glibc)
import Glibc
#endif

/// One S3 request before signing.
struct S3Request {
    enum Body {
        case bytes([UInt8])
        /// `length` bytes of `fd` at `offset`, read with `pread`.
        case file(fd: Int32, offset: Int64, length: Int64)
    }
    var method: String
    /// nil: the bucket itself.
    var key: String?
    var query: [(String, String)] = []
    var headers: [(String, String)] = []
    var body: Body?
    /// Hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
    var payloadHash = SigV4Signer.emptyPayloadHash
    /// A 2xx body goes to this descriptor.
    var responseFile: Int32?
}

/// A response with a 2xx status.
struct Response {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Bytes written to `S3Request.responseFile`.
    var fileBytes: Int64

    func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}

extension S3Client {
    /// `/BUCKET[/KEY]`, each key byte `UriEncode`d except `/`.
    func encodedPath(_ key: String?) -> String {
        let bucket = "/" + SigV4Signer.uriEncode(configuration.bucket, encodeSlash: true)
        guard let key else { return bucket }
        return bucket + "/" + SigV4Signer.uriEncode(key, encodeSlash: false)
    }

    /// Signs and sends `request`, retrying per `configuration.maxAttempts`.
    ///
    /// Retries happen for a failed connection (nothing was sent) always, and for a broken
    /// transfer or a 5xx only when `idempotent`. Each attempt is signed afresh.
    /// - Returns: the 2xx response.
    /// - Throws: `S3Error` with S3's code for an error body, `.http(status)` without one, or a
    ///   local code; `attempts` says how many were made.
    func send(_ request: S3Request, operation: String, idempotent: Bool, maxResponseBytes: Int = 1 << 20) throws(S3Error) -> Response {
        let path = encodedPath(request.key)
        var url = configuration.endpoint + path
        if !request.query.isEmpty { url += "?" + SigV4Signer.canonicalQuery(request.query) }
        let fileStart: off_t? = request.responseFile.map { lseek($0, 0, SEEK_CUR) }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try withHandle { (handle) throws(S3Error) -> Response in
                    try once(handle, request, url: url, path: path, operation: operation, maxResponseBytes: maxResponseBytes)
                }
            } catch {
                var e = error
                e.attempts = attempt
                let retryable = e.code == .connectionFailed || (idempotent && e.isTransient)
                guard retryable, attempt < configuration.maxAttempts else { throw e }
                if let fd = request.responseFile, let start = fileStart, start >= 0 {
                    guard ftruncate(fd, start) == 0, lseek(fd, start, SEEK_SET) == start else { throw e }
                }
                let base = configuration.retryBaseDelayMilliseconds << (attempt - 1)
                let delay = base / 2 + Int.random(in: 0...max(1, base / 2))
                usleep(useconds_t(delay * 1000))
            }
        }
    }

    private func once(_ handle: EasyHandle, _ request: S3Request, url: String, path: String, operation: String,
                      maxResponseBytes: Int) throws(S3Error) -> Response {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let signed = signer.sign(method: request.method, host: host, encodedPath: path, query: request.query,
                                 headers: request.headers, payloadHash: request.payloadHash, time: Int(time.tv_sec))
        var headers = [(name: String, value: String)]()
        headers.append((name: "Host", value: host))
        for (n, v) in request.headers + signed { headers.append((name: n, value: v)) }
        let body: RequestBody? = request.body.map {
            switch $0 {
            case .bytes(let b): return .bytes(b)
            case .file(let fd, let offset, let length): return .file(fd: fd, offset: offset, length: length)
            }
        }
        handle.maxResponseBodyBytes = maxResponseBytes
        let timeouts = Timeouts(connectMilliseconds: configuration.connectTimeoutMilliseconds, stallSeconds: configuration.stallTimeoutSeconds)
        let r: HTTPResponse
        let fileBefore: off_t = request.responseFile.map { lseek($0, 0, SEEK_CUR) } ?? 0
        do {
            r = try handle.perform(HTTPRequest(method: request.method, url: url, headers: headers, body: body),
                                   timeouts: timeouts, responseFile: request.responseFile)
        } catch {
            let code: S3Error.Code
            switch error.code {
            case .unreachable: code = .connectionFailed
            case .transport: code = .transport
            case .fileError: code = .fileError
            case .responseTooLarge: code = .invalidResponse
            case .badURL, .cancelled, .internalError: code = .internalError
            }
            throw S3Error(code, error.message, operation: operation, systemError: error.systemError)
        }
        guard (200..<300).contains(r.status) else { throw Self.error(from: r, operation: operation) }
        let fileBytes: Int64 = request.responseFile.map { Int64(lseek($0, 0, SEEK_CUR) - fileBefore) } ?? 0
        return Response(status: r.status, headers: r.headers, body: r.body, fileBytes: fileBytes)
    }

    /// The `S3Error` for a non-2xx response: `<Error><Code>…</Code><Message>…</Message></Error>`
    /// when the body has it, else `HTTP<status>`.
    static func error(from r: HTTPResponse, operation: String) -> S3Error {
        if let root = try? S3XML.parse(r.body), root.name == "Error", let code = root.text("Code"), !code.isEmpty {
            return S3Error(S3Error.Code(rawValue: code), root.text("Message") ?? "", httpStatus: r.status, operation: operation)
        }
        let code: S3Error.Code
        switch r.status {
        case 404 where operation.hasPrefix("HeadObject") || operation.hasPrefix("GetObject"): code = .noSuchKey
        case 404 where operation.hasPrefix("HeadBucket"): code = .noSuchBucket
        default: code = .http(r.status)
        }
        return S3Error(code, "", httpStatus: r.status, operation: operation)
    }
}
