import Foundation
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// Named sources behind `tessera serve`'s one request path: an S3 bucket on a real `moto_server` with
/// authentication on (every signature checked by botocore), a private HTTP origin that wants a header,
/// and a second directory. Presets over all of them, versions and revalidation, errors with their codes.
@Suite("tessera serve: named sources (S3, private HTTP origins, directories)")
struct ServeSourcesTests {
    /// A server over `moto`'s bucket `images` as `@s3` (and `@pics` for its `photos/` prefix), checking its
    /// sources on every request (so that an object replaced between two requests is seen however fast they
    /// come), with `change` applied.
    static func configuration(_ fixture: ServeFixture, _ moto: MotoServer, _ change: (inout ServerConfiguration) -> Void = { _ in }) -> ServerConfiguration {
        fixture.configuration { configuration in
            configuration.sourceCheckIntervalSeconds = 0
            var source = ServerConfiguration.Source(url: "s3://images")
            source.accessKeyID = moto.accessKeyID
            source.secretAccessKey = moto.secretAccessKey
            configuration.s3.endpoint = moto.endpoint
            configuration.sources["s3"] = source
            source.url = "s3://images/photos"
            configuration.sources["pics"] = source
            change(&configuration)
        }
    }

    /// `tessera_source_downloads_total{source="NAME"}` on the server's `/metrics` (0 when absent).
    static func downloads(port: Int, source: String) async throws -> Int {
        let text = try await RawHTTP.get(port: port, "/metrics").text
        let prefix = "tessera_source_downloads_total{source=\"\(source)\"} "
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
        return Int(Double(line.dropFirst(prefix.count)) ?? -1)
    }

    static func size(_ response: RawHTTP.Response) throws -> PixelSize {
        let image = try ImageDecoder().decode(Data(response.body))
        return PixelSize(width: image.width, height: image.height)
    }

    @Test("an S3 object in a preset: ETag, memory, 304, a replaced object's new pixels and ETag, the table after a restart",
          .enabled(if: BucketStoreTests.virtualenv != nil, BucketStoreTests.motoMissing))
    func presetsOverABucket() async throws {
        try await BucketStoreTests.withMoto { moto in
            _ = try await moto.putObject(bucket: "images", key: "cat.jpg", data: Array(try ServeFixture.jpeg(width: 300, height: 200)),
                                         contentType: "image/jpeg")
            let fixture = try ServeFixture()
            let configuration = Self.configuration(fixture, moto)
            var etag = ""
            try await fixture.withServer(configuration) { port, server in
                let first = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(first.status == 200, "\(first.text.prefix(300))")
                #expect(try Self.size(first) == PixelSize(width: 100, height: 67))
                #expect(first.headers["x-tessera-cache"] == "produced")
                etag = try #require(first.headers["etag"])
                // Another preset of the same object: drawn from the bytes just read, not downloaded again.
                let thumb = try await RawHTTP.get(port: port, "/v1/thumb/@s3/cat.jpg?fmt=png")
                #expect(thumb.status == 200 && thumb.headers["x-tessera-cache"] == "produced")
                #expect(try await Self.downloads(port: port, source: "s3") == 1)
                let again = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(again.headers["x-tessera-cache"] == "memory" && again.headers["etag"] == etag)
                let conditional = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png", headers: ["If-None-Match": etag])
                #expect(conditional.status == 304)
                // Replaced: the next request's conditional GET sees it (the check interval is 0).
                _ = try await moto.putObject(bucket: "images", key: "cat.jpg", data: Array(try ServeFixture.jpeg(width: 200, height: 300)),
                                             contentType: "image/jpeg")
                let replaced = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png", headers: ["If-None-Match": etag])
                #expect(replaced.status == 200)
                #expect(try Self.size(replaced) == PixelSize(width: 67, height: 100))
                etag = try #require(replaced.headers["etag"])
                #expect(server.service.statistics.decodes == 3)
                #expect(try await Self.downloads(port: port, source: "s3") == 2)
            }
            try await fixture.withServer(configuration) { port, server in
                let response = try await RawHTTP.get(port: port, "/v1/box/@s3/cat.jpg?fmt=png")
                #expect(response.headers["x-tessera-cache"] == "table", "the table is the cache of every source")
                #expect(response.headers["etag"] == etag)
                #expect(server.service.statistics.decodes == 0)
                #expect(try await Self.downloads(port: port, source: "s3") == 0, "a 304 confirms the version; the table has the pixels")
            }
        }
    }

