import Foundation
import Testing
import TesseraTestSupport

/// moto's virtualenv for the end-to-end suites over S3, and why they are skipped without it.
enum Moto {
    /// moto's virtualenv (`tessera bench peers --only moto`), found next to the test binary; `nil` when missing.
    static let virtualenv = MotoServer.virtualenv()
    /// Whether ``virtualenv`` exists.
    static var isAvailable: Bool { virtualenv != nil }
    /// The reason a suite over S3 is skipped.
    static let missing: Comment = "no moto virtualenv (.build/moto-venv): `tessera bench peers --only moto` installs it from PyPI; the S3 end-to-end tests against moto are skipped"

    /// A running `moto_server` with IAM authentication on and the bucket `bucket` made.
    static func start(bucket: String) async throws -> MotoServer {
        let moto = try await MotoServer(virtualenv: try #require(virtualenv, missing))
        do {
            try await moto.createBucket(bucket)
        } catch {
            moto.stop()
            throw error
        }
        return moto
    }

    /// The environment a `tessera serve` child gets to sign with `moto`'s IAM key: the `AWS_…` variables,
    /// no session token, no AWS files.
    static func credentials(_ moto: MotoServer) -> [String: String] {
        ["AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey, "AWS_SESSION_TOKEN": "",
         "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"]
    }
}
