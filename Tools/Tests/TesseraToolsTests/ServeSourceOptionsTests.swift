import Foundation
import Testing
@testable import TesseraCLI
import TesseraServer
import TesseraTestSupport

/// `tessera serve`'s named sources and S3 settings as the command builds them: flags (`--source`,
/// repeated, `--source-header`, `--allow-bucket`, `--s3-*`), the `TESSERA_…` variables, and the config file,
/// parsed as the command line is and turned into the ``ServerConfiguration`` the server starts with.
@Suite("tessera serve: sources and S3 settings from flags, the environment and the config file")
struct ServeSourceOptionsTests {
    /// The configuration `tessera serve --root /srv/images ARGUMENTS` builds with `environment`.
    static func configuration(_ arguments: [String], environment: [String: String] = [:]) throws -> ServerConfiguration {
        let command = try ServeCommand.parse(["--root", "/srv/images"] + arguments)
        return try command.makeConfiguration(environment: environment)
    }

    /// The message of the error building the configuration throws, or `nil` (recorded) when it builds.
    static func refusal(_ arguments: [String], environment: [String: String] = [:]) -> String? {
        do {
            let configuration = try configuration(arguments, environment: environment)
            Issue.record("\(arguments) \(environment) was accepted: \(configuration.sources)")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("no source flag or variable: no sources, and S3's defaults")
    func defaults() throws {
        let configuration = try Self.configuration([])
        #expect(configuration.sources.isEmpty)
        #expect(configuration.s3 == ServerConfiguration.S3())
        #expect(configuration.s3.region == "us-east-1" && configuration.s3.endpoint == nil && configuration.s3.pathStyle == nil)
        #expect(configuration.s3.allowedBuckets.isEmpty)
    }

    @Test("repeated --source, --source-header, --allow-bucket and --s3-*; the flags win over the TESSERA_ variables")
    func flags() throws {
        let environment = ["TESSERA_SOURCES": "ignored=s3://ignored", "TESSERA_S3_ENDPOINT": "http://127.0.0.2:1",
                           "TESSERA_S3_REGION": "us-west-2", "TESSERA_ALLOW_BUCKETS": "other"]
        let configuration = try Self.configuration([
            "--source", "photos=s3://images/photos", "--source", "cdn=https://img.example/base", "--source", "files=file:///srv/other",
            "--source-header", "cdn:Authorization:Bearer operator", "--source-header", "cdn:X-Team: one:two",
            "--allow-bucket", "images", "--allow-bucket", "thumbs",
            "--s3-endpoint", "http://127.0.0.1:9000", "--s3-region", "eu-central-1", "--s3-path-style",
        ], environment: environment)
        #expect(configuration.sources.keys.sorted() == ["cdn", "files", "photos"])
        let photos = try #require(configuration.sources["photos"])
        #expect(try photos.kind() == .bucket("images", prefix: "photos/"))
        #expect(photos.headers.isEmpty && photos.endpoint == nil && photos.accessKeyID == nil)
        let cdn = try #require(configuration.sources["cdn"])
        #expect(try cdn.kind() == .origin(try #require(URL(string: "https://img.example/base/"))))
        // HEADER is up to the second colon; the value keeps its own colons, its spaces trimmed.
        #expect(cdn.headers == ["Authorization": "Bearer operator", "X-Team": "one:two"])
        #expect(try configuration.sources["files"]?.kind() == .directory("/srv/other"))
        #expect(configuration.s3.endpoint == "http://127.0.0.1:9000")
        #expect(configuration.s3.region == "eu-central-1")
        #expect(configuration.s3.pathStyle == true)
        #expect(configuration.s3.allowedBuckets == ["images", "thumbs"])
    }

    @Test("TESSERA_SOURCES (comma-separated), TESSERA_S3_ENDPOINT, _REGION, _PATH_STYLE and TESSERA_ALLOW_BUCKETS without flags")
    func environment() throws {
        let configuration = try Self.configuration([], environment: [
            "TESSERA_SOURCES": "photos=s3://images/photos/2024/ , cdn=http://127.0.0.1:8081,,files=file:///srv/other",
            "TESSERA_S3_ENDPOINT": "http://127.0.0.1:9000", "TESSERA_S3_REGION": "eu-west-3", "TESSERA_S3_PATH_STYLE": "1",
            "TESSERA_ALLOW_BUCKETS": " images, thumbs ,",
        ])
        #expect(configuration.sources.keys.sorted() == ["cdn", "files", "photos"])
        #expect(try configuration.sources["photos"]?.kind() == .bucket("images", prefix: "photos/2024/"))
        #expect(configuration.sources["cdn"]?.url == "http://127.0.0.1:8081")
        #expect(try configuration.sources["files"]?.kind() == .directory("/srv/other"))
        #expect(configuration.s3.endpoint == "http://127.0.0.1:9000" && configuration.s3.region == "eu-west-3")
        #expect(configuration.s3.pathStyle == true)
        #expect(configuration.s3.allowedBuckets == ["images", "thumbs"])
        // Any boolean spelling: "0" asks for virtual-hosted addressing; anything else stops the start (it was ignored).
        #expect(try Self.configuration([], environment: ["TESSERA_S3_PATH_STYLE": "yes"]).s3.pathStyle == true)
        #expect(try Self.configuration([], environment: ["TESSERA_S3_PATH_STYLE": "0"]).s3.pathStyle == false)
        #expect(Self.refusal([], environment: ["TESSERA_S3_PATH_STYLE": "sometimes"])?.contains("TESSERA_S3_PATH_STYLE 'sometimes'") == true)
        // A --source flag replaces the variable's whole list.
        let flagged = try Self.configuration(["--source", "only=s3://only"], environment: ["TESSERA_SOURCES": "photos=s3://images"])
        #expect(flagged.sources.keys.sorted() == ["only"])
    }

    @Test("the config file's sources and S3 settings, with flags added to them and overriding them")
    func configFile() throws {
        let directory = try temporaryDirectory()
        let file = directory.appendingPathComponent("serve.json")
        try Data(#"""
            {"root": "/srv/from-file",
             "sources": {"cdn": {"url": "https://img.example", "headers": {"X-From-File": "1"}},
                         "photos": {"url": "s3://images", "endpoint": "http://127.0.0.1:9100", "region": "ap-south-1", "pathStyle": false,
                                    "accessKeyID": "AKIDFILE", "secretAccessKey": "file-secret"}},
             "s3": {"region": "ap-south-1", "allowedBuckets": ["from-file"]}}
            """#.utf8).write(to: file)
        let configuration = try Self.configuration([
            "--config", file.path, "--source", "more=s3://more", "--source-header", "cdn:Authorization:Bearer operator",
            "--s3-region", "eu-north-1",
        ])
        #expect(configuration.root == "/srv/images", "--root wins over the file")
        #expect(configuration.sources.keys.sorted() == ["cdn", "more", "photos"])
        #expect(configuration.sources["cdn"]?.headers == ["X-From-File": "1", "Authorization": "Bearer operator"])
        let photos = try #require(configuration.sources["photos"])
        #expect(photos.endpoint == "http://127.0.0.1:9100" && photos.region == "ap-south-1" && photos.pathStyle == false)
        #expect(photos.accessKeyID == "AKIDFILE" && photos.secretAccessKey == "file-secret")
        #expect(configuration.s3.region == "eu-north-1")
        #expect(configuration.s3.allowedBuckets == ["from-file"], "no --allow-bucket: the file's list stays")
    }

    @Test("malformed or impossible source settings are refused with a message that names them")
    func refusals() throws {
        let cases: [([String], [String: String], String)] = [
            (["--source", "nameless"], [:], "source 'nameless' is not NAME=URL"),
            ([], ["TESSERA_SOURCES": "photos=ftp://host/x"], "source ftp://host/x is not file:///DIR"),
            (["--source", "photos=s3://"], [:], "has no bucket"),
            (["--source", "bad name=s3://images"], [:], "source name 'bad name'"),
            (["--source", "cdn=https://img.example", "--source-header", "cdn:Authorization"], [:], "is not NAME:HEADER:VALUE"),
            (["--source", "cdn=https://img.example", "--source-header", "nobody:Authorization:x"], [:], "names no source 'nobody'"),
            (["--s3-endpoint", "not a url"], [:], "is not an http(s) URL"),
            // Headers go to HTTP origins only: an S3 source signs its requests, a directory makes none.
            (["--source", "photos=s3://images/photos", "--source-header", "photos:Authorization:Bearer x"], [:],
             "source 'photos' (s3://images/photos) has headers (Authorization), but only http(s) origins send headers"),
            (["--source", "files=file:///srv/other", "--source-header", "files:X-Team:one"], [:],
             "source 'files' (file:///srv/other) has headers (X-Team), but only http(s) origins send headers"),
        ]
        for (arguments, environment, expected) in cases {
            let message = Self.refusal(arguments, environment: environment)
            #expect(message?.contains(expected) == true, "\(arguments) \(environment): \(message ?? "accepted")")
        }
    }
}
