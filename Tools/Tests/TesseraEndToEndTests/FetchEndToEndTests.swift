import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `tessera fetch` as users run it (the release binary) against a real nginx serving real photographs.
/// Origin requests are counted in nginx's own access log.
@Suite("release tessera fetch against nginx", .enabled(if: ReleaseCLI.isAvailable,
                                                          "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct FetchEndToEndTests {
    /// Two JPEG photographs and one PNG, the smallest of the set (a short run).
    static func photos() throws -> [URL] {
        try RealPhotos.smallest(2, ext: "jpg") + RealPhotos.smallest(1, ext: "png")
    }

    /// nginx serving each photo under `/fresh/` and `/stale/`, and the first one as the redirect target.
    static func serve(_ photos: [URL]) throws -> Nginx {
        var files: [String: URL] = ["fresh/chain.jpg": photos[0]]
        for photo in photos {
            files["fresh/\(photo.lastPathComponent)"] = photo
            files["stale/\(photo.lastPathComponent)"] = photo
        }
        return try Nginx(files: files)
    }

    /// Runs `tessera fetch urls… --cache-dir cache --json` plus `extra`.
    static func fetch(_ urls: [String], cache: String, _ extra: [String] = []) async throws -> (ReleaseCLI.Run, FetchReport?) {
        let run = try await ReleaseCLI.run(["fetch"] + urls + ["--cache-dir", cache, "--json"] + extra)
        #expect(run.signal == nil, "no crash: \(run)")
        return (run, try? run.json(FetchReport.self))
    }

    /// What `tessera fetch --json` prints.
    struct FetchReport: Decodable {
        struct Item: Decodable { var url: String; var width: Int?; var height: Int?; var output: String?; var error: String? }
        struct Statistics: Decodable { var downloads: Int; var diskHits: Int; var notModified: Int; var coalesced: Int }
        var results: [Item]
        var statistics: Statistics
    }

    /// The size `fetch --size box` (aspect fit) gives a photo: what the library computes for the same bytes.
    static func fitted(_ photo: URL, in box: PixelSize) throws -> PixelSize {
        let image = try ImageDecoder().decode(try Data(contentsOf: photo))
        let placed = ContentMode.fit.placement(of: PixelSize(width: image.width, height: image.height), in: Rect(size: box))
        return PixelSize(width: max(1, Int(placed.width.rounded())), height: max(1, Int(placed.height.rounded())))
    }

    @Test("the same URL given 30 times: one origin request, 29 coalesced, every answer the photo's fitted size")
    func coalescing() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let path = "/fresh/\(photos[0].lastPathComponent)"
        let (run, report) = try await Self.fetch(Array(repeating: nginx.url(path), count: 30), cache: cache.path("c"), ["--size", "120x120"])
        #expect(run.status == 0, "\(run)")
        let result = try #require(report, "\(run)")
        #expect(result.results.count == 1)
        let expected = try Self.fitted(photos[0], in: PixelSize(width: 120, height: 120))
        #expect(result.results.first.map { PixelSize(width: $0.width ?? 0, height: $0.height ?? 0) } == expected)
        #expect(result.statistics.downloads == 1 && result.statistics.coalesced == 29)
        #expect(Nginx.requests(try nginx.settledLog(), for: path).count == 1)
    }

    @Test("a second run within max-age asks the origin nothing and returns the same images from disk")
    func freshOnDisk() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let urls = photos.map { nginx.url("/fresh/\($0.lastPathComponent)") }
        let (first, firstReport) = try await Self.fetch(urls, cache: cache.path("c"))
        #expect(first.status == 0, "\(first)")
        #expect(try nginx.settledLog().filter { $0.status == 200 }.count == photos.count)
        let (second, secondReport) = try await Self.fetch(urls, cache: cache.path("c"))
        #expect(second.status == 0, "\(second)")
        #expect(try nginx.settledLog().count == photos.count, "no request in the second run")
        #expect(secondReport?.statistics.diskHits == photos.count)
        // Full-size decodes: the photos' own sizes, both times.
        for (index, photo) in photos.enumerated() {
            let size = try RealPhotos.size(of: photo.path)
            for report in [firstReport, secondReport] {
                #expect(report?.results[index].width == size.width && report?.results[index].height == size.height)
            }
        }
    }

    @Test("under max-age=0 a second run revalidates: every answer 304 with no body, images still returned")
    func revalidation() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let urls = photos.map { nginx.url("/stale/\($0.lastPathComponent)") }
        let (first, _) = try await Self.fetch(urls, cache: cache.path("c"), ["--size", "64x64", "--mode", "fill"])
        #expect(first.status == 0, "\(first)")
        let out = cache.path("out")
        let (second, report) = try await Self.fetch(urls, cache: cache.path("c"), ["--size", "64x64", "--mode", "fill", "--out", out])
        #expect(second.status == 0, "\(second)")
        let log = try nginx.settledLog()
        #expect(log.count == 2 * photos.count)
        let revalidations = Array(log.suffix(photos.count))
        #expect(revalidations.allSatisfy { $0.status == 304 && $0.bodyBytes == 0 && !$0.ifNoneMatch.isEmpty && $0.ifNoneMatch != "-" },
                "\(revalidations)")
        #expect(report?.statistics.notModified == photos.count)
        // The images still come back: each PNG is the library's own 64×64 fill thumbnail of the photo.
        for (index, photo) in photos.enumerated() {
            let written = try #require(report?.results[index].output)
            let got = try ImageDecoder().decode(try Data(contentsOf: URL(fileURLWithPath: written)))
            let want = try ImageDecoder().thumbnail(try Data(contentsOf: photo), size: PixelSize(width: 64, height: 64), mode: .fill)
            #expect(got.width == 64 && got.height == 64)
            #expect(try #require(PixelComparison.meanAbsoluteDifference(got, want)) < 1.0)
        }
    }

    @Test("a file changed on the server: the next run downloads the new bytes and returns the new pixels")
    func changedOnServer() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let path = "/stale/\(photos[0].lastPathComponent)"
        let out = cache.path("out")
        let (first, firstReport) = try await Self.fetch([nginx.url(path)], cache: cache.path("c"), ["--size", "48x48", "--mode", "fill", "--out", out])
        #expect(first.status == 0, "\(first)")
        let before = try ImageDecoder().decode(try Data(contentsOf: URL(fileURLWithPath: try #require(firstReport?.results.first?.output))))
        // Replace the file with another photograph (new size, new mtime: a new ETag).
        let served = nginx.root.appendingPathComponent(String(path.dropFirst()))
        let replacement = try Data(contentsOf: photos[1])
        try replacement.write(to: served)
        let (second, report) = try await Self.fetch([nginx.url(path)], cache: cache.path("c"), ["--size", "48x48", "--mode", "fill", "--out", out])
        #expect(second.status == 0, "\(second)")
        let last = try #require(try nginx.settledLog().last)
        #expect(last.status == 200 && last.bodyBytes == replacement.count, "\(last)")
        let after = try ImageDecoder().decode(try Data(contentsOf: URL(fileURLWithPath: try #require(report?.results.first?.output))))
        let want = try ImageDecoder().thumbnail(replacement, size: PixelSize(width: 48, height: 48), mode: .fill)
        #expect(try #require(PixelComparison.meanAbsoluteDifference(after, want)) < 1.0, "the new photo's pixels")
        #expect(try #require(PixelComparison.meanAbsoluteDifference(before, want)) > 5.0, "which differ from the old photo's")
    }

    @Test("origin stopped: --offline answers from the disk cache; online, the refusal is a typed error")
    func offline() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let urls = photos.map { nginx.url("/stale/\($0.lastPathComponent)") }
        let (first, firstReport) = try await Self.fetch(urls, cache: cache.path("c"))
        #expect(first.status == 0, "\(first)")
        nginx.stop()
        let (offline, report) = try await Self.fetch(urls, cache: cache.path("c"), ["--offline"])
        #expect(offline.status == 0, "\(offline)")
        #expect(report?.statistics.diskHits == photos.count && report?.statistics.downloads == 0)
        #expect(report?.results.map(\.width) == firstReport?.results.map(\.width))
        let (online, failed) = try await Self.fetch(urls, cache: cache.path("c"))
        #expect(online.status == 1)
        #expect(failed?.results.allSatisfy { $0.error?.contains("connection refused") == true } == true, "\(online)")
    }

    @Test("403 and 404: a typed error naming the status and the URL, exit status 1; the other URL still succeeds")
    func httpErrors() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let forbidden = nginx.url("/forbidden/\(photos[0].lastPathComponent)")
        let missing = nginx.url("/fresh/no-such-photo.jpg")
        let good = nginx.url("/fresh/\(photos[0].lastPathComponent)")
        let (run, report) = try await Self.fetch([forbidden, missing, good], cache: cache.path("c"))
        #expect(run.status == 1)
        #expect(run.errors.contains("HTTP 403 from \(forbidden)"), "\(run)")
        #expect(run.errors.contains("HTTP 404 from \(missing)"), "\(run)")
        #expect(report?.results.map { $0.error == nil } == [false, false, true])
        #expect(try nginx.settledLog().map(\.status).sorted() == [200, 403, 404])
    }

    @Test("a redirect chain is followed; past the limit and in a cycle the error is typed")
    func redirects() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let (chain, report) = try await Self.fetch([nginx.url("/chain/1")], cache: cache.path("c"))
        #expect(chain.status == 0, "\(chain)")
        let size = try RealPhotos.size(of: photos[0].path)
        #expect(report?.results.first?.width == size.width && report?.results.first?.height == size.height)
        #expect(try nginx.settledLog().map(\.status) == [301, 301, 301, 200])

        let long = nginx.url("/long/1"), cycle = nginx.url("/cycle/a")
        let (failed, failedReport) = try await Self.fetch([long, cycle], cache: cache.path("c2"))
        #expect(failed.status == 1)
        for (index, url) in [long, cycle].enumerated() {
            #expect(failedReport?.results[index].error?.hasSuffix("too many redirects (or a redirect cycle) from \(url)") == true, "\(failed)")
        }
    }

    @Test("--header sends an Authorization header with every request; a malformed header is a usage error")
    func headers() async throws {
        let photos = try Self.photos()
        let nginx = try Self.serve(photos)
        let cache = try ScratchDirectory("cache")
        let urls = photos.map { nginx.url("/fresh/\($0.lastPathComponent)") }
        let (run, report) = try await Self.fetch(urls, cache: cache.path("c"), ["--header", "Authorization: Bearer e2e-token"])
        #expect(run.status == 0, "\(run)")
        #expect(report?.results.allSatisfy { $0.error == nil } == true)
        let log = try nginx.settledLog()
        #expect(log.count == photos.count && log.allSatisfy { $0.authorization == "Bearer e2e-token" }, "\(log)")
        let (bad, _) = try await Self.fetch(urls, cache: cache.path("c"), ["--header", "no colon here"])
        #expect(bad.status == 64 && bad.errors.contains("--header must be"), "\(bad)")
    }

    @Test("40 URLs on a closed port: each fails with a typed refusal; at most one connection attempt per lane")
    func refusedFailsFast() async throws {
        let port = try Origin.unusedPort()
        let cache = try ScratchDirectory("cache")
        let urls = (0..<40).map { "http://127.0.0.1:\(port)/photo-\($0).jpg" }
        let (run, report) = try await Self.fetch(urls, cache: cache.path("c"))
        #expect(run.status == 1)
        let errors = try #require(report, "\(run)").results.compactMap(\.error)
        #expect(errors.count == 40)
        #expect(errors.allSatisfy { $0.contains("connection refused loading http://127.0.0.1:\(port)/photo-") }, "\(errors)")
        // Urgent requests run 4 at a time; after the first refusal the breaker answers the rest.
        let attempted = errors.filter { !$0.contains("not tried again yet") }.count
        #expect(attempted >= 1 && attempted <= 4, "\(errors)")
        print("refusedFailsFast: 40 URLs to a closed port in \(String(format: "%.3f", run.seconds)) s (process start included)")
    }
}
