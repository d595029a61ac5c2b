import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `POST /admin/purge?src=SOURCE` on the release binary: what it drops (table entries, encoded answers,
/// disk copies), that the next request makes the image again, that nothing else is dropped, that a purge
/// survives a restart, and the statuses of a missing key, a wrong key and no admin key at all.
@Suite("tessera serve purge, release binary", .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServePurgeEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    static let key = "purge-key-0123456789"

    /// `POST /admin/purge?src=…` with `authorization` (the admin key's bearer by default).
    static func purge(_ server: Server, _ src: String, authorization: String? = "Bearer " + key) async throws -> RawHTTP.Response {
        let encoded = try #require(src.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/@"))))
        return try await RawHTTP.post(port: server.port, "/admin/purge?src=" + encoded, body: [],
                                      headers: authorization.map { ["Authorization": $0] } ?? [:])
    }

    /// The decodes `server` has made (`tessera_decode_seconds_count`).
    static func decodes(_ server: Server) async throws -> Double {
        PrometheusText.value(try await server.get("/metrics").text, "tessera_decode_seconds_count")
    }

    @Test("files of the root and of a directory source: 401, 400, 204 with what was dropped, the next request decodes again, other images stay, the purge outlives a restart")
    func purgesFiles() async throws {
        let scratch = try ScratchDirectory("serve-purge")
        let (root, names) = try ServeEndToEndTests.photoRoot(scratch)
        let more = scratch.path("more")
        try FileManager.default.createDirectory(atPath: more, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: root + "/" + names[1], toPath: more + "/b.jpg")
        let keyFile = scratch.path("admin-key")
        try Data((Self.key + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))   // as a secrets mount writes it
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--source", "more=file://" + more]
        let environment = ["TESSERA_ADMIN_KEY_FILE": keyFile]
        let server = try await Server(arguments, scratch: scratch, environment: environment)
        let photo = "/v1/thumb/" + names[0].replacingOccurrences(of: " ", with: "%20")
        let first = try await server.get(photo)
        #expect(first.headers["x-tessera-cache"] == "produced")
        #expect(try await server.get(photo).headers["x-tessera-cache"] == "memory")
        let resized = "/v1/resize?src=" + names[0].replacingOccurrences(of: " ", with: "%20") + "&w=80&h=60&fmt=png"
        #expect(try await server.get(resized).status == 200)
        #expect(try await server.get("/v1/thumb/@more/b.jpg").headers["x-tessera-cache"] == "produced")

        let unauthorised = try await Self.purge(server, names[0], authorization: nil)
        #expect(unauthorised.status == 401)
        #expect(unauthorised.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        #expect(try await Self.purge(server, names[0], authorization: "Bearer wrong" + Self.key).status == 401)
        #expect(try await Self.purge(server, names[0], authorization: Self.key).status == 401)   // not a bearer
        #expect(try await RawHTTP.post(port: server.port, "/admin/purge", body: [], headers: ["Authorization": "Bearer " + Self.key]).status == 400)
        #expect(try await Self.purge(server, "../etc/passwd").status == 400)
        #expect(try await Self.purge(server, "@nosuch/a.jpg").status == 404)
        #expect(try await server.get(photo).headers["x-tessera-cache"] == "memory", "refused purges drop nothing")

        let decodesBefore = try await Self.decodes(server)
        let purged = try await Self.purge(server, names[0])
        #expect(purged.status == 204)
        #expect(purged.body.isEmpty)
        // The thumb preset's table entry (lowres was never asked for), the thumbnail and the resize.
        #expect(purged.headers["x-tessera-purged"] == "tables=1 responses=2 copies=0")
        let again = try await server.get(photo)
        #expect(again.headers["x-tessera-cache"] == "produced", "made again, not from memory or the table")
        #expect(again.headers["etag"] == first.headers["etag"], "the same file makes the same answer")
        #expect(again.body == first.body)
        #expect(try await Self.decodes(server) == decodesBefore + 1)
        #expect(try await server.get("/v1/thumb/@more/b.jpg").headers["x-tessera-cache"] == "memory", "another source is kept")
        #expect(try await Self.purge(server, "@more/b.jpg").headers["x-tessera-purged"] == "tables=1 responses=1 copies=0")
        #expect(try await server.get("/v1/thumb/@more/b.jpg").headers["x-tessera-cache"] == "produced")
        #expect(try await Self.purge(server, "never-served.jpg").headers["x-tessera-purged"] == "tables=0 responses=0 copies=0")

        // The purge is in the table file: a restart does not bring the entry back.
        #expect(try await Self.purge(server, names[0]).headers["x-tessera-purged"] == "tables=1 responses=1 copies=0")
        #expect(await server.terminate().status == 0)
        let restarted = try await Server(arguments, scratch: scratch, environment: environment)
        #expect(try await restarted.get(photo).headers["x-tessera-cache"] == "produced")
        #expect(try await restarted.get("/v1/thumb/@more/b.jpg").headers["x-tessera-cache"] == "table", "the other source's entry stayed")
        #expect(await restarted.terminate().status == 0)

        // Without an admin key the route does not exist.
        let keyless = try await Server(["--root", root, "--tables", scratch.path("tables-keyless")], scratch: scratch)
        #expect(try await Self.purge(keyless, names[0]).status == 404)
        #expect(await keyless.terminate().status == 0)
    }

}

/// The purge of objects in a real `moto_server` bucket (see ``ServeSourcesEndToEndTests``).
@Suite("tessera serve purge of S3 objects, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"),
       .enabled(if: Moto.isAvailable, Moto.missing))
