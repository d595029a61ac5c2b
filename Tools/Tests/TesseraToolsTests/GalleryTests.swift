import Foundation
import Logging
import Testing
import Tessera
@testable import TesseraCLI
@testable import TesseraServer
import TesseraTestSupport

/// The gallery routes of the image service in process (`ServeFixture`'s root: real files, a file that
/// is not an image, symlinks inside and outside the root, a symlinked directory leading out).
@Suite("tessera serve gallery, in process")
struct GalleryTests {
    struct Listing: Decodable {
        struct Preset: Decodable, Equatable {
            var name: String
            var width: Int
            var height: Int
        }

        var directory: String
        var preset: Preset
        var lowres: Preset?
        var images: [String]
        var truncated: Bool
        var thumbHashes: [String?]
    }

    /// `fixture`'s server (`configuration`, by default the fixture's) with the gallery's test mode wired in as
    /// `tessera serve --gallery-report FILE` wires it (`ImageServer.addGalleryTestMode(reportFile:)`).
    static func withTestMode(_ fixture: ServeFixture, reportFile: String, configuration: ServerConfiguration? = nil,
                             _ body: (Int) async throws -> Void) async throws {
        try await fixture.withServer(configuration ?? fixture.configuration(), prepare: { $0.addGalleryTestMode(reportFile: reportFile) }) { port, _ in
            try await body(port)
        }
    }

    static func listing(port: Int, _ query: String = "") async throws -> Listing {
        let response = try await RawHTTP.get(port: port, "/gallery/list" + query)
        try #require(response.status == 200, "\(response.status) \(response.text)")
        return try JSONDecoder().decode(Listing.self, from: Data(response.body))
    }

