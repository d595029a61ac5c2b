import Foundation
import Testing
@testable import TesseraServer
import TesseraTestSupport

/// The S3 client's contract against a real `moto_server` on 127.0.0.1 with IAM authentication on (moto
/// checks every signature with botocore, see ``MotoServer``), and against the test origin for what moto
/// cannot do (a body without `Content-Length`, a 5xx, an answer that never comes, a closed port).
///
/// moto's virtualenv comes from `tessera bench peers --only moto` (`make test` runs it); without it the moto
/// tests are skipped and say so. Only 127.0.0.1 is ever connected to.
@Suite("S3 client end to end")
struct S3ClientEndToEndTests {
    static let virtualenv = MotoServer.virtualenv()
    static let motoMissing: Comment = "no moto virtualenv (.build/moto-venv): `tessera bench peers --only moto` installs it from PyPI; the S3 end-to-end tests against moto are skipped"

    /// Runs `body` with a client of `configuration`, then shuts the client down.
    static func withClient<R>(_ configuration: S3Client.Configuration, _ body: (S3Client) async throws -> R) async throws -> R {
        let client = S3Client(configuration: configuration)
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// A client on `moto` signing with `credentials` (the IAM user's key by default).
    static func withClient<R>(_ moto: MotoServer, credentials: S3Credentials? = nil, _ body: (S3Client) async throws -> R) async throws -> R {
        let key = credentials ?? S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey)
        return try await withClient(S3Client.Configuration(credentials: key, endpoint: URL(string: moto.endpoint)), body)
    }

    /// The error `work` throws, or `nil` (recorded as an issue) when it succeeds.
    static func failure(_ work: () async throws(S3Error) -> some Any) async -> S3Error? {
        do {
            let value = try await work()
            Issue.record("expected an S3Error, got \(value)")
            return nil
        } catch {
            return error
        }
    }

