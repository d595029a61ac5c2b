import Foundation
import Prometheus
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// S3 sources without a real store: the test origin on 127.0.0.1 stands in as the S3 endpoint
/// (path-style, `ENDPOINT/BUCKET/KEY`; it does not check signatures, moto's tests do). What a client
/// may ask for (keys over S3's length limit are refused before the store is asked), what an object's
/// version is made of (its ETag and, on a versioned bucket, its version id), and which sources may
/// have headers.
@Suite("S3 sources: key length, version ids, headers only for HTTP origins")
struct BucketSourceTests {
    /// A server configuration over `origin` as the S3 endpoint: bucket `images` as `@s3`, its `photos/`
    /// prefix as `@pics`, and `images` on the allow-list of `src=s3://…`.
    static func configuration(_ fixture: ServeFixture, _ origin: Origin) -> ServerConfiguration {
        fixture.configuration { configuration in
            var source = ServerConfiguration.Source(url: "s3://images")
            source.accessKeyID = "AKIDEXAMPLE"
            source.secretAccessKey = "secret"
            configuration.s3.endpoint = origin.url("/").absoluteString
            configuration.sources["s3"] = source
            source.url = "s3://images/photos"
            configuration.sources["pics"] = source
            configuration.s3.allowedBuckets = ["images"]
            configuration.s3.accessKeyID = "AKIDEXAMPLE"
            configuration.s3.secretAccessKey = "secret"
        }
    }

    /// A key of exactly `bytes` UTF-8 bytes: path components of `k`s ending in `.jpg`.
    static func key(bytes: Int) -> String {
        var key = ""
        while key.utf8.count + 4 < bytes {
            let room = bytes - 4 - key.utf8.count
            key += room > 200 ? String(repeating: "k", count: 199) + "/" : String(repeating: "k", count: room)
        }
        key += ".jpg"
        precondition(key.utf8.count == bytes)
        return key
    }

    @Test("S3's key limit is 1,024 UTF-8 bytes (prefix included): longer keys are refused without a request, as a typed error")
    func keyLimitInTheClient() throws {
        let configuration = S3Client.Configuration(credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"),
                                                   endpoint: URL(string: "http://127.0.0.1:9000"))
        #expect(S3Client.Configuration.maximumKeyBytes == 1024)
        #expect(try configuration.url(bucket: "images", key: Self.key(bytes: 1024)).path.hasSuffix(".jpg"))
        #expect(throws: S3Error.keyTooLong(bytes: 1025, limit: 1024)) { try configuration.url(bucket: "images", key: Self.key(bytes: 1025)) }
        // Bytes, not characters: 513 two-byte characters are 1,026 bytes.
        let wide = String(repeating: "é", count: 513)
        #expect(wide.count < 1024)
        #expect(throws: S3Error.keyTooLong(bytes: 1026, limit: 1024)) { try configuration.url(bucket: "images", key: wide) }
        let refused = ServiceError(S3Error.keyTooLong(bytes: 1025, limit: 1024))
        #expect(refused.code == .badPath && refused.status.code == 400)
    }

