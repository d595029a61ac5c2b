#if Serving
/// The access key of an S3 (or S3-compatible) store: its id, its secret and, for temporary credentials
/// (an assumed role, an instance profile), the session token that goes with them.
///
/// `description` names the key id only: the secret and the token never reach a log through it.
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible {
    /// The access key id (`AKIA…` for a user's long-term key, `ASIA…` for temporary ones on AWS).
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `x-amz-security-token`; `nil` for long-term keys.
    public var sessionToken: String?

    /// Credentials from their parts.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The credentials in an environment, as the AWS command line and SDKs read them: `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY` and, when present and not empty, `AWS_SESSION_TOKEN`. `nil` unless both the
    /// key id and the secret are there and not empty. Pass `ProcessInfo.processInfo.environment`, or a
    /// dictionary of your own in tests.
    public init?(environment: [String: String]) {
        guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else { return nil }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        self.init(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
    }

    /// The key id and whether a session token is present; never the secret or the token.
    public var description: String {
        "S3Credentials(\(accessKeyID)\(sessionToken == nil ? "" : ", with session token"))"
    }
}
#endif