    @Test("missing keys and buckets are 404, wrong credentials 502 source_denied, awkward keys and prefixes work, s3:// only for allowed buckets",
          .enabled(if: BucketStoreTests.virtualenv != nil, BucketStoreTests.motoMissing))
    func bucketErrorsAndKeys() async throws {
        try await BucketStoreTests.withMoto { moto in
            let jpeg = Array(try ServeFixture.jpeg(width: 120, height: 80))
            _ = try await moto.putObject(bucket: "images", key: "photos/a b+c ü.jpg", data: jpeg, contentType: "image/jpeg")
            let fixture = try ServeFixture()
            let configuration = Self.configuration(fixture, moto) { configuration in
                var wrong = configuration.sources["s3"]!
                wrong.secretAccessKey = "wrong"
                configuration.sources["wrong"] = wrong
                configuration.sources["gone"] = ServerConfiguration.Source(url: "s3://no-such-bucket")
                configuration.sources["gone"]?.accessKeyID = moto.accessKeyID
                configuration.sources["gone"]?.secretAccessKey = moto.secretAccessKey
                configuration.s3.allowedBuckets = ["images"]
                configuration.s3.accessKeyID = moto.accessKeyID   // for the allowed bucket, which has no key of its own
                configuration.s3.secretAccessKey = moto.secretAccessKey
            }
            try await fixture.withServer(configuration) { port, _ in
                for target in ["/v1/box/@pics/a%20b%2Bc%20%C3%BC.jpg", "/v1/box/@s3/photos/a%20b%2Bc%20%C3%BC.jpg",
                               "/v1/resize?src=@pics/a%20b%2Bc%20%C3%BC.jpg&w=60", "/v1/resize?src=s3://images/photos/a%20b%2Bc%20%C3%BC.jpg&w=60"] {
                    let response = try await RawHTTP.get(port: port, target)
                    #expect(response.status == 200, "\(target): \(response.text.prefix(300))")
                }
                for (target, status, code) in [("/v1/box/@s3/missing.jpg", 404, "not_found"), ("/v1/box/@gone/x.jpg", 404, "not_found"),
                                               ("/v1/box/@wrong/photos/x.jpg", 502, "source_denied"),
                                               ("/v1/box/@nobody/x.jpg", 404, "unknown_source"),
                                               ("/v1/resize?src=s3://other/x.jpg&w=10", 404, "unknown_source"),
                                               ("/v1/box/@s3/../x.jpg", 400, "path_escape")] {
                    let response = try await RawHTTP.get(port: port, target)
                    #expect(response.status == status, "\(target): \(response.text.prefix(300))")
                    #expect(response.text.contains("\"error\":\"\(code)\""), "\(target): \(response.text.prefix(300))")
                }
                let still = try await RawHTTP.get(port: port, "/v1/box/@pics/a%20b%2Bc%20%C3%BC.jpg")
                #expect(still.status == 200, "the server stays up")
            }
        }
    }

    @Test("a private HTTP origin gets its header, and a second directory is a source like the root")
    func originsAndDirectories() async throws {
        try await Origin.with { origin in
            let credential = OriginCredential(accepting: "Bearer operator")
            origin.set("/base/dog.jpg", .init(body: Array(try ServeFixture.jpeg(width: 300, height: 200)), cacheControl: "max-age=60",
                                              credential: credential))
            let fixture = try ServeFixture()
            let other = fixture.base.appendingPathComponent("other")
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            try ServeFixture.jpeg(width: 200, height: 300).write(to: other.appendingPathComponent("owl.jpg"))
            let configuration = fixture.configuration { configuration in
                var source = ServerConfiguration.Source(url: origin.url("/base").absoluteString)
                source.headers = ["Authorization": "Bearer operator"]
                configuration.sources["origin"] = source
                configuration.sources["files"] = ServerConfiguration.Source(url: "file://" + other.path)
            }
            try await fixture.withServer(configuration) { port, _ in
                let dog = try await RawHTTP.get(port: port, "/v1/box/@origin/dog.jpg?fmt=png")
                #expect(dog.status == 200, "\(dog.text.prefix(300))")
                #expect(try Self.size(dog) == PixelSize(width: 100, height: 67))
                #expect(origin.arrivals.first?.authorization == "Bearer operator")
                let missing = try await RawHTTP.get(port: port, "/v1/box/@origin/none.jpg")
                #expect(missing.status == 404)
                let owl = try await RawHTTP.get(port: port, "/v1/box/@files/owl.jpg?fmt=png")
                #expect(try Self.size(owl) == PixelSize(width: 67, height: 100))
                // The same name under the root is another image: keys and tables tell them apart.
                let escape = try await RawHTTP.get(port: port, "/v1/box/@files/../root/photo.jpg")
                #expect(escape.status == 400)
            }
        }
    }

