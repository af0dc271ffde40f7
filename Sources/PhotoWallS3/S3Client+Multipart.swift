/// S3 multipart uploads: parts of 5 MiB to 5 GiB (the last may be smaller), numbered 1–10000,
/// assembled in part-number order by `completeMultipartUpload`. Until then nothing is visible
/// under the key; `abortMultipartUpload` frees the parts.
///
/// ```swift
/// let id = try s3.createMultipartUpload(key: k, contentType: "video/mp4")
/// var parts: [S3CompletedPart] = []
/// for (n, chunk) in chunks.enumerated() {
///     parts.append(S3CompletedPart(partNumber: n + 1, etag: try s3.uploadPart(key: k, uploadId: id, partNumber: n + 1, bytes: chunk)))
/// }
/// _ = try s3.completeMultipartUpload(key: k, uploadId: id, parts: parts)   // or abortMultipartUpload
/// ```
/// - Source: Amazon S3 API reference: CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
///   AbortMultipartUpload, ListParts; "Amazon S3 multipart upload limits".
extension S3Client {
    /// The smallest part S3 accepts, except for the last one: 5 MiB.
    public static let minimumPartBytes = 5 << 20
    /// The highest part number: 10,000.
    public static let maximumPartNumber = 10_000

    /// CreateMultipartUpload (`POST /BUCKET/KEY?uploads`).
    /// - Returns: the upload id, for the other multipart calls.
    /// - Throws: `S3Error` (`.noSuchBucket`, auth, transport; `.invalidResponse` without an UploadId).
    public func createMultipartUpload(key: String, contentType: String? = nil) throws(S3Error) -> String {
        let op = "CreateMultipartUpload \(key)"
        let r = try send(S3Request(method: "POST", key: key, query: [("uploads", "")], headers: contentType.map { [("Content-Type", $0)] } ?? []),
                         operation: op, idempotent: false)
        guard let id = try xml(r, op).text("UploadId"), !id.isEmpty else {
            throw S3Error(.invalidResponse, "no UploadId", httpStatus: r.status, operation: op)
        }
        return id
    }

    /// UploadPart from memory (the payload's SHA-256 is signed). Uploading the same part number
    /// again replaces it, so this is retried like an idempotent request.
    /// - Parameters:
    ///   - partNumber: 1–10000.
    ///   - bytes: at least `minimumPartBytes` unless it is the last part.
    /// - Returns: the part's ETag (quotes removed), for `completeMultipartUpload`.
    /// - Throws: `S3Error` (`.noSuchUpload` when aborted or completed).
    public func uploadPart(key: String, uploadId: String, partNumber: Int, bytes: [UInt8]) throws(S3Error) -> String {
        let op = "UploadPart \(key) #\(partNumber)"
        let r = try send(S3Request(method: "PUT", key: key, query: [("partNumber", "\(partNumber)"), ("uploadId", uploadId)],
                                   body: .bytes(bytes), payloadHash: SigV4Signer.hexSHA256(bytes)),
                         operation: op, idempotent: true)
        return try etag(r, op)
    }

    /// UploadPart streamed from a region of an open file (`UNSIGNED-PAYLOAD`).
    /// - Parameters:
    ///   - fileDescriptor: open for reading for the whole call; read with `pread`.
    ///   - offset, length: the region in bytes.
    /// - Returns: the part's ETag, quotes removed.
    /// - Throws: `S3Error` (`.noSuchUpload`, `.fileError`, transport).
    public func uploadPart(key: String, uploadId: String, partNumber: Int, fileDescriptor: Int32,
                           offset: Int64, length: Int64) throws(S3Error) -> String {
        let op = "UploadPart \(key) #\(partNumber)"
        let r = try send(S3Request(method: "PUT", key: key, query: [("partNumber", "\(partNumber)"), ("uploadId", uploadId)],
                                   body: .file(fd: fileDescriptor, offset: offset, length: length), payloadHash: SigV4Signer.unsignedPayload),
                         operation: op, idempotent: true)
        return try etag(r, op)
    }

    /// CompleteMultipartUpload: makes the object visible, assembled from `parts` (sorted by
    /// part number here). S3 may answer 200 with an `<Error>` body; that is thrown too.
    /// - Returns: the object's ETag (quotes removed).
    /// - Throws: `S3Error` (`.invalidPart`, `.entityTooSmall`, `.noSuchUpload`, transport).
    public func completeMultipartUpload(key: String, uploadId: String, parts: [S3CompletedPart]) throws(S3Error) -> String {
        let op = "CompleteMultipartUpload \(key)"
        var xmlBody = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for p in parts.sorted(by: { $0.partNumber < $1.partNumber }) {
            xmlBody += "<Part><PartNumber>\(p.partNumber)</PartNumber><ETag>\"\(S3XML.escape(p.etag))\"</ETag></Part>"
        }
        xmlBody += "</CompleteMultipartUpload>"
        let body = Array(xmlBody.utf8)
        let r = try send(S3Request(method: "POST", key: key, query: [("uploadId", uploadId)], headers: [("Content-Type", "application/xml")],
                                   body: .bytes(body), payloadHash: SigV4Signer.hexSHA256(body)),
                         operation: op, idempotent: false)
        let root = try xml(r, op)
        if root.name == "Error" {
            throw S3Error(S3Error.Code(rawValue: root.text("Code") ?? "InternalError"), root.text("Message") ?? "", httpStatus: r.status, operation: op)
        }
        return Self.unquote(root.text("ETag") ?? "")
    }