    @Test func listsOnlyImagesInsideTheRoot() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let all = try await Self.listing(port: port)
            // Not broken.jpg (text), link-out.jpg (leads outside), dir-out (a symlinked directory).
            #expect(all.images == ["link-in.jpg", "logo.png", "photo.jpg", "sub/tall.jpg"])
            #expect(!all.truncated)
            #expect(all.directory == "")
            let sub = try await Self.listing(port: port, "?dir=sub")
            #expect(sub.images == ["sub/tall.jpg"])
            #expect(sub.directory == "sub")
            let bounded = try await RawHTTP.get(port: port, "/gallery/list?dir=..")
            #expect(bounded.status == 400)
            #expect(bounded.text.contains("path_escape"))
            for (query, status) in [("..", 400), ("%2e%2e", 400), ("sub%2f..%2f..", 400), ("%2Ftmp", 400), ("sub/", 400), ("~", 400),
                                    ("sub%255c", 400), ("dir-out", 403), ("missing", 404), ("photo.jpg", 404)] {
                #expect(try await RawHTTP.get(port: port, "/gallery/list?dir=\(query)").status == status, "\(query)")
            }
            #expect(try await RawHTTP.get(port: port, "/gallery?dir=dir-out").status == 403)
        }
    }

    @Test("the listing carries each image's ThumbHash in the low-resolution preset: the hash of its table slot, kept after a restart")
    func listingCarriesThumbHashes() async throws {
        let fixture = try ServeFixture()
        let configuration = fixture.configuration {
            $0.presets.append(.init(name: "lowres", width: 16, height: 16, mode: .fill))
            $0.gallery.thumbHashSeconds = 600   // no listing here may run out of time, however loaded the machine
        }
        let first = try await fixture.withServer(configuration) { port, server in
            let listing = try await Self.listing(port: port)
            #expect(listing.lowres?.name == "lowres")
            #expect(listing.thumbHashes.count == listing.images.count)
            #expect(listing.thumbHashes.allSatisfy { $0 != nil })
            // Each hash is that of a slot: the image's own, or, for link-in.jpg and photo.jpg (one file, one
            // version), the slot of whichever of the two was drawn.
            func slotHash(_ path: String) throws -> String? {
                let info = ImageService.RequestInfo(route: .preset(name: "lowres", path: path), path: "/v1/lowres/\(path)",
                                                    rawQuery: nil, accept: nil, ifNoneMatch: nil)
                return try server.service.slotView(of: try server.service.resolve(info, trustingRecentCheck: false)).map { try ThumbHash(image: $0).base64 }
            }
            let hashes = Dictionary(uniqueKeysWithValues: zip(listing.images, listing.thumbHashes.map { $0 ?? "" }))
            #expect(hashes["logo.png"] == (try slotHash("logo.png")))
            #expect(hashes["sub/tall.jpg"] == (try slotHash("sub/tall.jpg")))
            #expect(hashes["photo.jpg"] == hashes["link-in.jpg"])
            let drawn = [try slotHash("photo.jpg"), try slotHash("link-in.jpg")].compactMap { $0 }
            #expect(!drawn.isEmpty && drawn.allSatisfy { $0 == hashes["photo.jpg"] })
            let decodes = server.service.statistics.decodes
            #expect((3...4).contains(decodes), "one decode per file, the link's maybe twice if drawn at once: \(decodes)")
            let again = try await Self.listing(port: port)
            #expect(again.thumbHashes == listing.thumbHashes)
            #expect(server.service.statistics.decodes == decodes, "a second listing decodes nothing")
            return listing.thumbHashes
        }
        try await fixture.withServer(configuration) { port, server in
            let listing = try await Self.listing(port: port)
            #expect(listing.thumbHashes == first)
            #expect(server.service.statistics.decodes == 0, "after a restart the hashes come from the tables' slots")
        }
    }

    @Test func listingStopsAtItsBound() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration { $0.gallery.maximumImages = 2 }) { port, _ in
            let listing = try await Self.listing(port: port)
            #expect(listing.images == ["link-in.jpg", "logo.png"])
            #expect(listing.truncated)
        }
    }

    @Test func choosesTheFullAndLowResolutionPresets() async throws {
        let fixture = try ServeFixture()
        // thumb 64x64 fill, box 100x100 fit: no preset smaller than thumb, so no low-resolution phase.
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let standard = try await Self.listing(port: port)
            #expect(standard.preset == .init(name: "thumb", width: 64, height: 64))
            #expect(standard.lowres == nil)
            let box = try await Self.listing(port: port, "?preset=box")
            #expect(box.preset == .init(name: "box", width: 100, height: 100))
            #expect(box.lowres == .init(name: "thumb", width: 64, height: 64))
            #expect(try await Self.listing(port: port, "?preset=box&lowres=none").lowres == nil)
            #expect(try await RawHTTP.get(port: port, "/gallery/list?preset=nope").status == 404)
            #expect(try await RawHTTP.get(port: port, "/gallery/list?lowres=nope").status == 404)
            #expect(try await RawHTTP.get(port: port, "/gallery?preset=nope").status == 404)
        }
        // The default presets: thumb 200x200 and lowres 40x40.
        var defaults = ServerConfiguration(root: fixture.root.path)
        defaults.tablesDirectory = fixture.tables.path
        try await fixture.withServer(defaults) { port, _ in
            let listing = try await Self.listing(port: port)
            #expect(listing.preset == .init(name: "thumb", width: 200, height: 200))
            #expect(listing.lowres == .init(name: "lowres", width: 40, height: 40))
        }
    }

    @Test func servesThePageWithoutExternalAssets() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let page = try await RawHTTP.get(port: port, "/gallery")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["content-security-policy"]?.contains("default-src 'self'") == true)
            #expect(page.text.contains("AbortController"))
            #expect(page.text.contains("URL.revokeObjectURL"))
            #expect(!page.text.contains("http://") && !page.text.contains("https://"))
        }
    }

    @Test func galleryIsOffWhenDisabledOrWhenURLsAreSigned() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration { $0.gallery.enabled = false }) { port, _ async throws in
            #expect(try await RawHTTP.get(port: port, "/gallery").status == 404)
            #expect(try await RawHTTP.get(port: port, "/gallery/list").status == 404)
        }
        let signed = try ServeFixture()   // a second server in one process needs tables of its own
        try await signed.withServer(signed.configuration { $0.signingKeys = [.init(id: "k", secret: "s")] }) { port, _ async throws in
            #expect(try await RawHTTP.get(port: port, "/gallery").status == 404)
        }
    }

    @Test func reportRouteStoresJSONOnlyWithTheTestMode() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ async throws in
            #expect(try await RawHTTP.post(port: port, "/gallery/report", body: Array("{}".utf8)).status == 404)
        }
        let reporting = try ServeFixture()   // a second server in one process needs tables of its own
        let file = reporting.base.appendingPathComponent("report.json")
        try await Self.withTestMode(reporting, reportFile: file.path) { port in
            let body = Array(#"{"visited": 3}"#.utf8)
            #expect(try await RawHTTP.post(port: port, "/gallery/report", body: body).status == 204)
            #expect(Array(try Data(contentsOf: file)) == body)
            let notJSON = try await RawHTTP.post(port: port, "/gallery/report", body: Array("visited=3".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.headers["content-type"] == "application/json")
            #expect(notJSON.text == #"{"error":"bad_report","message":"a report is a JSON object"}"#)
            #expect(try await RawHTTP.post(port: port, "/gallery/report", body: Array("[3]".utf8)).status == 400)
            let huge = Array(repeating: UInt8(ascii: " "), count: GalleryTestMode.maximumReportBytes + 1)
            let tooLarge = try await RawHTTP.post(port: port, "/gallery/report", body: huge)
            #expect(tooLarge.status == 413)
            #expect(tooLarge.text.contains(#""error":"report_too_large""#))
            #expect(Array(try Data(contentsOf: file)) == body)   // the refused ones wrote nothing
        }
        // A report file that cannot be written: 500, and the route is there only while the gallery is.
        let failing = try ServeFixture()
        let unwritable = failing.base.appendingPathComponent("missing/report.json").path
        try await Self.withTestMode(failing, reportFile: unwritable) { port in
            let refused = try await RawHTTP.post(port: port, "/gallery/report", body: Array("{}".utf8))
            #expect(refused.status == 500)
            #expect(refused.text.contains(#""error":"report_not_written""#))
        }
        let off = try ServeFixture()
        try await Self.withTestMode(off, reportFile: file.path, configuration: off.configuration { $0.gallery.enabled = false }) { port async throws in
            #expect(try await RawHTTP.post(port: port, "/gallery/report", body: Array("{}".utf8)).status == 404)
        }
    }

    @Test func libraryPageHasNoTestModeWhileTheServeTestModeAddsIt() async throws {
        // The library's page exposes the hook and nothing of the test mode.
        #expect(GalleryPage.html.contains("window.tesseraGallery = Object.freeze"))
        #expect(!GalleryPage.html.contains("autoscroll") && !GalleryPage.html.contains("/gallery/report"))
        #expect(GalleryPage.html(adding: nil) == GalleryPage.html)
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let page = try await RawHTTP.get(port: port, "/gallery")
            #expect(page.status == 200)
            #expect(page.text == GalleryPage.html)
            #expect(!page.text.contains("autoscroll"))
        }
        // `--gallery-report`'s page: the test-mode script in an element of its own, after the page's script.
        let reporting = try ServeFixture()
        try await Self.withTestMode(reporting, reportFile: reporting.base.appendingPathComponent("report.json").path) { port in
            let page = try await RawHTTP.get(port: port, "/gallery?autoscroll=1&report=1")
            #expect(page.status == 200)
            #expect(page.headers["content-security-policy"]?.contains("default-src 'self'") == true)
            #expect(GalleryTestMode.script.contains("autoscroll") && GalleryTestMode.script.contains("/gallery/report"))
            let hook = try #require(page.text.range(of: "window.tesseraGallery = Object.freeze"))
            let script = try #require(page.text.range(of: "<script>\n" + GalleryTestMode.script + "\n</script>\n</body>"))
            #expect(hook.upperBound < script.lowerBound)
            let body = try #require(GalleryPage.html.range(of: "</body>"))
            #expect(page.text.hasPrefix(GalleryPage.html[..<body.lowerBound]))
        }
    }
}