    /// What the memory-hit handler's answer rests on for an object: the store's last check of its version,
    /// for the source check interval; without an interval every request checks the version (the router's way).
    @Test("an object's recorded target is answered from memory while its version's check stands")
    func anObjectsRecordedTargetIsAnsweredWhileItsVersionsCheckStands() async throws {
        try await Origin.with { origin in
            origin.set("/base/dog.jpg", .init(body: Array(try ServeFixture.jpeg(width: 300, height: 200)), cacheControl: "max-age=60"))
            for interval in [0.0, 60] {
                let fixture = try ServeFixture()
                let configuration = fixture.configuration { configuration in
                    configuration.sources["origin"] = ServerConfiguration.Source(url: origin.url("/base").absoluteString)
                    configuration.sourceCheckIntervalSeconds = interval
                }
                let service = try ImageService(configuration: configuration)
                let info = ImageService.RequestInfo(route: .preset(name: "box", path: "@origin/dog.jpg"), path: "/v1/box/@origin/dog.jpg",
                                                    rawQuery: nil, accept: nil, ifNoneMatch: nil)
                #expect(try await service.respond(to: info).outcome == .produced)
                let key = ResolvedTargets.Key(target: "/v1/box/@origin/dog.jpg", accepted: nil)
                let resolved = try #require(service.targets.get(key))
                let answer = service.memoryAnswer(to: resolved, for: key, ifNoneMatch: nil)
                if interval > 0 {
                    #expect(answer?.outcome == .memory && answer?.status == 200)
                    let notModified = service.memoryAnswer(to: resolved, for: key, ifNoneMatch: answer?.etag)
                    #expect(notModified?.status == 304)
                } else {
                    #expect(answer == nil, "no interval: the version is checked by the router")
                }
                await service.shutdown()
            }
        }
    }

    @Test("S3 credentials can come from files: a source's accessKeyIDFile and its companions, AWS_…_FILE variables")
    func credentialsFromFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secretFile = directory.appendingPathComponent("secret"), idFile = directory.appendingPathComponent("id")
        try Data("s3cr3t\n".utf8).write(to: secretFile)
        try Data("AKIDFROMFILE".utf8).write(to: idFile)
        let json = #"{"url": "s3://b", "accessKeyIDFile": "\#(idFile.path)", "secretAccessKeyFile": "\#(secretFile.path)"}"#
        let source = try JSONDecoder().decode(ServerConfiguration.Source.self, from: Data(json.utf8))
        #expect(source.accessKeyID == "AKIDFROMFILE" && source.secretAccessKey == "s3cr3t", "the trailing line break is dropped")
        #expect(source.sessionToken == nil)
        for bad in [#"{"url": "s3://b", "secretAccessKey": "x", "secretAccessKeyFile": "\#(secretFile.path)"}"#,
                    #"{"url": "s3://b", "secretAccessKeyFile": "\#(directory.path)/missing"}"#] {
            #expect(throws: DecodingError.self, "\(bad)") { try JSONDecoder().decode(ServerConfiguration.Source.self, from: Data(bad.utf8)) }
        }
        let environment = try ImageService.readingSecretFiles(["AWS_ACCESS_KEY_ID_FILE": idFile.path, "AWS_SECRET_ACCESS_KEY_FILE": secretFile.path])
        #expect(S3Credentials(environment: environment) == S3Credentials(accessKeyID: "AKIDFROMFILE", secretAccessKey: "s3cr3t"))
        #expect(throws: ServerConfigurationError.self) {
            try ImageService.readingSecretFiles(["AWS_SECRET_ACCESS_KEY": "x", "AWS_SECRET_ACCESS_KEY_FILE": secretFile.path])
        }
        #expect(throws: ServerConfigurationError.self) { try ImageService.readingSecretFiles(["AWS_SESSION_TOKEN_FILE": directory.path + "/missing"]) }
    }

    @Test("sources parse from NAME=URL and refuse what cannot work")
    func sourcesParse() throws {
        let (name, source) = try ServerConfiguration.Source.parse("pics=s3://bucket/photos")
        #expect(name == "pics" && source.url == "s3://bucket/photos")
        #expect(try source.kind() == .bucket("bucket", prefix: "photos/"))
        #expect(try ServerConfiguration.Source(url: "file:///srv/x").kind() == .directory("/srv/x"))
        #expect(try ServerConfiguration.Source(url: "https://img.example/base").kind() == .origin(URL(string: "https://img.example/base/")!))
        for bad in ["=s3://b", "x", "x=ftp://h", "x=s3://", "x=file://relative"] {
            #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.Source.parse(bad) }
        }
        var configuration = ServerConfiguration(root: "/tmp")
        configuration.sources["bad name"] = ServerConfiguration.Source(url: "file:///tmp")
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
    }
}
