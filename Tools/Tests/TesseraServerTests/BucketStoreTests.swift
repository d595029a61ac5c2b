import Foundation
import Metrics
import Prometheus
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

/// A bucket read through the fetch chain (`FetchedStore` on an `ImageManager`, signed by
/// `S3RequestSigner`): against a real `moto_server` on 127.0.0.1 with IAM authentication on (moto checks
/// every signature with botocore, see ``MotoServer``), and against the test origin standing in as the
/// endpoint (path-style; it does not check signatures) for what moto cannot do: a body without
/// `Content-Length`, a 5xx, an answer that never comes, a closed port, counted requests.
///
/// moto's virtualenv comes from `tessera bench peers --only moto` (`make test` runs it); without it the moto
/// tests are skipped and say so. Only 127.0.0.1 is ever connected to.
@Suite("S3 buckets through the fetch chain")
struct BucketStoreTests {
    static let virtualenv = MotoServer.virtualenv()
    static let motoMissing: Comment = "no moto virtualenv (.build/moto-venv): `tessera bench peers --only moto` installs it from PyPI; the S3 end-to-end tests against moto are skipped"
    static let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret")

    /// A moto server with bucket `images`, for `body`; stopped afterwards.
    static func withMoto(_ body: (MotoServer) async throws -> Void) async throws {
        let moto = try await MotoServer(virtualenv: try #require(virtualenv))
        defer { moto.stop() }
        try await moto.createBucket("images")
        try await body(moto)
    }

    /// A store of `bucket` at `endpoint` keeping its disk copies under `tables`, run for `body` and shut down.
    static func withStore<R>(_ endpoint: S3Endpoint, bucket: String = "images", prefix: String = "", tables: URL,
                             maximumBytes: Int = 1 << 20, downloadTimeout: Double = 60, checkInterval: Double = 0, retry: RetryPolicy? = nil,
                             metrics: any MetricsFactory = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()),
                             _ body: (FetchedStore) async throws -> R) async throws -> R {
        var configuration = ServerConfiguration(root: tables.path)
        configuration.limits.maximumSourceBytes = maximumBytes
        configuration.limits.downloadTimeoutSeconds = downloadTimeout
        configuration.sourceCheckIntervalSeconds = checkInterval
        let context = ImageService.StoreContext(configuration: configuration, tables: tables, decoder: ImageDecoder(),
                                                observability: Observability(), metrics: metrics, environment: [:])
        let store = try ImageService.bucketStore(name: "s3", bucket: bucket, prefix: prefix, endpoint: endpoint,
                                                 retry: retry ?? ImageService.bucketRetry, context)
        do {
            let result = try await body(store)
            await store.shutdown()
            return result
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// The test origin as the endpoint.
    static func endpoint(_ origin: Origin) -> S3Endpoint {
        S3Endpoint(credentials: credentials, endpoint: origin.url("/"), addressing: .path)
    }

    /// The service error `work` throws, or `nil` (recorded as an issue) when it succeeds.
    static func failure(_ work: () async throws(ServiceError) -> some Any) async -> ServiceError? {
        do {
            let value = try await work()
            Issue.record("expected a ServiceError, got \(value)")
            return nil
        } catch {
            return error
        }
    }

    static func jpeg(_ width: Int = 40) throws -> [UInt8] { Array(try ServeFixture.jpeg(width: width, height: 30)) }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-buckets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("an object's version is its ETag without quotes; a stale check is a conditional GET whose 304 keeps it; a replaced object is a new version with its bytes")
    func versionsAreETags() async throws {
        let tables = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tables) }
        let first = try Self.jpeg(40), second = try Self.jpeg(60)
        try await Origin.with { origin in
            origin.set("/images/a.jpg", .init(body: first, etag: "\"e1\"", headers: ["x-amz-version-id": "v1"]))
            try await Self.withStore(Self.endpoint(origin), tables: tables) { store in
                let version = try await store.current("a.jpg", recheckSeconds: 0)
                #expect(version.tag == "e1" && version.data == Data(first))
                #expect(try await store.current("a.jpg", recheckSeconds: 0).tag == "e1")
                #expect(origin.arrivals.last?.ifNoneMatch == "\"e1\"", "revalidated with a conditional GET")
                #expect(origin.arrivals.allSatisfy { $0.authorization?.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") == true })
                origin.set("/images/a.jpg", .init(body: second, etag: "\"e2\""))
                let replaced = try await store.current("a.jpg", recheckSeconds: 0)
                #expect(replaced.tag == "e2" && replaced.data == Data(second))
                #expect(try await store.bytes(of: "a.jpg", version: "e2") == Data(second))
                await #expect(throws: ServiceError.self) { try await store.bytes(of: "a.jpg", version: "e1") }
                #expect(origin.count("/images/a.jpg") == 5, "each read past the check interval asks the store")
            }
        }
    }

