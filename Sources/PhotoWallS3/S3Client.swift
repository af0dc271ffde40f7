internal import PhotoWallCurl
import PhotoWallCrypto
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A client for one S3 bucket (path-style addressing, SigV4 header auth) over libcurl.
///
/// Thread-safe: each request borrows a libcurl handle from a small pool (connections are kept
/// alive and reused) and runs on the caller's thread, blocking it. Idempotent requests are
/// retried with exponential backoff on connection failures and 5xx responses.
///
/// ```swift
/// let s3 = S3Client(S3Configuration(endpoint: "http://127.0.0.1:8333", region: "us-east-1",
///                                   bucket: "photos", credentials: creds))
/// _ = try s3.putObject(key: "a/b.jpg", bytes: data, contentType: "image/jpeg")
/// let info = try s3.headObject(key: "a/b.jpg")     // S3ObjectInfo? (nil: no such key)
/// ```
/// - Source: Amazon S3 API reference (PutObject, GetObject, HeadObject, DeleteObject,
///   CreateBucket, HeadBucket, ListObjectsV2, and the multipart operations in S3Client+Multipart.swift).
public final class S3Client: Sendable {
    /// Endpoint, bucket, credentials, timeouts and retry policy (fixed for the client's life).
    public let configuration: S3Configuration
    let signer: SigV4Signer
    let host: String
    private let idle = Mutex<[PooledHandle]>([])

    /// Makes no request: use `bucketExists()` to check the endpoint and credentials.
    public init(_ configuration: S3Configuration) {
        self.configuration = configuration
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        host = configuration.hostHeader
    }

