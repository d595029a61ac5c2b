import Foundation
import Testing
import Tessera
@testable import TesseraServer
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

/// The image service (`TesseraServer`) in process, on a real Hummingbird server on 127.0.0.1: what a whole
/// request over a socket shows (caching across requests, memory hits, changed files). What only the
/// routes decide (statuses, errors, signatures, path checks) is tested without a socket (`ServeRouteTests`).
@Suite("tessera serve, in process")
struct ServeTests {
    // MARK: Routes

    @Test func healthzAndMetrics() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let health = try await RawHTTP.get(port: port, "/healthz")
            #expect(health.status == 200)
            #expect(health.text == "{\"status\":\"ok\"}")
            let image = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg")
            #expect(image.status == 200)
            let metrics = try await RawHTTP.get(port: port, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
            #expect(metrics.text.contains("tessera_requests_total{"))
            #expect(metrics.text.contains("preset=\"thumb\""))
            #expect(metrics.text.contains("tessera_table_misses_total 1"))
            #expect(metrics.text.contains("tessera_decode_seconds_bucket"))
            #expect(metrics.text.contains("tessera_bytes_served_total \(image.body.count)"))
            // The library's own metrics share the server's registry (docs/OBSERVABILITY.md).
            #expect(metrics.text.contains("tessera_image_table_stores_total{format=\"serve-thumb-"))
            #expect(metrics.text.contains("tessera_serve_cache_outcomes_total{outcome=\"produced\"} 1"))
            #expect(metrics.text.contains("tessera_http_request_duration_seconds_bucket{"))
            #expect(metrics.text.contains("route=\"preset\""))
            #expect(metrics.text.contains("route=\"healthz\""))
        }
    }

    @Test func presetFillServesJPEGWithCacheHeaders() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, server in
            let first = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg")
            #expect(first.status == 200)
            #expect(first.headers["content-type"] == "image/jpeg")
            #expect(try DecodedBody(first.body) == DecodedBody(format: "jpeg", width: 64, height: 64))
            #expect(first.headers["vary"] == "Accept")
            #expect(first.headers["cache-control"] == "public, max-age=86400")
            #expect(first.headers["etag"]?.hasPrefix("\"") == true)
            #expect(first.headers["x-tessera-cache"] == "produced")
            let second = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg")
            #expect(second.headers["x-tessera-cache"] == "memory")
            #expect(second.body == first.body)
            #expect(second.headers["etag"] == first.headers["etag"])
            #expect(server.service.statistics.decodes == 1)
            // A file in a subdirectory, and a symlink that stays inside the root.
            let tall = try await RawHTTP.get(port: port, "/v1/thumb/sub/tall.jpg")
            #expect(try DecodedBody(tall.body) == DecodedBody(format: "jpeg", width: 64, height: 64))
            let linked = try await RawHTTP.get(port: port, "/v1/thumb/link-in.jpg")
            #expect(linked.status == 200)
        }
    }

    @Test func presetFitKeepsTheAspectRatio() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let wide = try await RawHTTP.get(port: port, "/v1/box/photo.jpg")
            #expect(try DecodedBody(wide.body) == DecodedBody(format: "jpeg", width: 100, height: 75))
            let tall = try await RawHTTP.get(port: port, "/v1/box/sub/tall.jpg")
            #expect(try DecodedBody(tall.body) == DecodedBody(format: "jpeg", width: 75, height: 100))
        }
    }

    @Test func acceptChoosesTheFormat() async throws {
        let fixture = try ServeFixture()
        // AVIF at every size: the 64×64 thumbnails below are smaller than the default `avifMinPixels`.
        try await fixture.withServer(fixture.configuration { $0.avifMinPixels = 0 }) { port, _ in
            // A browser that lists AVIF gets AVIF first; one that lists WebP only gets WebP.
            let browser = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"
            let avif = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["Accept": browser])
            #expect(avif.headers["content-type"] == "image/avif")
            #expect(try DecodedBody(avif.body) == DecodedBody(format: "avif", width: 64, height: 64))
            let webp = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["Accept": "image/avif;q=0,image/webp,*/*"])
            #expect(webp.headers["content-type"] == "image/webp")
            #expect(try DecodedBody(webp.body) == DecodedBody(format: "webp", width: 64, height: 64))
            let refused = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["Accept": "image/webp;q=0, image/*"])
            #expect(try DecodedBody(refused.body).format == "jpeg")
            // Transparent pixels: PNG unless WebP is accepted.
            let alpha = try await RawHTTP.get(port: port, "/v1/thumb/logo.png", headers: ["Accept": "image/*"])
            #expect(try DecodedBody(alpha.body) == DecodedBody(format: "png", width: 64, height: 64))
            let alphaWebP = try await RawHTTP.get(port: port, "/v1/thumb/logo.png", headers: ["Accept": "image/webp"])
            #expect(try DecodedBody(alphaWebP.body).format == "webp")
            // fmt overrides Accept.
            let forced = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=png", headers: ["Accept": browser])
            #expect(try DecodedBody(forced.body) == DecodedBody(format: "png", width: 64, height: 64))
            let jpeg = try await RawHTTP.get(port: port, "/v1/thumb/logo.png?fmt=jpeg&q=50", headers: ["Accept": browser])
            #expect(try DecodedBody(jpeg.body).format == "jpeg")
            // fmt=avif without Accept; transparency survives in AVIF.
            let forcedAVIF = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=avif&q=40")
            #expect(forcedAVIF.headers["content-type"] == "image/avif")
            #expect(try DecodedBody(forcedAVIF.body) == DecodedBody(format: "avif", width: 64, height: 64))
            let alphaAVIF = try await RawHTTP.get(port: port, "/v1/thumb/logo.png", headers: ["Accept": browser])
            #expect(try DecodedBody(alphaAVIF.body).format == "avif")
            #expect(try ImageDecoder().probe(Data(alphaAVIF.body)).hasAlpha)
            let unknown = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=heic")
            #expect(unknown.status == 400)
            #expect(unknown.text.contains("bad_format"))
            // Different negotiated formats have different ETags.
            #expect(webp.headers["etag"] != refused.headers["etag"])
            #expect(avif.headers["etag"] != webp.headers["etag"])
            #expect(webp.headers["vary"] == "Accept")
        }
    }

    /// An opaque answer `Accept` chose AVIF for with fewer than `avifMinPixels` pixels is WebP, written at
    /// AVIF's quality + 15 with the thumbnail effort (not the WebP answer's q80 at libwebp's default effort);
    /// a transparent one and
    /// `fmt=avif` stay AVIF; at exactly `avifMinPixels` pixels the answer is AVIF.
    @Test func smallAnswersAreWebPInAVIFsPlace() async throws {
        let fixture = try ServeFixture()
        let browser = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"
        let (inPlace, webp, forced, png, transparent) = try await fixture.withServer(fixture.configuration()) { port, _ in
            let inPlace = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["Accept": browser])
            let webp = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["Accept": "image/webp"])
            let forced = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=avif", headers: ["Accept": browser])
            let png = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=png")
            let transparent = try await RawHTTP.get(port: port, "/v1/thumb/logo.png", headers: ["Accept": browser])
            return (inPlace, webp, forced, png, transparent)
        }
        #expect(transparent.headers["content-type"] == "image/avif", "transparent pixels stay AVIF")
        #expect(try ImageDecoder().probe(Data(transparent.body)).hasAlpha)
        #expect(inPlace.headers["content-type"] == "image/webp" && inPlace.headers["vary"] == "Accept")
        #expect(try DecodedBody(inPlace.body) == DecodedBody(format: "webp", width: 64, height: 64))
        #expect(inPlace.body != webp.body && inPlace.headers["etag"] != webp.headers["etag"], "AVIF's quality, not WebP's")
        // The table's pixels (the lossless PNG of the same slot) written at quality 75 with the thumbnail
        // effort are the answer; libwebp's default effort (method 4), or method 2 alone, is another file.
        let pixels = try ImageDecoder().decode(Data(png.body))
        #expect(try WebPEncoder(quality: 75, effort: .thumbnail).encode(pixels) == inPlace.body)
        #expect(try WebPEncoder(quality: 75, method: 2).encode(pixels) != inPlace.body)
        #expect(try WebPEncoder(quality: 80).encode(pixels) == webp.body)
        #expect(try DecodedBody(forced.body) == DecodedBody(format: "avif", width: 64, height: 64))

        for (minimum, type) in [(64 * 64, "image/avif"), (64 * 64 + 1, "image/webp")] {
            let other = try ServeFixture()
            let answer = try await other.withServer(other.configuration { $0.avifMinPixels = minimum }) { port, _ in
                try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["Accept": browser])
            }
            #expect(answer.headers["content-type"] == type, "avifMinPixels \(minimum), 4,096 pixels")
        }
    }

    /// `HEAD` answers like `GET` without the body (curl -I, link checkers and CDNs ask it): the same status,
    /// type, tag and length, for an image, a service route and an error.
    @Test func ifNoneMatchGets304() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, server in
            let first = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg")
            let etag = try #require(first.headers["etag"])
            let again = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["If-None-Match": etag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.headers["etag"] == etag)
            #expect(again.headers["vary"] == "Accept")
            let listed = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["If-None-Match": "\"other\", W/\(etag)"])
            #expect(listed.status == 304)
            let other = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["If-None-Match": "\"other\""])
            #expect(other.status == 200)
            // The ETag of another Accept class does not match.
            let webp = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["If-None-Match": etag, "Accept": "image/webp"])
            #expect(webp.status == 200)
            let resize = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=50&h=50")
            let resized = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=50&h=50",
                                                headers: ["If-None-Match": try #require(resize.headers["etag"])])
            #expect(resized.status == 304)
            #expect(server.service.statistics.encodes == 3)
        }
    }

    @Test func aChangedFileGetsANewETagAndNewPixels() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration { $0.sourceCheckIntervalSeconds = 0 }) { port, _ in
            let before = try await RawHTTP.get(port: port, "/v1/box/photo.jpg")
            try ServeFixture.jpeg(width: 200, height: 400).write(to: fixture.root.appendingPathComponent("photo.jpg"))
            let after = try await RawHTTP.get(port: port, "/v1/box/photo.jpg")
            #expect(after.headers["etag"] != before.headers["etag"])
            #expect(after.headers["x-tessera-cache"] == "produced")
            #expect(try DecodedBody(after.body) == DecodedBody(format: "jpeg", width: 50, height: 100))
        }
    }

    /// `sourceCheckIntervalSeconds`: inside the interval a memory hit answers for the file as last checked
    /// (no `stat`, so a replaced file is still served old); a request that reads the source checks it first,
    /// and that check is what later hits trust. Without an interval (the default) the replaced file is
    /// seen at once (`aChangedFileGetsANewETagAndNewPixels`).
    @Test func aSourceCheckIntervalLetsMemoryHitsTrustTheLastCheck() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration { $0.sourceCheckIntervalSeconds = 3600 }) { port, _ in
            let before = try await RawHTTP.get(port: port, "/v1/box/photo.jpg")
            #expect(try DecodedBody(before.body) != DecodedBody(format: "jpeg", width: 50, height: 100))
            try ServeFixture.jpeg(width: 200, height: 400).write(to: fixture.root.appendingPathComponent("photo.jpg"))
            let trusted = try await RawHTTP.get(port: port, "/v1/box/photo.jpg")
            #expect(trusted.headers["x-tessera-cache"] == "memory")
            #expect(trusted.headers["etag"] == before.headers["etag"])
            #expect(trusted.body == before.body)
            let png = try await RawHTTP.get(port: port, "/v1/box/photo.jpg?fmt=png")
            #expect(png.headers["x-tessera-cache"] == "produced")
            #expect(try DecodedBody(png.body) == DecodedBody(format: "png", width: 50, height: 100))
            let after = try await RawHTTP.get(port: port, "/v1/box/photo.jpg")
            #expect(after.headers["etag"] != before.headers["etag"])
            #expect(after.headers["x-tessera-cache"] == "table")   // the PNG request put the new file in the table
            #expect(try DecodedBody(after.body) == DecodedBody(format: "jpeg", width: 50, height: 100))
        }
    }

    /// A file whose resolve trusted a recent check is checked again before it is read, through the
    /// directory it was found in: a named directory source's file, changed since, gets the key of its new
    /// version under its own identity (`@NAME/…`), as a fresh resolve would, not the root's file of the
    /// same name.
    @Test func aTrustedFileIsCheckedAgainThroughItsOwnDirectory() async throws {
        let fixture = try ServeFixture()
        let other = fixture.base.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try ServeFixture.jpeg(width: 200, height: 300).write(to: other.appendingPathComponent("photo.jpg"))
        let service = try ImageService(configuration: fixture.configuration {
            $0.sourceCheckIntervalSeconds = 3600
            $0.sources["files"] = ServerConfiguration.Source(url: "file://" + other.path)
        })
        let info = ImageService.RequestInfo(route: .preset(name: "box", path: "@files/photo.jpg"), path: "/v1/box/@files/photo.jpg",
                                            rawQuery: nil, accept: nil, ifNoneMatch: nil)
        let first = try service.resolve(info, trustingRecentCheck: false)
        try ServeFixture.jpeg(width: 300, height: 150).write(to: other.appendingPathComponent("photo.jpg"))
        let trusted = try service.resolve(info, trustingRecentCheck: true)
        #expect(trusted.file?.verified == false)
        #expect(trusted.key == first.key)   // the old version, as last checked
        let checked = try service.rechecked(trusted)
        let file = try #require(checked.file)
        #expect(file.verified)
        #expect(file.identity == "@files/photo.jpg")
        #expect(file.realPath == RootDirectory.realPath(other.appendingPathComponent("photo.jpg").path))
        #expect(file.version != first.file?.version)
        #expect(checked.key != first.key)
        #expect(checked.key == (try service.resolve(info, trustingRecentCheck: false)).key)
        #expect(try service.rechecked(checked).key == checked.key)   // a verified file is left as it is
        let root = try service.resolve(.init(route: .preset(name: "box", path: "photo.jpg"), path: "/v1/box/photo.jpg",
                                             rawQuery: nil, accept: nil, ifNoneMatch: nil), trustingRecentCheck: false)
        #expect(root.file?.version != file.version)
        let answer = try await service.respond(to: info)
        #expect(answer.outcome == .produced)
        #expect(try DecodedBody(answer.body) == DecodedBody(format: "jpeg", width: 100, height: 50))
        await service.shutdown()
    }

    @Test func resizeServesAdHocSizes() async throws {
        let fixture = try ServeFixture()
        let configuration = fixture.configuration { $0.limits.maximumOutputPixels = 40_000; $0.limits.allowedWidths = [120, 200, 300] }
        try await fixture.withServer(configuration) { port, _ in
            let fill = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=120&h=80&mode=fill")
            #expect(try DecodedBody(fill.body) == DecodedBody(format: "jpeg", width: 120, height: 80))
            #expect(fill.headers["vary"] == "Accept")
            let fit = try await RawHTTP.get(port: port, "/v1/resize?src=sub%2Ftall.jpg&w=120&h=120&mode=fit&fmt=webp&q=70")
            #expect(try DecodedBody(fit.body) == DecodedBody(format: "webp", width: 90, height: 120))
            let tooLarge = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=300&h=200")
            #expect(tooLarge.status == 400)
            #expect(tooLarge.text.contains("output_too_large"))
            let notAllowed = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=121&h=80")
            #expect(notAllowed.status == 400)
            #expect(notAllowed.text.contains("size_not_allowed"))
            // One side alone keeps the aspect ratio (400×300 → 120×90).
            let widthOnly = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=120")
            #expect(try DecodedBody(widthOnly.body) == DecodedBody(format: "jpeg", width: 120, height: 90))
            for bad in ["/v1/resize?w=120&h=80", "/v1/resize?src=photo.jpg&w=abc&h=80", "/v1/resize?src=photo.jpg",
                        "/v1/resize?src=photo.jpg&w=120&h=80&mode=stretch", "/v1/resize?src=photo.jpg&w=120&h=80&q=0",
                        "/v1/resize?src=photo.jpg&w=120&h=80&fmt=bmp", "/v1/resize?src=ftp://x/y.jpg&w=120&h=80"] {
                let response = try await RawHTTP.get(port: port, bad)
                #expect(response.status == 400, "\(bad)")
                #expect(response.headers["content-type"] == "application/json", "\(bad)")
            }
        }
    }

    // MARK: Refusals

    // MARK: Configuration

    @Test func presetsParseAndConfigurationsValidate() throws {
        let preset = try ServerConfiguration.Preset(parsing: "card:320x200:fit")
        #expect(preset == .init(name: "card", width: 320, height: 200, mode: .fit))
        for bad in ["card:320x200", "card:320:fit", "card:320x200:stretch", "card:axb:fill"] {
            #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.Preset(parsing: bad) }
        }
        var configuration = ServerConfiguration(root: "/tmp")
        configuration.presets = [.init(name: "../x", width: 10, height: 10, mode: .fill)]
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        configuration.presets = [.init(name: "resize", width: 10, height: 10, mode: .fill)]
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        configuration.presets = []
        configuration.sourceCheckIntervalSeconds = -1
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        configuration.sourceCheckIntervalSeconds = 0
        configuration.listen = "nowhere"
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        let decoded = try JSONDecoder().decode(ServerConfiguration.self, from: Data("""
        {"root": "/srv", "presets": [{"name": "a", "width": 10, "height": 20, "mode": "fit"}], "limits": {"maximumConcurrentDecodes": 2},
         "sourceCheckIntervalSeconds": 5}
        """.utf8))
        #expect(decoded.sourceCheckIntervalSeconds == 5)
        #expect(ServerConfiguration(root: "/srv").sourceCheckIntervalSeconds == 1)
        #expect(decoded.root == "/srv")
        #expect(decoded.presets == [.init(name: "a", width: 10, height: 20, mode: .fit)])
        #expect(decoded.limits.maximumConcurrentDecodes == 2)
        #expect(decoded.limits.maximumSourceBytes == ServerConfiguration.Limits().maximumSourceBytes)
        #expect(decoded.listen == "127.0.0.1:8080")
    }
}