    /// A moto server with bucket `images`, for `body`; stopped afterwards.
    static func withMoto(_ body: (MotoServer) async throws -> Void) async throws {
        let moto = try await MotoServer(virtualenv: try #require(virtualenv))
        defer { moto.stop() }
        try await moto.createBucket("images")
        try await body(moto)
    }

    @Test("GET: 200 with an ETag, 304 on a matching If-None-Match, new bytes and a new ETag after a replace; HEAD",
          .enabled(if: virtualenv != nil, motoMissing))
    func conditionalGets() async throws {
        try await Self.withMoto { moto in
            let key = "photos/2024/a b+c.jpg"
            let first = try await moto.putObject(bucket: "images", key: key, data: Array("first".utf8), contentType: "image/jpeg")
            try await Self.withClient(moto) { client in
                let got = try await client.get(bucket: "images", key: key, maximumBytes: 1 << 20)
                #expect(got == .object(data: Data("first".utf8), etag: first, versionID: nil, contentType: "image/jpeg"))
                #expect(first.hasPrefix("\"") && first.count > 2)
                #expect(try await client.get(bucket: "images", key: key, ifNoneMatch: first, maximumBytes: 1 << 20) == .notModified(etag: first))
                let second = try await moto.putObject(bucket: "images", key: key, data: Array("second, longer".utf8), contentType: "image/png")
                #expect(second != first)
                let replaced = try await client.get(bucket: "images", key: key, ifNoneMatch: first, maximumBytes: 1 << 20)
                #expect(replaced == .object(data: Data("second, longer".utf8), etag: second, versionID: nil, contentType: "image/png"))
                let info = try await client.head(bucket: "images", key: key)
                #expect(info.etag == second && info.contentLength == 14 && info.contentType == "image/png")
            }
        }
    }

    @Test("keys with spaces, unicode, + and other reserved characters, under prefixes",
          .enabled(if: virtualenv != nil, motoMissing))
    func awkwardKeys() async throws {
        try await Self.withMoto { moto in
            let keys = ["a b.jpg", "日本/é ü.png", "x+y=z&w;v,u.jpg", "photos/2024/a b+c.jpg", "~t/(1)*!'@$:.jpg", "100% sure.gif"]
            for key in keys { _ = try await moto.putObject(bucket: "images", key: key, data: Array(key.utf8), contentType: "image/jpeg") }
            try await Self.withClient(moto) { client in
                for key in keys {
                    let got = try await client.get(bucket: "images", key: key, maximumBytes: 4096)
                    guard case .object(let data, _, _, _) = got else { Issue.record("\(key): \(got)"); continue }
                    #expect(data == Data(key.utf8), "\(key)")
                }
            }
        }
    }

    @Test("a missing key or bucket and refused credentials are typed errors",
          .enabled(if: virtualenv != nil, motoMissing))
    func typedErrors() async throws {
        try await Self.withMoto { moto in
            _ = try await moto.putObject(bucket: "images", key: "there.jpg", data: [1, 2, 3], contentType: "image/jpeg")
            try await Self.withClient(moto) { client in
                #expect(await Self.failure { () async throws(S3Error) in try await client.get(bucket: "images", key: "missing.jpg", maximumBytes: 100) }
                    == .noSuchKey(bucket: "images", key: "missing.jpg"))
                #expect(await Self.failure { () async throws(S3Error) in try await client.get(bucket: "nope", key: "there.jpg", maximumBytes: 100) }
                    == .noSuchBucket(bucket: "nope"))
                #expect(await Self.failure { () async throws(S3Error) in try await client.head(bucket: "images", key: "missing.jpg") }
                    == .noSuchKey(bucket: "images", key: "missing.jpg"))
            }
            let refused: [(S3Credentials, S3Error)] = [
                (S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: "wrong" + moto.secretAccessKey), .signatureDoesNotMatch),
                (S3Credentials(accessKeyID: "AKIAUNKNOWNKEY000000", secretAccessKey: moto.secretAccessKey), .invalidAccessKeyID),
                (S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey, sessionToken: "not-a-session"),
                 .invalidToken(code: "InvalidToken")),
            ]
            for (credentials, expected) in refused {
                try await Self.withClient(moto, credentials: credentials) { client in
                    let error = await Self.failure { () async throws(S3Error) in try await client.get(bucket: "images", key: "there.jpg", maximumBytes: 100) }
                    #expect(error == expected)
                    #expect(error?.isCredentialsError == true && error.map { ServiceError($0).status.code } == 502)
                }
            }
        }
    }

    @Test("an object over the limit is refused from its Content-Length, before its body is read",
          .enabled(if: virtualenv != nil, motoMissing))
    func sizeLimitFromContentLength() async throws {
        try await Self.withMoto { moto in
            let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            _ = try await moto.putObject(bucket: "images", key: "large.bin", data: bytes, contentType: "application/octet-stream")
            try await Self.withClient(moto) { client in
                // The whole Content-Length is reported: a limit found while streaming would report the bytes received.
                #expect(await Self.failure { () async throws(S3Error) in try await client.get(bucket: "images", key: "large.bin", maximumBytes: 1000) }
                    == .tooLarge(bytes: 300_000, limit: 1000))
                let whole = try await client.get(bucket: "images", key: "large.bin", maximumBytes: 300_000)
                guard case .object(let data, _, _, _) = whole else { Issue.record("\(whole)"); return }
                #expect(data == Data(bytes))
            }
        }
    }

    /// A client on `origin` (path-style; the origin ignores the signature) with a short read timeout.
    /// A client of the test origin. The read timeout is long unless a test waits for it (an answer that
    /// never comes): a loaded machine must not turn a slow answer into a timeout.
    static func originConfiguration(_ origin: Origin, readTimeout: Duration = .seconds(60)) -> S3Client.Configuration {
        S3Client.Configuration(credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"),
                               endpoint: origin.url("/"), readTimeout: readTimeout)
    }

    @Test("a body without Content-Length is cut off while streaming, as soon as it passes the limit")
    func sizeLimitWhileStreaming() async throws {
        try await Origin.with { origin in
            origin.set("/images/chunked.bin", Origin.Resource(body: [UInt8](repeating: 7, count: 10_000), chunkSize: 1000))
            try await Self.withClient(Self.originConfiguration(origin)) { client in
                let error = await Self.failure { () async throws(S3Error) in try await client.get(bucket: "images", key: "chunked.bin", maximumBytes: 2500) }
                guard case .tooLarge(let bytes, let limit) = error else { Issue.record("\(String(describing: error))"); return }
                #expect(limit == 2500 && bytes > 2500 && bytes <= 10_000)
                let whole = try await client.get(bucket: "images", key: "chunked.bin", maximumBytes: 10_000)
                #expect(whole == .object(data: Data(repeating: 7, count: 10_000), etag: nil, versionID: nil, contentType: nil))
            }
        }
    }

    @Test("a 5xx is storeFailed with its code, an answer that never comes a timeout, a closed port a transport error")
    func storeFailures() async throws {
        try await Origin.with { origin in
            origin.set("/images/slow.jpg", Origin.Resource(status: 503, body: Array("<Error><Code>SlowDown</Code></Error>".utf8)))
            origin.set("/images/never.jpg", Origin.Resource(body: [1], gate: OriginGate()))
            try await Self.withClient(Self.originConfiguration(origin)) { client in
                #expect(await Self.failure { () async throws(S3Error) in try await client.get(bucket: "images", key: "slow.jpg", maximumBytes: 100) }
                    == .storeFailed(status: 503, code: "SlowDown"))
            }
            try await Self.withClient(Self.originConfiguration(origin, readTimeout: .milliseconds(300))) { client in
                #expect(await Self.failure { () async throws(S3Error) in try await client.get(bucket: "images", key: "never.jpg", maximumBytes: 100) }
                    == .timeout)
            }
        }
        let closed = S3Client.Configuration(credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"),
                                            endpoint: URL(string: "http://127.0.0.1:\(try Origin.unusedPort())"))
        try await Self.withClient(closed) { client in
            let error = await Self.failure { () async throws(S3Error) in try await client.get(bucket: "images", key: "a.jpg", maximumBytes: 100) }
            guard case .transport = error else { Issue.record("\(String(describing: error))"); return }
        }
    }
}