    /// A presigned GetObject URL for `key`: anyone holding it can read the object (with `Range`,
    /// conditional requests) until it expires, without credentials. Makes no request.
    /// - Parameters:
    ///   - expiresSeconds: 1–604800.
    ///   - contentType, contentDisposition: sent back as the response's headers instead of the
    ///     stored ones (`response-content-type`, `response-content-disposition`), when given.
    /// - Source: Amazon S3 API reference, GetObject (response-* overrides) and sigv4-query-string-auth.
    public func presignedGetURL(key: String, expiresSeconds: Int, contentType: String? = nil,
                                contentDisposition: String? = nil) -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var overrides: [(String, String)] = []
        if let contentType { overrides.append(("response-content-type", contentType)) }
        if let contentDisposition { overrides.append(("response-content-disposition", contentDisposition)) }
        let path = encodedPath(key)
        let query = signer.presign(method: "GET", host: host, encodedPath: path, query: overrides,
                                   expiresSeconds: expiresSeconds, time: Int(time.tv_sec))
        return configuration.endpoint + path + "?" + SigV4Signer.canonicalQuery(query)
    }

    // MARK: objects

    /// PutObject from memory.
    /// - Parameters:
    ///   - key: the object key (any UTF-8; encoded per SigV4 `UriEncode`).
    ///   - bytes: the whole body; its SHA-256 is signed.
    ///   - contentType: stored as the object's `Content-Type` (default `application/octet-stream`).
    /// - Returns: the object's ETag, quotes removed.
    /// - Throws: `S3Error` (e.g. `.noSuchBucket`, `.signatureDoesNotMatch`, `.connectionFailed`).
    public func putObject(key: String, bytes: [UInt8], contentType: String? = nil) throws(S3Error) -> String {
        let r = try send(S3Request(method: "PUT", key: key, headers: contentType.map { [("Content-Type", $0)] } ?? [],
                                   body: .bytes(bytes), payloadHash: SigV4Signer.hexSHA256(bytes)),
                         operation: "PutObject \(key)", idempotent: true)
        return try etag(r, "PutObject \(key)")
    }

    /// PutObject streamed from an open file: `length` bytes at `offset`, read with `pread`
    /// (never loaded whole), sent with `x-amz-content-sha256: UNSIGNED-PAYLOAD`.
    /// - Parameters:
    ///   - fileDescriptor: open for reading for the whole call; its offset is not moved.
    ///   - offset, length: the region, in bytes (S3 takes up to 5 GiB in one PutObject).
    /// - Returns: the ETag, quotes removed.
    /// - Throws: `S3Error`; `.fileError` when the file can't be read.
    public func putObject(key: String, fileDescriptor: Int32, offset: Int64 = 0, length: Int64,
                          contentType: String? = nil) throws(S3Error) -> String {
        let r = try send(S3Request(method: "PUT", key: key, headers: contentType.map { [("Content-Type", $0)] } ?? [],
                                   body: .file(fd: fileDescriptor, offset: offset, length: length), payloadHash: SigV4Signer.unsignedPayload),
                         operation: "PutObject \(key)", idempotent: true)
        return try etag(r, "PutObject \(key)")
    }

    /// GetObject into memory.
    /// - Parameters:
    ///   - range: inclusive byte range (`Range: bytes=a-b`); nil for the whole object.
    ///   - maxBytes: refuse bodies larger than this (default 256 MiB) with `.invalidResponse`.
    /// - Returns: the body (the requested range only, when given).
    /// - Throws: `S3Error` `.noSuchKey` (404), `.invalidRange` (416), transport codes.
    public func getObject(key: String, range: ClosedRange<Int64>? = nil, maxBytes: Int = 256 << 20) throws(S3Error) -> [UInt8] {
        var req = S3Request(method: "GET", key: key)
        if let range { req.headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound)")) }
        return try send(req, operation: "GetObject \(key)", idempotent: true, maxResponseBytes: maxBytes).body
    }

    /// GetObject streamed into an open file, written at the descriptor's current offset (a
    /// retried attempt truncates back to it first).
    /// - Parameters:
    ///   - range: inclusive byte range; nil for the whole object.
    ///   - fileDescriptor: open for writing (and seekable, for retries).
    /// - Returns: the number of bytes written.
    /// - Throws: `S3Error` `.noSuchKey`, `.invalidRange`, `.fileError` (write failed), transport codes.
    public func getObject(key: String, range: ClosedRange<Int64>? = nil, toFileDescriptor fileDescriptor: Int32) throws(S3Error) -> Int64 {
        var req = S3Request(method: "GET", key: key)
        if let range { req.headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound)")) }
        req.responseFile = fileDescriptor
        let r = try send(req, operation: "GetObject \(key)", idempotent: true)
        return r.fileBytes
    }

    /// HeadObject.
    /// - Returns: size, ETag and type; nil when the key does not exist (404).
    /// - Throws: `S3Error` for anything but 200 and 404 (403 → `.http(403)`: HEAD has no error body).
    public func headObject(key: String) throws(S3Error) -> S3ObjectInfo? {
        let r: Response
        do {
            r = try send(S3Request(method: "HEAD", key: key), operation: "HeadObject \(key)", idempotent: true)
        } catch where error.httpStatus == 404 {
            return nil
        }
        guard let length = r.header("Content-Length").flatMap({ Int64($0) }) else {
            throw S3Error(.invalidResponse, "no Content-Length", httpStatus: r.status, operation: "HeadObject \(key)")
        }
        return S3ObjectInfo(key: key, byteCount: length, etag: Self.unquote(r.header("ETag") ?? ""),
                            contentType: r.header("Content-Type"), lastModified: r.header("Last-Modified"))
    }

    /// DeleteObject. S3 answers 204 whether or not the key existed (use `headObject` to know).
    /// - Throws: `S3Error` (`.noSuchBucket`, auth, transport).
    public func deleteObject(key: String) throws(S3Error) {
        _ = try send(S3Request(method: "DELETE", key: key), operation: "DeleteObject \(key)", idempotent: true)
    }

    /// ListObjectsV2: one page of keys under `prefix`, in UTF-8 binary order.
    /// - Parameters:
    ///   - prefix: only keys starting with it ("" for all).
    ///   - continuationToken: `nextContinuationToken` of the previous page; nil for the first.
    ///   - maxKeys: 1–1000 keys per page.
    /// - Returns: the page; `nextContinuationToken` is nil on the last page.
    /// - Throws: `S3Error`; `.invalidResponse` for an unreadable body.
    public func listObjectsV2(prefix: String = "", continuationToken: String? = nil, maxKeys: Int = 1000) throws(S3Error) -> S3ObjectList {
        var query = [("list-type", "2"), ("max-keys", "\(maxKeys)")]
        if !prefix.isEmpty { query.append(("prefix", prefix)) }
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        let op = "ListObjectsV2 \(prefix)"
        let root = try xml(try send(S3Request(method: "GET", key: nil, query: query), operation: op, idempotent: true), op)
        let objects = root.all("Contents").map {
            S3ObjectInfo(key: $0.text("Key") ?? "", byteCount: Int64($0.text("Size") ?? "") ?? 0,
                         etag: Self.unquote($0.text("ETag") ?? ""), contentType: nil, lastModified: $0.text("LastModified"))
        }
        let truncated = root.text("IsTruncated") == "true"
        return S3ObjectList(objects: objects, nextContinuationToken: truncated ? root.text("NextContinuationToken") : nil)
    }

    /// Every key under `prefix` (follows continuation tokens).
    /// - Throws: `S3Error`.
    public func listAllObjects(prefix: String = "") throws(S3Error) -> [S3ObjectInfo] {
        var all: [S3ObjectInfo] = []
        var token: String?
        repeat {
            let page = try listObjectsV2(prefix: prefix, continuationToken: token)
            all += page.objects
            token = page.nextContinuationToken
        } while token != nil
        return all
    }

    // MARK: bucket

    /// HeadBucket: checks that the bucket exists and the credentials may use it.
    /// - Returns: false when the bucket does not exist (404).
    /// - Throws: `S3Error` `.http(403)` for refused credentials, transport codes when unreachable.
    public func bucketExists() throws(S3Error) -> Bool {
        do {
            _ = try send(S3Request(method: "HEAD", key: nil), operation: "HeadBucket \(configuration.bucket)", idempotent: true)
            return true
        } catch where error.httpStatus == 404 {
            return false
        }
    }

    /// CreateBucket when missing (tests, bootstrap). Owning it already is success.
    /// - Throws: `S3Error` (e.g. `BucketAlreadyExists` when someone else owns the name).
    public func createBucketIfMissing() throws(S3Error) {
        if try bucketExists() { return }
        var body: [UInt8] = []
        if configuration.region != "us-east-1" {
            body = Array("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>\(S3XML.escape(configuration.region))</LocationConstraint></CreateBucketConfiguration>".utf8)
        }
        do {
            _ = try send(S3Request(method: "PUT", key: nil, body: body.isEmpty ? nil : .bytes(body), payloadHash: SigV4Signer.hexSHA256(body)),
                         operation: "CreateBucket \(configuration.bucket)", idempotent: true)
        } catch where error.code == .bucketAlreadyOwnedByYou {
            return
        }
    }

    // MARK: helpers

    static func unquote(_ s: String) -> String {
        s.count >= 2 && s.hasPrefix("\"") && s.hasSuffix("\"") ? String(s.dropFirst().dropLast()) : s
    }

    func etag(_ r: Response, _ op: String) throws(S3Error) -> String {
        guard let e = r.header("ETag") else { throw S3Error(.invalidResponse, "no ETag in the response", httpStatus: r.status, operation: op) }
        return Self.unquote(e)
    }

    func xml(_ r: Response, _ op: String) throws(S3Error) -> XMLNode {
        do { return try S3XML.parse(r.body) } catch {
            throw S3Error(.invalidResponse, "unreadable XML: \(error)", httpStatus: r.status, operation: op)
        }
    }
}

