import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraTestSupport

/// The gallery page of `tessera serve` (the release binary) in a real browser: headless Chromium scrolls
/// it through 2,400 images by the test mode `--gallery-report` adds to the page, which reports back to the server.
@Suite("gallery in headless Chromium, release binary", .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct GalleryEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    /// What the test mode POSTs to `/gallery/report` (Tools/Sources/TesseraCLI/Serve/Resources/gallery-test-mode.js builds it).
    struct Report: Decodable {
        struct Summary: Decodable {
            var count: Int
            var p50: Double?
            var p95: Double?
            var p99: Double?
            var max: Double?
            var fps: Double?
        }

        struct Counts: Decodable {
            var lowres: Int
            var full: Int
        }

        var userAgent: String
        var images: Int
        var truncated: Bool
        var columns: Int
        var visited: Int
        var notFullCount: Int
        var failureCount: Int
        var requested: Counts
        var loaded: Counts
        var aborted: Int
        var prefetchHits: Int
        var rests: Int
        var flings: Int
        var restTimeouts: Int
        var seconds: Double
        var frames: Summary
        var appear: Summary
        var full: Summary
        var thumbHashes: Int
        var placeholders: Int
        var blankCells: Int
    }

    /// `count` images under `root`, `perDirectory` to a directory (`set-00/photo-0000.jpg`, …): hard links
    /// to copies of the real JPEG photographs, kept in `root/.sources`, which the listing skips (hidden).
    static func makeRoot(_ root: String, count: Int, perDirectory: Int = 100) throws {
        let sources = root + "/.sources"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        let photos = try RealPhotos.all().filter { $0.pathExtension.lowercased() == "jpg" }
        try #require(photos.count >= 4, "JPEG photographs under \(RealPhotos.directory.path)")
        var copies: [String] = []
        for (index, photo) in photos.enumerated() {
            let copy = sources + "/\(index).jpg"
            try FileManager.default.copyItem(atPath: photo.path, toPath: copy)
            copies.append(copy)
        }
        for index in 0..<count {
            let directory = root + String(format: "/set-%02d", index / perDirectory)
            if index % perDirectory == 0 { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            let name = directory + String(format: "/photo-%04d.jpg", index)
            if link(copies[index % copies.count], name) != 0 { try FileManager.default.copyItem(atPath: copies[index % copies.count], toPath: name) }
        }
    }

    /// `tessera_requests_total` by status, summed over presets.
    static func requestsByStatus(_ metrics: String) -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for line in metrics.split(separator: "\n") where line.hasPrefix("tessera_requests_total{") {
            guard let statusRange = line.range(of: "status=\""),
                  let status = Int(line[statusRange.upperBound...].prefix { $0.isNumber }),
                  let value = Double(line.split(separator: " ").last ?? "") else { continue }
            counts[status, default: 0] += Int(value)
        }
        return counts
    }

    @Test func scrollsThroughTwoThousandImagesInChromium() async throws {
        let scratch = try ScratchDirectory("gallery")
        let root = scratch.path("root")
        let count = 2_400
        try Self.makeRoot(root, count: count)
        let reportFile = scratch.path("report.json")
        // Listings may take their time over the hashes (a loaded machine must not leave cells without one).
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--gallery-report", reportFile,
                                       "--gallery-thumbhash-seconds", "600"], scratch: scratch)
        let listing = try await server.get("/gallery/list")
        #expect(listing.status == 200)
        #expect(listing.text.contains(#""preset":{"height":200,"name":"thumb","width":200}"#))   // the default presets
        #expect(listing.text.contains(#""lowres":{"height":40,"name":"lowres","width":40}"#))
        // `--gallery-report` appends the test-mode script to the page, after the page's own.
        let page = try await server.get("/gallery")
        #expect(page.text.contains("window.tesseraGallery = Object.freeze"))
        #expect(page.text.contains("autoscroll") && page.text.contains("/gallery/report"))

        // The page's test mode rests on every screen and flings in between, then POSTs its report.
        let url = "http://127.0.0.1:\(server.port)/gallery?autoscroll=1&report=1"
        let chromiumLog = scratch.path("chromium.log")
        let browser = try Chromium.start(url, scratch: scratch, log: chromiumLog)
        // The page scrolls for about a minute; 10 minutes is far past that and inside make test's bound (scripts/test-run).
        let reported = await server.output.wait(for: "gallery report written", timeout: .seconds(600))
        // A screenshot of the page as the run left it: at rest on the last screen, the measurements on top.
        let screenshot = reported ? Result { try browser.devTools.screenshot() } : .failure(DevToolsPipe.Failure(description: "no report"))
        await Chromium.stop(browser.process)
        try #require(reported, "no report from the page; chromium said: \((try? String(contentsOfFile: chromiumLog, encoding: .utf8))?.suffix(3000) ?? "")")
        let reportData = try Data(contentsOf: URL(fileURLWithPath: reportFile))
        let report = try JSONDecoder().decode(Report.self, from: reportData)
        print("gallery report: \(String(decoding: reportData, as: UTF8.self))")

        #expect(report.userAgent.contains("Chrome"))
        #expect(report.images == count)
        #expect(!report.truncated)
        #expect(report.visited == count)                  // every image was on screen at rest
        #expect(report.visited >= 2_000)
        #expect(report.notFullCount == 0)                 // and each of those cells ended with its picture
        #expect(report.failureCount == 0)                 // no request failed (aborted ones are not failures)
        #expect(report.restTimeouts == 0)
        #expect(report.loaded.full >= count)
        #expect(report.requested.lowres > 0)              // the flings used the low-resolution preset
        #expect(report.aborted > 0)                       // and cancelled what they scrolled past
        #expect(report.prefetchHits > 0)                  // the next screen was there before it was shown
        #expect(report.flings > 0)
        #expect(report.frames.count > 0)
        #expect(report.appear.count >= count)
        #expect(report.full.count >= count)
        // Every cell was painted at once: its ThumbHash from the listing, then its picture over it.
        #expect(report.thumbHashes == count)
        #expect(report.placeholders >= count)
        #expect(report.blankCells == 0)

        // The server agrees: no 5xx, and at least one 200 per image.
        let byStatus = Self.requestsByStatus(try await server.get("/metrics").text)
        #expect(byStatus.filter { $0.key >= 500 }.isEmpty, "\(byStatus)")
        #expect(byStatus[200, default: 0] >= count, "\(byStatus)")

        // The screenshot shows photographs, not grey placeholders.
        let png = try screenshot.get()
        let image = try ImageDecoder().decode(png)
        #expect(image.width == 1280)
        var colours = Set<UInt32>()
        for y in stride(from: 40, to: image.height, by: 3) {
            for x in stride(from: 0, to: image.width, by: 3) {
                let pixel = image.pixel(x: x, y: y)
                colours.insert(UInt32(pixel[0] >> 3) << 10 | UInt32(pixel[1] >> 3) << 5 | UInt32(pixel[2] >> 3))
            }
        }
        #expect(colours.count > 500, "the screenshot has \(colours.count) colours: placeholders rather than photographs?")
        let kept = ProcessInfo.processInfo.environment["TESSERA_GALLERY_SCREENSHOT"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tessera-gallery.png").path
        try png.write(to: URL(fileURLWithPath: kept))
        print("gallery screenshot: \(kept)")

        #expect(await server.terminate().status == 0)
        #expect(!server.log.contains("status=5"))
    }

    @Test func listingIsConfinedToTheRootAndBounded() async throws {
        let scratch = try ScratchDirectory("gallery-listing")
        let root = scratch.path("root")
        try Self.makeRoot(root, count: 30, perDirectory: 10)
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: root + "/set-00/fake.jpg"))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        try FileManager.default.createSymbolicLink(atPath: root + "/out", withDestinationPath: scratch.url.path)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--gallery-max-images", "25",
                                       "--gallery-thumbhash-seconds", "600"], scratch: scratch)
        struct Listing: Decodable {
            var images: [String]
            var truncated: Bool
            var thumbHashes: [String?]
        }
        let all = try JSONDecoder().decode(Listing.self, from: Data(try await server.get("/gallery/list").body))
        #expect(all.images.count == 25)
        // A ThumbHash per image: the hash of its low-resolution preset (40×40 fill), as `?info` gives it.
        #expect(all.thumbHashes.count == 25 && all.thumbHashes.allSatisfy { $0 != nil })
        let summary = try await server.get("/v1/lowres/" + all.images[3] + "?info")
        #expect(summary.text.contains("\"thumbHash\":\"" + (all.thumbHashes[3] ?? "-") + "\""), "\(summary.text)")
        #expect(all.truncated)
        #expect(all.images.first == "set-00/photo-0000.jpg")
        #expect(!all.images.contains { $0.contains("fake") || $0.contains("notes") || $0.hasPrefix("out/") || $0.hasPrefix(".") })
        let sub = try JSONDecoder().decode(Listing.self, from: Data(try await server.get("/gallery/list?dir=set-02").body))
        #expect(sub.images == (20..<30).map { String(format: "set-02/photo-%04d.jpg", $0) })
        #expect(!sub.truncated)
        for escape in ["..", "%2e%2e", "set-00%2f..%2f..", "%2Fetc", "set-00/../..", "set-00%00"] {
            #expect(try await server.get("/gallery/list?dir=\(escape)").status == 400, "\(escape)")
            #expect(try await server.get("/gallery?dir=\(escape)").status == 400, "\(escape)")
        }
        #expect(try await server.get("/gallery/list?dir=out").status == 403)
        #expect(try await server.get("/gallery/list?dir=missing").status == 404)
        #expect(try await server.get("/gallery/list?preset=nope").status == 404)
        let page = try await server.get("/gallery?dir=set-01")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.text.contains("AbortController"))
        // Without --gallery-report: the library's page, without the test mode, and no report route.
        #expect(page.text.contains("window.tesseraGallery"))
        #expect(!page.text.contains("autoscroll") && !page.text.contains("/gallery/report"))
        #expect(try await RawHTTP.post(port: server.port, "/gallery/report", body: Array("{}".utf8)).status == 404)
        #expect(await server.terminate().status == 0)

        let off = try await Server(["--root", root, "--tables", scratch.path("tables"), "--no-gallery"], scratch: scratch)
        #expect(try await off.get("/gallery").status == 404)
        #expect(try await off.get("/gallery/list").status == 404)
        #expect(await off.terminate().status == 0)
    }
}
