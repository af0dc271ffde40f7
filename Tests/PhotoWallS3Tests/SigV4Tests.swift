import Testing
@testable import PhotoWallS3

/// Pure unit tests: always run.
@Suite struct SigV4Tests {
    /// The GET-object example of "Authenticating Requests: Using the Authorization Header (AWS
    /// Signature Version 4)", Amazon S3 API reference (sig-v4-header-based-auth.html):
    /// `GET /test.txt`, `Range: bytes=0-9`, 2013-05-24, us-east-1.
    @Test func awsS3GetObjectExample() {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyId: "AKIAIOSFODNN7EXAMPLE",
                                                            secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                                 region: "us-east-1")
        let headers = signer.sign(method: "GET", host: "examplebucket.s3.amazonaws.com", encodedPath: "/test.txt", query: [],
                                  headers: [("Range", "bytes=0-9")], payloadHash: SigV4Signer.emptyPayloadHash, time: 1_369_353_600)
        let dict = Dictionary(uniqueKeysWithValues: headers.map { ($0.0, $0.1) })
        #expect(dict["x-amz-date"] == "20130524T000000Z")
        #expect(dict["Authorization"] == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// The presigned GET example of "Authenticating Requests: Using Query Parameters (AWS Signature
    /// Version 4)", Amazon S3 API reference (sigv4-query-string-auth.html): `GET /test.txt`,
    /// 2013-05-24, valid 86400 s, us-east-1.
    @Test func awsS3PresignedGetExample() {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyId: "AKIAIOSFODNN7EXAMPLE",
                                                            secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                                 region: "us-east-1")
        let query = signer.presign(method: "GET", host: "examplebucket.s3.amazonaws.com", encodedPath: "/test.txt",
                                   expiresSeconds: 86_400, time: 1_369_353_600)
        #expect(SigV4Signer.canonicalQuery(query) == "X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z"
            + "&X-Amz-Expires=86400&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
            + "&X-Amz-SignedHeaders=host")
    }

    @Test func uriEncoding() {
        #expect(SigV4Signer.uriEncode("a b/ü~x.y_z-0", encodeSlash: false) == "a%20b/%C3%BC~x.y_z-0")
        #expect(SigV4Signer.uriEncode("a/b+c=", encodeSlash: true) == "a%2Fb%2Bc%3D")
        #expect(SigV4Signer.canonicalQuery([("uploads", ""), ("b", "2"), ("a", "x y")]) == "a=x%20y&b=2&uploads=")
    }

    @Test func hostHeaderDropsDefaultPorts() {
        let creds = S3Credentials(accessKeyId: "k", secretAccessKey: "s")
        #expect(S3Configuration(endpoint: "http://127.0.0.1:8333/", region: "r", bucket: "b", credentials: creds).hostHeader == "127.0.0.1:8333")
        #expect(S3Configuration(endpoint: "https://s3.amazonaws.com:443", region: "r", bucket: "b", credentials: creds).hostHeader == "s3.amazonaws.com")
        #expect(S3Configuration(endpoint: "http://minio:80", region: "r", bucket: "b", credentials: creds).hostHeader == "minio")
    }

    @Test func storeURL() throws {
        let u = try S3StoreURL("s3://photos?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&prefix=p/&cache-size=1000")
        #expect(u.bucket == "photos" && u.endpoint == "http://127.0.0.1:9000" && u.region == "eu-west-1" && u.prefix == "p/" && u.cacheLimitBytes == 1000)
        let d = try S3StoreURL("s3://b?endpoint=http://h:1")
        #expect(d.region == "us-east-1" && d.prefix == "files/" && d.cacheLimitBytes == 1 << 30 && d.presignedURLSeconds == nil)
        #expect(try S3StoreURL("s3://b?endpoint=http://h:1&presigned-urls=300").presignedURLSeconds == 300)
        #expect(throws: (any Error).self) { try S3StoreURL("s3://b?endpoint=http://h:1&presigned-urls=0") }
        #expect(throws: (any Error).self) { try S3StoreURL("s3://b?endpoint=http://h:1&presigned-urls=604801") }
        #expect(throws: (any Error).self) { try S3StoreURL("s3://b") }
        #expect(throws: (any Error).self) { try S3StoreURL("s3://?endpoint=http://h") }
    }

    @Test func xmlParser() throws {
        let doc = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>true</IsTruncated>
            <Contents><Key>a &amp; b&#x20;&lt;c&gt;</Key><Size>12</Size><ETag>&quot;abc&quot;</ETag></Contents>
            <Contents><Key><![CDATA[x<y]]></Key><Size>0</Size></Contents><Empty/><!-- c -->
            <NextContinuationToken>tok</NextContinuationToken></ListBucketResult>
            """.utf8)
        let root = try S3XML.parse(doc)
        #expect(root.name == "ListBucketResult")
        #expect(root.all("Contents").map { $0.text("Key") } == ["a & b <c>", "x<y"])
        #expect(root.all("Contents").first?.text("ETag") == "\"abc\"")
        #expect(root.text("NextContinuationToken") == "tok")
        #expect(throws: S3XML.Failure.self) { try S3XML.parse(Array("<a><b></a>".utf8)) }
        #expect(throws: S3XML.Failure.self) { try S3XML.parse(Array("<a>".utf8)) }
        #expect(throws: S3XML.Failure.self) { try S3XML.parse(Array("<!DOCTYPE x [<!ENTITY e 'x'>]><a>&e;</a>".utf8)) }
    }
}
