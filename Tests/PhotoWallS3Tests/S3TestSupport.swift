import Foundation
import PhotoWallS3

/// The S3 server of the live tests: `PHOTOWALL_TEST_S3` (`s3://BUCKET?endpoint=URL&region=R`, as
/// `scripts/s3.sh start` prints) with `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`. When unset,
/// each live test prints a SKIPPED line and passes.
enum S3TestEnv {
    static let url: S3StoreURL? = {
        guard let u = ProcessInfo.processInfo.environment["PHOTOWALL_TEST_S3"], !u.isEmpty else { return nil }
        return try? S3StoreURL(u)
    }()

    static func skipNote(_ test: String = #function) -> Bool {
        guard url != nil, S3Credentials.fromEnvironment() != nil else {
            print("SKIPPED: PHOTOWALL_TEST_S3 not set (\(test))")
            return true
        }
        return false
    }

    static func configuration(secret: String? = nil) -> S3Configuration {
        let u = url!
        var creds = S3Credentials.fromEnvironment()!
        if let secret { creds.secretAccessKey = secret }
        var c = S3Configuration(endpoint: u.endpoint, region: u.region, bucket: u.bucket, credentials: creds)
        c.retryBaseDelayMilliseconds = 20
        return c
    }

    static func client() -> S3Client { S3Client(configuration()) }

    /// A key prefix no other test uses.
    static func prefix() -> String { "t-\(UUID().uuidString.lowercased().prefix(12))/" }
}

/// Deterministic bytes: `count` of them from `seed`.
func testBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    var out = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17
        out[i] = UInt8(truncatingIfNeeded: x)
    }
    return out
}
