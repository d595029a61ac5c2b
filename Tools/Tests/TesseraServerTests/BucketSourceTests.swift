import Foundation
import Prometheus
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// S3 sources without a real store: the test origin on 127.0.0.1 stands in as the S3 endpoint
/// (path-style, `ENDPOINT/BUCKET/KEY`; it does not check signatures, moto's tests do). What a client
/// may ask for (keys over S3's length limit are refused before the store is asked), what an object's
/// version is made of (its ETag), and which sources may have headers.
@Suite("S3 sources: key length, versions, headers only for HTTP origins")
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

    @Test("the version is the ETag: the same bytes under a new version id are the same table entry and response ETag; a new ETag is a new entry")
    func versionsFollowTheETag() async throws {
        try await Origin.with { origin in
            let jpeg = Array(try ServeFixture.jpeg(width: 300, height: 200))
            func object(version: String) -> Origin.Resource {
                .init(body: jpeg, etag: "\"same-etag\"", contentType: "image/jpeg", headers: ["x-amz-version-id": version])
            }
            origin.set("/images/cat.jpg", object(version: "v1"))
            let fixture = try ServeFixture()
            var configuration = Self.configuration(fixture, origin)
            // Every request asks the store for the object's version (a new server does not wait out the
            // interval the one before trusted its stored copy for).
            configuration.sourceCheckIntervalSeconds = 0
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
            // Only the version id changed (a versioned bucket's new upload of the same bytes): the same pixels.
            origin.set("/images/cat.jpg", object(version: "v2"))
            try await fixture.withServer(configuration) { port, _ in
                let response = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(response.status == 200 && response.headers["x-tessera-cache"] == "table", "\(response.text.prefix(300))")
                #expect(response.headers["etag"] == first)
            }
            // New bytes under a new ETag: a new entry and a new response ETag.
            origin.set("/images/cat.jpg", .init(body: Array(try ServeFixture.jpeg(width: 200, height: 300)), etag: "\"other-etag\"",
                                                contentType: "image/jpeg"))
            try await fixture.withServer(configuration) { port, _ in
                let response = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(response.status == 200 && response.headers["x-tessera-cache"] == "produced", "\(response.text.prefix(300))")
                #expect(response.headers["etag"] != first)
            }
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