    @Test("a key over S3's limit is a 400 bad_path and never reaches the store; the prefix counts; 1,024 bytes are asked for")
    func longKeysAreTheClientsMistake() async throws {
        try await Origin.with { origin in
            let longest = Self.key(bytes: 1024)
            origin.set("/images/" + longest, .init(body: Array(try ServeFixture.jpeg(width: 120, height: 80)), etag: "\"e1\"",
                                                   contentType: "image/jpeg"))
            let fixture = try ServeFixture()
            try await fixture.withServer(Self.configuration(fixture, origin)) { port, _ in
                let atTheLimit = try await RawHTTP.get(port: port, "/v1/box/@s3/" + longest)
                #expect(atTheLimit.status == 200, "\(atTheLimit.text.prefix(300))")
                let askedBefore = origin.arrivals.count
                #expect(askedBefore >= 1)
                let over = Self.key(bytes: 1100)
                // `@pics` puts `photos/` (7 bytes) before the key: 1,020 bytes become 1,027.
                let overWithPrefix = Self.key(bytes: 1020)
                for target in ["/v1/box/@s3/" + over, "/v1/box/@pics/" + overWithPrefix, "/v1/resize?w=50&src=@s3/" + over,
                               "/v1/resize?w=50&src=s3://images/" + over] {
                    let response = try await RawHTTP.get(port: port, target)
                    #expect(response.status == 400, "\(target.prefix(40)): \(response.text.prefix(300))")
                    #expect(response.text.contains("\"error\":\"bad_path\""), "\(target.prefix(40)): \(response.text.prefix(300))")
                    #expect(response.text.contains("more than S3's limit of 1024"), "\(response.text.prefix(300))")
                }
                #expect(origin.arrivals.count == askedBefore, "a refused key is not sent to the store")
                // The same 1,020 bytes without the prefix are a key the store may have: asked for, and missing.
                let missing = try await RawHTTP.get(port: port, "/v1/box/@s3/" + overWithPrefix)
                #expect(missing.status == 404 && missing.text.contains("\"error\":\"not_found\""), "\(missing.text.prefix(300))")
                #expect(origin.arrivals.count > askedBefore)
                #expect(try await RawHTTP.get(port: port, "/healthz").status == 200)
            }
        }
    }