    /// AbortMultipartUpload: discards the parts. Aborting an unknown upload throws `.noSuchUpload`.
    /// - Throws: `S3Error`.
    public func abortMultipartUpload(key: String, uploadId: String) throws(S3Error) {
        _ = try send(S3Request(method: "DELETE", key: key, query: [("uploadId", uploadId)]),
                     operation: "AbortMultipartUpload \(key)", idempotent: true)
    }

    /// ListParts: the parts uploaded so far (one page of up to 1000, after `partNumberMarker`).
    /// - Returns: the parts in part-number order and the marker for the next page (nil on the last).
    /// - Throws: `S3Error` (`.noSuchUpload`).
    public func listParts(key: String, uploadId: String, partNumberMarker: Int? = nil) throws(S3Error) -> S3PartList {
        let op = "ListParts \(key)"
        var query = [("uploadId", uploadId)]
        if let partNumberMarker { query.append(("part-number-marker", "\(partNumberMarker)")) }
        let root = try xml(try send(S3Request(method: "GET", key: key, query: query), operation: op, idempotent: true), op)
        let parts = root.all("Part").map {
            S3UploadedPart(partNumber: Int($0.text("PartNumber") ?? "") ?? 0, etag: Self.unquote($0.text("ETag") ?? ""),
                           byteCount: Int64($0.text("Size") ?? "") ?? 0)
        }
        let truncated = root.text("IsTruncated") == "true"
        return S3PartList(parts: parts, nextPartNumberMarker: truncated ? root.text("NextPartNumberMarker").flatMap { Int($0) } : nil)
    }
}

extension S3Client {
    /// ListMultipartUploads: one page of the bucket's multipart uploads not yet completed or aborted,
    /// keys starting with `prefix`, in key order.
    /// - Parameters:
    ///   - keyMarker, uploadIdMarker: from the previous page's `next…` values; nil for the first page.
    /// - Throws: `S3Error`.
    /// - Source: Amazon S3 API reference, ListMultipartUploads (`GET /?uploads`).
    public func listMultipartUploads(prefix: String = "", keyMarker: String? = nil, uploadIdMarker: String? = nil,
                                     maxUploads: Int = 1000) throws(S3Error) -> S3MultipartUploadList {
        var query = [("uploads", ""), ("max-uploads", "\(maxUploads)")]
        if !prefix.isEmpty { query.append(("prefix", prefix)) }
        if let keyMarker { query.append(("key-marker", keyMarker)) }
        if let uploadIdMarker { query.append(("upload-id-marker", uploadIdMarker)) }
        let op = "ListMultipartUploads \(prefix)"
        let root = try xml(try send(S3Request(method: "GET", key: nil, query: query), operation: op, idempotent: true), op)
        let uploads = root.all("Upload").map {
            S3MultipartUpload(key: $0.text("Key") ?? "", uploadId: $0.text("UploadId") ?? "", initiated: $0.text("Initiated"))
        }
        guard root.text("IsTruncated") == "true" else { return S3MultipartUploadList(uploads: uploads, next: nil) }
        let next = (root.text("NextKeyMarker") ?? uploads.last?.key ?? "", root.text("NextUploadIdMarker") ?? uploads.last?.uploadId ?? "")
        return S3MultipartUploadList(uploads: uploads, next: next.0.isEmpty ? nil : next)
    }

    /// Every multipart upload under `prefix` (follows the markers). - Throws: `S3Error`.
    public func listAllMultipartUploads(prefix: String = "") throws(S3Error) -> [S3MultipartUpload] {
        var all: [S3MultipartUpload] = []
        var marker: (key: String, uploadId: String)?
        repeat {
            let page = try listMultipartUploads(prefix: prefix, keyMarker: marker?.key, uploadIdMarker: marker?.uploadId)
            all += page.uploads
            marker = page.next
        } while marker != nil
        return all
    }
}

/// A multipart upload as ListMultipartUploads reports it.
public struct S3MultipartUpload: Sendable, Equatable {
    public var key: String
    public var uploadId: String
    /// When it was created, ISO 8601 as S3 sent it.
    public var initiated: String?
}

/// One page of ListMultipartUploads.
public struct S3MultipartUploadList: Sendable {
    public var uploads: [S3MultipartUpload]
    /// The key and upload-id markers of the next page; nil on the last.
    public var next: (key: String, uploadId: String)?
}

/// A part to assemble in `completeMultipartUpload`.
public struct S3CompletedPart: Sendable, Equatable {
    /// 1–10000.
    public var partNumber: Int
    /// As returned by `uploadPart`, quotes optional.
    public var etag: String
    public init(partNumber: Int, etag: String) { self.partNumber = partNumber; self.etag = S3Client.unquote(etag) }
}

/// A part as ListParts reports it.
public struct S3UploadedPart: Sendable, Equatable {
    public var partNumber: Int
    /// Quotes removed.
    public var etag: String
    /// Size in bytes.
    public var byteCount: Int64
}

/// One page of ListParts.
public struct S3PartList: Sendable {
    public var parts: [S3UploadedPart]
    /// Pass as `partNumberMarker` for the next page; nil on the last.
    public var nextPartNumberMarker: Int?
}