/// One object's metadata, from HeadObject or a listing.
public struct S3ObjectInfo: Sendable, Equatable {
    public var key: String
    /// Size in bytes.
    public var byteCount: Int64
    /// Without quotes. For single PUTs the hex MD5; for multipart uploads `<md5 of md5s>-<parts>`.
    public var etag: String
    /// HeadObject only.
    public var contentType: String?
    /// As S3 sent it (HTTP date for HEAD, ISO 8601 in listings).
    public var lastModified: String?
}

/// One page of ListObjectsV2.
public struct S3ObjectList: Sendable {
    public var objects: [S3ObjectInfo]
    /// Pass to the next call; nil on the last page.
    public var nextContinuationToken: String?
}

/// A pooled libcurl handle.
/// @unchecked Sendable: the handle is only touched by the one thread that took it out of
/// `S3Client.idle` (under its Mutex) until it puts it back; the pool never hands it out twice.
final class PooledHandle: @unchecked Sendable {
    let handle: EasyHandle
    init(_ handle: EasyHandle) { self.handle = handle }
}

extension S3Client {
    /// Borrows a handle (a kept-alive connection when one is idle), runs `body`, returns it.
    func withHandle<T>(_ body: (EasyHandle) throws(S3Error) -> T) throws(S3Error) -> T {
        let pooled: PooledHandle
        if let h = idle.withLock({ $0.popLast() }) {
            pooled = h
        } else {
            do { pooled = PooledHandle(try EasyHandle()) } catch {
                throw S3Error(.internalError, error.message, operation: "curl_easy_init")
            }
        }
        defer {
            let max = configuration.maxIdleConnections
            idle.withLock { if $0.count < max { $0.append(pooled) } }
        }
        return try body(pooled.handle)
    }
}