struct ServePurgeObjectsEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    @Test("an S3 object, named and as s3://BUCKET/KEY: its disk copy goes too, so the next request downloads it again")
    func purgesObjects() async throws {
        let scratch = try ScratchDirectory("serve-purge-s3")
        let (moto, root) = try await ServeSourcesEndToEndTests.oneObjectBucket(scratch)
        defer { moto.stop() }
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--source", "photos=s3://bucket", "--allow-bucket", "bucket",
                         "--s3-endpoint", moto.endpoint, "--admin-key", ServePurgeEndToEndTests.key]
        let server = try await Server(arguments, scratch: scratch, environment: Moto.credentials(moto))
        func downloads(_ source: String) async throws -> Double { try await ServeSourcesEndToEndTests.downloads(server, source: source) }

        #expect(try await server.get("/v1/thumb/@photos/one.jpg").headers["x-tessera-cache"] == "produced")
        #expect(try await server.get("/v1/thumb/@photos/one.jpg").headers["x-tessera-cache"] == "memory")
        #expect(try await downloads("photos") == 1)
        let purged = try await ServePurgeEndToEndTests.purge(server, "@photos/one.jpg")
        #expect(purged.status == 204)
        #expect(purged.headers["x-tessera-purged"] == "tables=1 responses=1 copies=1")
        let again = try await server.get("/v1/thumb/@photos/one.jpg")
        #expect(again.status == 200)
        #expect(again.headers["x-tessera-cache"] == "produced")
        #expect(try await downloads("photos") == 2, "the disk copy was dropped: the object is downloaded again")

        let bucketTarget = "/v1/resize?src=s3://bucket/one.jpg&w=90&h=90&fmt=png"
        #expect(try await server.get(bucketTarget).status == 200)
        #expect(try await downloads("s3:bucket") == 1)
        #expect(try await server.get(bucketTarget).headers["x-tessera-cache"] == "memory")
        #expect(try await ServePurgeEndToEndTests.purge(server, "s3://bucket/one.jpg").headers["x-tessera-purged"] == "tables=0 responses=1 copies=1")
        #expect(try await server.get(bucketTarget).headers["x-tessera-cache"] == "produced")
        #expect(try await downloads("s3:bucket") == 2)
        #expect(try await ServePurgeEndToEndTests.purge(server, "s3://other/one.jpg").status == 404, "a bucket that is not allowed")
        #expect(await server.terminate().status == 0)
    }
}
