#if canImport(Glibc)
import Glibc
#endif

/// An AWS access key pair, with the session token of temporary credentials.
/// `description` never shows the secret or the token.
public struct S3Credentials: Sendable, CustomStringConvertible {
    public var accessKeyId: String
    public var secretAccessKey: String
    /// Sent as `x-amz-security-token` when set (STS temporary credentials).
    public var sessionToken: String?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId; self.secretAccessKey = secretAccessKey; self.sessionToken = sessionToken
    }

    /// From `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and optional `AWS_SESSION_TOKEN`.
    /// - Returns: nil when the key id or the secret is unset or empty.
    public static func fromEnvironment() -> S3Credentials? {
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        guard let id = env("AWS_ACCESS_KEY_ID"), let secret = env("AWS_SECRET_ACCESS_KEY") else { return nil }
        return S3Credentials(accessKeyId: id, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"))
    }

    public var description: String { "S3Credentials(\(accessKeyId), secret: ***)" }
}
