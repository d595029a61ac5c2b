import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `tessera serve --source NAME=s3://BUCKET/PREFIX` as operators run it: the release binary over a real
/// `moto_server` with IAM authentication on (every signature checked, see ``MotoServer``), real photographs
/// as the objects, credentials from the child's `AWS_…` environment variables. Only 127.0.0.1 is connected to.
@Suite("tessera serve over an S3 bucket, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"),
       .enabled(if: Moto.isAvailable, Moto.missing))
struct ServeSourcesEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    /// The objects read with bytes (`tessera_source_downloads_total{source}`) that `server` counted.
    static func downloads(_ server: Server, source: String = "photos") async throws -> Double {
        PrometheusText.value(try await server.get("/metrics").text, "tessera_source_downloads_total", labels: ["source": source])
    }

    /// Asks `server` for `target` (a `card` preset, PNG) and checks the answer against the library's render of
    /// `photo` with the preset's recipe: 200, the preset's size, the same pixels. Returns the response.
    static func checkCard(_ server: Server, _ target: String, photo: URL) async throws -> RawHTTP.Response {
        let response = try await server.get(target)
        #expect(response.status == 200, "\(target): \(response.text.prefix(300))")
        guard response.status == 200 else { return response }
        let answer = try ImageDecoder().decode(Data(response.body))
        let reference = try PixelComparison.libraryRender(of: photo, processing: ImageProcessing(width: 160, height: 120, mode: .fill))
        #expect(answer.width == 160 && answer.height == 120, "\(target)")
        let difference = PixelComparison.meanAbsoluteDifference(answer, reference)
        #expect(difference.map { $0 < 1 } == true, "\(target) against \(photo.lastPathComponent): mean difference \(String(describing: difference))")
        return response
    }

    @Test("presets over moto's bucket: pixels, 304, a replaced object, the table after a restart, awkward keys, 404, 502 source_denied, downloads counted")
    func presetsOverABucket() async throws {
        let scratch = try ScratchDirectory("serve-s3")
        let moto = try await Moto.start(bucket: "bucket")
        defer { moto.stop() }
        let photos = try RealPhotos.smallest(3, ext: "jpg")
        let awkward = "dir/ü é+x 1.jpg"
        let first = try await moto.upload(bucket: "bucket", files: [("prefix/a.jpg", photos[0]), ("prefix/" + awkward, photos[2]),
                                                                    ("elsewhere.jpg", photos[1])], contentType: "image/jpeg")
        #expect(Set(first).count == 3, "three different photographs have three ETags: \(first)")

        // A second source on the same bucket whose secret is wrong, from a config file.
        let config = scratch.path("serve.json")
        let wrong: [String: Any] = ["sources": ["wrong": ["url": "s3://bucket/prefix", "accessKeyID": moto.accessKeyID,
                                                          "secretAccessKey": "wrong" + moto.secretAccessKey]]]
        try JSONSerialization.data(withJSONObject: wrong).write(to: URL(fileURLWithPath: config))
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        // Every request checks the object's version (no check interval: the default, 1 s, would let an object
        // replaced within the second answer as it was, and this test replaces one and asks at once).
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--config", config, "--preset", "card:160x120:fill",
                         "--source", "photos=s3://bucket/prefix", "--s3-endpoint", moto.endpoint, "--source-check-interval", "0"]
        let server = try await Server(arguments, scratch: scratch, environment: Moto.credentials(moto))
        var downloaded = 0.0   // object reads with bytes the server should have counted so far

        // A preset over an object: the library's pixels; then memory, and 304, each after a conditional GET that downloads nothing.
        let card = try await Self.checkCard(server, "/v1/card/@photos/a.jpg?fmt=png", photo: photos[0])
        downloaded += 1
        #expect(card.headers["x-tessera-cache"] == "produced")
        let etag = try #require(card.headers["etag"])
        let again = try await server.get("/v1/card/@photos/a.jpg?fmt=png")
        #expect(again.headers["x-tessera-cache"] == "memory" && again.headers["etag"] == etag)
        let notModified = try await server.get("/v1/card/@photos/a.jpg?fmt=png", headers: ["If-None-Match": etag])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(try await Self.downloads(server) == downloaded, "revalidations were answered 304 by the store")

        // The object replaced by another photograph: its new pixels under a new ETag, even to the old If-None-Match.
        let replacedTag = try await moto.upload(bucket: "bucket", files: [("prefix/a.jpg", photos[1])], contentType: "image/jpeg")
        #expect(replacedTag != [first[0]])
        let replaced = try await Self.checkCard(server, "/v1/card/@photos/a.jpg?fmt=png", photo: photos[1])
        downloaded += 1
        let newTag = try #require(replaced.headers["etag"])
        #expect(newTag != etag)
        #expect(replaced.headers["x-tessera-cache"] == "produced")
        #expect(try await server.get("/v1/card/@photos/a.jpg?fmt=png", headers: ["If-None-Match": newTag]).status == 304)

        // An ad-hoc size of the same object through /v1/resize?src=@NAME/KEY: no table; drawn from the bytes the
        // preset just read (the node keeps the objects it read last), so nothing is downloaded.
        let resized = try await server.get("/v1/resize?src=@photos/a.jpg&w=120&h=90&mode=fill&fmt=png")
        #expect(resized.status == 200, "\(resized.text.prefix(300))")
        let resizedImage = try ImageDecoder().decode(Data(resized.body))
        let resizedReference = try PixelComparison.libraryRender(of: photos[1], processing: ImageProcessing(width: 120, height: 90, mode: .fill))
        #expect(PixelComparison.meanAbsoluteDifference(resizedImage, resizedReference).map { $0 < 1 } == true)

        // A key with a space, unicode and `+`, percent-encoded, and with a literal `+` (a path's `+` is not a space).
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-")
        let encoded = try #require(awkward.addingPercentEncoding(withAllowedCharacters: unreserved))
        _ = try await Self.checkCard(server, "/v1/card/@photos/\(encoded)?fmt=png", photo: photos[2])
        downloaded += 1
        let literalPlus = encoded.replacingOccurrences(of: "%2B", with: "+")
        #expect(literalPlus != encoded)
        let plus = try await server.get("/v1/card/@photos/\(literalPlus)?fmt=png")
        #expect(plus.status == 200 && plus.headers["x-tessera-cache"] == "memory", "\(literalPlus): \(plus)")
        // Outside the prefix, an object is not the source's.
        let outside = try await server.get("/v1/card/@photos/elsewhere.jpg")
        #expect(outside.status == 404 && outside.text.contains("\"error\":\"not_found\""), "\(outside.text.prefix(300))")
        let missing = try await server.get("/v1/card/@photos/missing.jpg")
        #expect(missing.status == 404 && missing.text.contains("\"error\":\"not_found\""), "\(missing.text.prefix(300))")

        // Refused credentials are the operator's mistake, 502; the server goes on answering.
        let denied = try await server.get("/v1/card/@wrong/a.jpg")
        #expect(denied.status == 502 && denied.text.contains("\"error\":\"source_denied\""), "\(denied.text.prefix(300))")
        let afterwards = try await server.get("/v1/card/@photos/a.jpg?fmt=png")
        #expect(afterwards.status == 200 && afterwards.headers["etag"] == newTag)
        #expect(try await server.get("/healthz").status == 200)

        let metrics = try await server.get("/metrics").text
        #expect(PrometheusText.value(metrics, "tessera_source_downloads_total", labels: ["source": "photos"]) == downloaded,
                "\(metrics.split(separator: "\n").filter { $0.contains("source_downloads") })")
        #expect(PrometheusText.value(metrics, "tessera_source_downloads_total", labels: ["source": "wrong"]) == 0)
        #expect(await server.terminate().status == 0)

        // A new process over the same tables: the object's version comes from a HEAD, its thumbnail from the table.
        let restarted = try await Server(arguments, scratch: scratch, environment: Moto.credentials(moto))
        let hit = try await restarted.get("/v1/card/@photos/a.jpg?fmt=png")
        #expect(hit.status == 200 && hit.headers["x-tessera-cache"] == "table", "\(hit)")
        #expect(hit.headers["etag"] == newTag)
        let answer = try ImageDecoder().decode(Data(hit.body))
        let reference = try PixelComparison.libraryRender(of: photos[1], processing: ImageProcessing(width: 160, height: 120, mode: .fill))
        #expect(PixelComparison.meanAbsoluteDifference(answer, reference).map { $0 < 1 } == true)
        let restartedMetrics = try await restarted.get("/metrics").text
        #expect(PrometheusText.value(restartedMetrics, "tessera_table_hits_total") == 1)
        #expect(PrometheusText.value(restartedMetrics, "tessera_decode_seconds_count") == 0, "a table hit decodes nothing")
        #expect(PrometheusText.value(restartedMetrics, "tessera_source_downloads_total", labels: ["source": "photos"]) == 0,
                "a table hit after a restart downloads nothing")
        #expect(await restarted.terminate().status == 0)
    }

    /// A moto bucket `bucket` holding the smallest real photograph as `one.jpg`, and an empty root in `scratch`
    /// (the sources are the bucket's). The caller stops moto.
    static func oneObjectBucket(_ scratch: ScratchDirectory) async throws -> (moto: MotoServer, root: String) {
        let moto = try await Moto.start(bucket: "bucket")
        do {
            let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
            _ = try await moto.upload(bucket: "bucket", files: [("one.jpg", photo)], contentType: "image/jpeg")
            let root = scratch.path("root")
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            return (moto, root)
        } catch {
            moto.stop()
            throw error
        }
    }

    @Test("20 concurrent cold requests for 20 sizes of one object download it once; after a restart a new size of the unchanged object downloads nothing")
    func concurrentSizesShareOneDownload() async throws {
        let scratch = try ScratchDirectory("serve-s3-coalesce")
        let (moto, root) = try await Self.oneObjectBucket(scratch)
        defer { moto.stop() }
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--source", "photos=s3://bucket", "--s3-endpoint", moto.endpoint]
        let server = try await Server(arguments, scratch: scratch, environment: Moto.credentials(moto))
        let sizes = (0..<20).map { 40 + 4 * $0 }
        let answers = try await withThrowingTaskGroup(of: (Int, RawHTTP.Response).self) { group in
            for size in sizes {
                group.addTask { (size, try await server.get("/v1/resize?src=@photos/one.jpg&w=\(size)&h=\(size)&mode=fit&fmt=png")) }
            }
            return try await group.reduce(into: [(Int, RawHTTP.Response)]()) { $0.append($1) }
        }
        for (size, answer) in answers {
            #expect(answer.status == 200, "\(size): \(answer.text.prefix(300))")
            guard answer.status == 200 else { continue }
            let image = try ImageDecoder().decode(Data(answer.body))
            #expect(max(image.width, image.height) == size, "\(size): \(image.width)x\(image.height)")
        }
        #expect(try await Self.downloads(server) == 1, "one object download for 20 concurrent sizes")
        #expect(await server.terminate().status == 0)

        let restarted = try await Server(arguments, scratch: scratch, environment: Moto.credentials(moto))
        let fresh = try await restarted.get("/v1/resize?src=@photos/one.jpg&w=150&h=150&mode=fit&fmt=png")
        #expect(fresh.status == 200, "\(fresh.text.prefix(300))")
        #expect(try await Self.downloads(restarted) == 0, "the disk copy was revalidated (304 at most), not downloaded")
        // The object's Last-Modified (moto's, kept with the disk copy) is the answer's, and answers If-Modified-Since.
        let modified = try #require(fresh.headers["last-modified"], "an object's answer carries its Last-Modified")
        #expect(HTTPCacheInfo.parseHTTPDate(modified) != nil)
        let unchanged = try await restarted.get("/v1/resize?src=@photos/one.jpg&w=150&h=150&mode=fit&fmt=png", headers: ["If-Modified-Since": modified])
        #expect(unchanged.status == 304 && unchanged.body.isEmpty)
        #expect(await restarted.terminate().status == 0)
    }
}