    @Test("an object's version is its ETag without quotes, then @ and its version id when the bucket keeps versions")
    func versionTags() {
        #expect(BucketStore.tag(etag: "\"9b2cf535f27731c974343645a3985328\"", versionID: nil, data: Data()) == "9b2cf535f27731c974343645a3985328")
        #expect(BucketStore.tag(etag: "\"9b2cf535f27731c974343645a3985328\"", versionID: "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY",
                                data: Data()) == "9b2cf535f27731c974343645a3985328@3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY")
        #expect(BucketStore.tag(etag: "\"abc-2\"", versionID: "v1", data: Data()) != BucketStore.tag(etag: "\"abc-2\"", versionID: "v2", data: Data()))
        // No ETag: the bytes' digest, which changes with the bytes.
        let digest = BucketStore.tag(etag: nil, versionID: "v1", data: Data("one".utf8))
        #expect(digest == ObjectVersion.digest(of: Data("one".utf8)) && digest != BucketStore.tag(etag: nil, versionID: "v1", data: Data("two".utf8)))
    }

    @Test("the version id is part of the source version: the same ETag under a new version id is a new table entry and a new response ETag")
    func versionIDsMakeNewVersions() async throws {
        try await Origin.with { origin in
            let jpeg = Array(try ServeFixture.jpeg(width: 300, height: 200))
            func object(version: String) -> Origin.Resource {
                .init(body: jpeg, etag: "\"same-etag\"", contentType: "image/jpeg", headers: ["x-amz-version-id": version])
            }
            origin.set("/images/cat.jpg", object(version: "v1"))
            let fixture = try ServeFixture()
            let configuration = Self.configuration(fixture, origin)
            var first = ""
            try await fixture.withServer(configuration) { port, _ in
                let response = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(response.status == 200 && response.headers["x-tessera-cache"] == "produced", "\(response.text.prefix(300))")
                first = try #require(response.headers["etag"])
            }
            // The store's version did not change: a new server finds the table's entry, with the same ETag.
            try await fixture.withServer(configuration) { port, _ in
                let response = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(response.headers["x-tessera-cache"] == "table" && response.headers["etag"] == first)
            }
            // Only the version id changed (a versioned bucket's new upload of the same bytes).
            origin.set("/images/cat.jpg", object(version: "v2"))
            try await fixture.withServer(configuration) { port, _ in
                let response = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(response.status == 200 && response.headers["x-tessera-cache"] == "produced", "\(response.text.prefix(300))")
                let second = try #require(response.headers["etag"])
                #expect(second != first)
            }
        }
    }

    @Test("the store's version id reaches the object's version through HEAD and GET")
    func versionIDsInTheStore() async throws {
        try await Origin.with { origin in
            origin.set("/images/a.jpg", .init(body: Array("first".utf8), etag: "\"e1\"", headers: ["x-amz-version-id": "v1"]))
            let client = S3Client(configuration: S3ClientEndToEndTests.originConfiguration(origin))
            let store = BucketStore(name: "s3", client: client, bucket: "images", prefix: "", maximumBytes: 1 << 20,
                                    metrics: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
            #expect(try await store.current("a.jpg", recheckSeconds: 0).tag == "e1@v1")
            #expect(try await store.bytes(of: "a.jpg", version: "e1@v1") == Data("first".utf8))
            origin.set("/images/a.jpg", .init(body: Array("second".utf8), etag: "\"e2\"", headers: ["x-amz-version-id": "v2"]))
            let replaced = try await store.current("a.jpg", recheckSeconds: 0)
            #expect(replaced.tag == "e2@v2" && replaced.data == Data("second".utf8))
            #expect(origin.arrivals.last?.ifNoneMatch == "\"e1\"", "revalidated with a conditional GET")
            await store.shutdown()
        }
    }

    @Test("a versioned bucket on moto: GET and HEAD carry the version id, the same bytes uploaded again get a new one, and the object's version names it",
          .enabled(if: S3ClientEndToEndTests.virtualenv != nil, S3ClientEndToEndTests.motoMissing))
    func versionIDsOnMoto() async throws {
        try await S3ClientEndToEndTests.withMoto { moto in
            let printed = try await moto.boto3("""
                s3.put_bucket_versioning(Bucket=sys.argv[2], VersioningConfiguration={"Status": "Enabled"})
                for _ in range(2):
                    print(s3.put_object(Bucket=sys.argv[2], Key=sys.argv[3], Body=b"same bytes", ContentType="image/jpeg")["VersionId"])
                """, ["images", "versioned/a b.jpg"])
            let versions = printed.split(separator: "\n").map(String.init)
            try #require(versions.count == 2)
            #expect(versions[0] != versions[1] && !versions[0].isEmpty)
            let client = S3Client(configuration: S3Client.Configuration(
                credentials: S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey), endpoint: URL(string: moto.endpoint)))
            let got = try await client.get(bucket: "images", key: "versioned/a b.jpg", maximumBytes: 100)
            guard case .object(let data, let etag?, let versionID, _) = got else { Issue.record("\(got)"); return }
            #expect(data == Data("same bytes".utf8) && versionID == versions[1])
            let info = try await client.head(bucket: "images", key: "versioned/a b.jpg")
            #expect(info.versionID == versions[1] && info.etag == etag)
            let store = BucketStore(name: "s3", client: client, bucket: "images", prefix: "versioned/", maximumBytes: 100,
                                    metrics: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
            let version = try await store.current("a b.jpg", recheckSeconds: 0)
            #expect(version.tag == etag.replacingOccurrences(of: "\"", with: "") + "@" + versions[1])
            await store.shutdown()
        }
    }

    @Test("headers are for HTTP origins: on an S3 or file:// source they are a configuration error naming the source")
    func headersOnlyForOrigins() throws {
        for url in ["s3://images/photos", "file:///srv/other"] {
            var configuration = ServerConfiguration(root: "/srv/images")
            var source = ServerConfiguration.Source(url: url)
            source.headers = ["Authorization": "Bearer operator"]
            configuration.sources["pics"] = source
            do {
                try configuration.validate()
                Issue.record("headers on \(url) were accepted")
            } catch {
                #expect(error.description.contains("source 'pics' (\(url)) has headers (Authorization)"), "\(error)")
                #expect(error.description.contains("only http(s) origins send headers"), "\(error)")
            }
        }
        var configuration = ServerConfiguration(root: "/srv/images")
        var origin = ServerConfiguration.Source(url: "https://img.example/base")
        origin.headers = ["Authorization": "Bearer operator"]
        configuration.sources["cdn"] = origin
        try configuration.validate()
        // The config file's "headers" are checked the same way.
        let json = #"{"root": "/srv/images", "sources": {"pics": {"url": "s3://images", "headers": {"X-Team": "one"}}}}"#
        let decoded = try JSONDecoder().decode(ServerConfiguration.self, from: Data(json.utf8))
        #expect(throws: ServerConfigurationError.self) { try decoded.validate() }
    }
}