    @Test("concurrent reads of one object share one GET; within the check interval the disk copy answers without a request")
    func concurrentReadsShareOneDownload() async throws {
        let tables = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tables) }
        let gate = OriginGate()
        try await Origin.with { origin in
            origin.set("/images/b.jpg", .init(body: try Self.jpeg(), etag: "\"b1\"", gate: gate))
            try await Self.withStore(Self.endpoint(origin), tables: tables, checkInterval: 600) { store in
                let tags = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<20 { group.addTask { try await store.current("b.jpg", recheckSeconds: 600).tag } }
                    await origin.waitForArrivals("/images/b.jpg")
                    gate.open()
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(tags == Array(repeating: "b1", count: 20))
                #expect(origin.count("/images/b.jpg") == 1)
                #expect(try await store.bytes(of: "b.jpg", version: "b1").count > 0)
                #expect(origin.count("/images/b.jpg") == 1, "the disk copy is fresh for the check interval")
            }
            // A new store on the same disk (a restart): the copy is still fresh, so no request at all; once stale, a 304.
            try await Self.withStore(Self.endpoint(origin), tables: tables) { store in
                let tag = try await store.current("b.jpg", recheckSeconds: 0).tag
                #expect(tag == "b1")
                #expect(origin.count("/images/b.jpg") == 1)
            }
        }
    }

    @Test("a 5xx is sent again after the backoff, at most twice; a 4xx never, as its own code")
    func retries() async throws {
        let tables = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tables) }
        let waits = LockedValue<[Duration]>([])
        let retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(100), maximumDelay: .seconds(2)) { delay in
            waits.withLock { $0.append(delay) }
        }
        try await Origin.with { origin in
            origin.set("/images/five.jpg", .init(status: 500, body: Array("<Error><Code>InternalError</Code></Error>".utf8)))
            for (status, path) in [(404, "/images/gone.jpg"), (403, "/images/denied.jpg"), (400, "/images/bad.jpg")] {
                origin.set(path, .init(status: status, body: Array("<Error><Code>X</Code></Error>".utf8)))
            }
            try await Self.withStore(Self.endpoint(origin), tables: tables, retry: retry) { store in
                let failed = await Self.failure { () async throws(ServiceError) in try await store.current("five.jpg", recheckSeconds: 0) }
                #expect(failed?.code == .upstreamStatus && failed?.status.code == 502)
                #expect(origin.count("/images/five.jpg") == 3, "the first try and two retries")
                #expect(waits.withLock { $0 } == [.milliseconds(100), .milliseconds(200)])
                let expected: [(String, ServiceError.Code)] = [("gone.jpg", .notFound), ("denied.jpg", .sourceDenied), ("bad.jpg", .sourceDenied)]
                for (key, code) in expected {
                    let error = await Self.failure { () async throws(ServiceError) in try await store.current(key, recheckSeconds: 0) }
                    #expect(error?.code == code, "\(key): \(String(describing: error))")
                    #expect(origin.count("/images/" + key) == 1, "\(key) was not sent again")
                }
            }
        }
    }

    @Test("an object over the size limit is 413 (from Content-Length, and while streaming without one); no answer is 504; a closed port 502")
    func limitsAndFailures() async throws {
        let tables = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tables) }
        try await Origin.with { origin in
            origin.set("/images/large.jpg", .init(body: try Self.jpeg(400)))
            origin.set("/images/chunked.jpg", .init(body: try Self.jpeg(400), chunkSize: 500))
            origin.set("/images/never.jpg", .init(body: try Self.jpeg(), gate: OriginGate()))
            try await Self.withStore(Self.endpoint(origin), tables: tables, maximumBytes: 1500) { store in
                for key in ["large.jpg", "chunked.jpg"] {
                    let error = await Self.failure { () async throws(ServiceError) in try await store.current(key, recheckSeconds: 0) }
                    #expect(error?.code == .sourceTooLarge && error?.status.code == 413, "\(key): \(String(describing: error))")
                }
            }
            // An answer that never comes (its gate stays closed): the download timeout ends each try.
            try await Self.withStore(Self.endpoint(origin), tables: tables, downloadTimeout: 0.5) { store in
                let never = await Self.failure { () async throws(ServiceError) in try await store.current("never.jpg", recheckSeconds: 0) }
                #expect(never?.code == .upstreamTimeout && never?.status.code == 504, "\(String(describing: never))")
            }
        }
        let closed = S3Endpoint(credentials: Self.credentials, endpoint: URL(string: "http://127.0.0.1:\(try Origin.unusedPort())"))
        try await Self.withStore(closed, tables: tables) { store in
            let error = await Self.failure { () async throws(ServiceError) in try await store.current("a.jpg", recheckSeconds: 0) }
            #expect(error?.status.code == 502, "\(String(describing: error))")
        }
    }

    @Test("S3's key limit is 1,024 UTF-8 bytes (prefix included): longer keys are 400 bad_path without a request")
    func keyLimit() async throws {
        let endpoint = S3Endpoint(credentials: Self.credentials, endpoint: URL(string: "http://127.0.0.1:9000"))
        #expect(S3Endpoint.maximumKeyBytes == 1024)
        #expect(try endpoint.url(bucket: "images", key: BucketSourceTests.key(bytes: 1024)).path.hasSuffix(".jpg"))
        #expect(throws: S3Error.keyTooLong(bytes: 1025, limit: 1024)) { try endpoint.url(bucket: "images", key: BucketSourceTests.key(bytes: 1025)) }
        // Bytes, not characters: 513 two-byte characters are 1,026 bytes.
        #expect(throws: S3Error.keyTooLong(bytes: 1026, limit: 1024)) { try endpoint.url(bucket: "images", key: String(repeating: "é", count: 513)) }
        let tables = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tables) }
        try await Self.withStore(endpoint, prefix: "photos/", tables: tables) { store in
            let error = await Self.failure { () async throws(ServiceError) in
                try await store.current(BucketSourceTests.key(bytes: 1018), recheckSeconds: 0)
            }
            #expect(error?.code == .badPath && error?.status.code == 400)
        }
    }

    @Test("on moto: signed GETs of awkward keys, 304 on an unchanged object, a replaced object's new ETag, 404 for a missing key or bucket, 502 source_denied for refused credentials",
          .enabled(if: virtualenv != nil, motoMissing))
    func onMoto() async throws {
        let tables = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tables) }
        try await Self.withMoto { moto in
            let keys = ["a b.jpg", "日本/é ü.jpg", "x+y=z&w;v,u.jpg", "photos/2024/a b+c.jpg", "~t/(1)*!'@$:.jpg", "100% sure.jpg"]
            var etags: [String: String] = [:]
            for (index, key) in keys.enumerated() {
                etags[key] = try await moto.putObject(bucket: "images", key: key, data: try Self.jpeg(20 + index), contentType: "image/jpeg")
            }
            let endpoint = S3Endpoint(credentials: S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey),
                                      endpoint: URL(string: moto.endpoint))
            try await Self.withStore(endpoint, tables: tables) { store in
                for (index, key) in keys.enumerated() {
                    let version = try await store.current(key, recheckSeconds: 0)
                    #expect(version.data == Data(try Self.jpeg(20 + index)), "\(key)")
                    #expect(version.tag == etags[key]?.replacingOccurrences(of: "\"", with: ""), "\(key)")
                }
                #expect(try await store.current("a b.jpg", recheckSeconds: 0).tag == etags["a b.jpg"]?.replacingOccurrences(of: "\"", with: ""))
                let ninety = try Self.jpeg(90)
                let replaced = try await moto.putObject(bucket: "images", key: "a b.jpg", data: ninety, contentType: "image/jpeg")
                let version = try await store.current("a b.jpg", recheckSeconds: 0)
                #expect(version.tag == replaced.replacingOccurrences(of: "\"", with: "") && version.data == Data(ninety))
                let missing = await Self.failure { () async throws(ServiceError) in try await store.current("missing.jpg", recheckSeconds: 0) }
                #expect(missing?.code == .notFound)
            }
            try await Self.withStore(endpoint, bucket: "nope", tables: tables) { store in
                let missing = await Self.failure { () async throws(ServiceError) in try await store.current("a b.jpg", recheckSeconds: 0) }
                #expect(missing?.code == .notFound)
            }
            let refused = [
                S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: "wrong" + moto.secretAccessKey),
                S3Credentials(accessKeyID: "AKIAUNKNOWNKEY000000", secretAccessKey: moto.secretAccessKey),
                S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey, sessionToken: "not-a-session"),
            ]
            for credentials in refused {
                let wrong = S3Endpoint(credentials: credentials, endpoint: URL(string: moto.endpoint))
                try await Self.withStore(wrong, tables: try Self.temporaryDirectory()) { store in
                    let error = await Self.failure { () async throws(ServiceError) in try await store.current("x+y=z&w;v,u.jpg", recheckSeconds: 0) }
                    #expect(error?.code == .sourceDenied && error?.status.code == 502, "\(String(describing: error))")
                }
            }
        }
    }
}
