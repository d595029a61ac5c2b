import Foundation
import Testing
import Tessera
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

    @Test func reportRouteStoresJSONOnlyWhenConfigured() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ async throws in
            #expect(try await RawHTTP.post(port: port, "/gallery/report", body: Array("{}".utf8)).status == 404)
        }
        let reporting = try ServeFixture()   // a second server in one process needs tables of its own
        let file = reporting.base.appendingPathComponent("report.json")
        try await reporting.withServer(reporting.configuration { $0.gallery.reportFile = file.path }) { port, _ in
            let body = Array(#"{"visited": 3}"#.utf8)
            #expect(try await RawHTTP.post(port: port, "/gallery/report", body: body).status == 204)
            #expect(Array(try Data(contentsOf: file)) == body)
            let notJSON = try await RawHTTP.post(port: port, "/gallery/report", body: Array("visited=3".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.text.contains("bad_report"))
            let huge = Array(repeating: UInt8(ascii: " "), count: GalleryRoutes.maximumReportBytes + 1)
            #expect(try await RawHTTP.post(port: port, "/gallery/report", body: huge).status == 413)
            #expect(Array(try Data(contentsOf: file)) == body)   // the refused ones wrote nothing
        }
    }
}
