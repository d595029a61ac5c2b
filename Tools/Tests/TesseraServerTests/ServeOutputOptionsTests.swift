import Foundation
import Testing
import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// Per-format default quality, presets only, the fallback image, and their configuration.
@Suite("tessera serve: quality per format, presets only, fallback image")
struct ServeOutputOptionsTests {
    @Test("without q each format takes its own default, exactly as if q named it; the config changes them")
    func qualityPerFormat() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            for (format, quality) in [("jpeg", 82), ("webp", 80), ("avif", 60)] {
                let implicit = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=120&h=90&fmt=\(format)")
                let explicit = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=120&h=90&fmt=\(format)&q=\(quality)")
                let other = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=120&h=90&fmt=\(format)&q=\(quality - 30)")
                #expect(implicit.status == 200 && explicit.status == 200, "\(format)")
                #expect(implicit.headers["content-type"] == "image/\(format)")
                #expect(implicit.body == explicit.body, "\(format): the default is q=\(quality)")
                #expect(implicit.body != other.body, "\(format): q changes the bytes")
            }
        }
        let configured = fixture.configuration { $0.quality.jpeg = 40 }
        try await fixture.withServer(configured) { port, _ in
            let implicit = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=jpeg")
            let explicit = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=jpeg&q=40")
            #expect(implicit.status == 200 && implicit.body == explicit.body)
        }
    }

    @Test("presets only: /v1/resize is 404, a query option on a preset is 400 naming it, a plain preset request works")
    func onlyPresets() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration { $0.onlyPresets = true }) { port, _ in
            let resize = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=10&h=10")
            #expect(resize.status == 404)
            #expect(resize.text.contains("\"error\":\"not_found\""))
            let option = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?fmt=png")
            #expect(option.status == 400)
            #expect(option.text.contains("\"error\":\"option_not_allowed\"") && option.text.contains("fmt"))
            let plain = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg", headers: ["Accept": "image/webp"])
            #expect(plain.status == 200)
            #expect(plain.headers["content-type"] == "image/webp", "Accept still chooses the format")
        }
    }

    @Test("a missing or undecodable source gets the fallback image drawn to the request's shape; other errors stay JSON")
    func fallbackImage() async throws {
        let fixture = try ServeFixture()
        let image = fixture.base.appendingPathComponent("fallback.png")
        try ServeFixture.png(width: 90, height: 60, alpha: false).write(to: image)
        let configuration = fixture.configuration { $0.fallback = ServerConfiguration.Fallback(image: image.path) }
        try await fixture.withServer(configuration) { port, _ in
            // Never enlarged unless asked: 90×60 fills 64×64 as 64×60 (scale 1, cut to the box's width), fits a box as 90×60.
            for (target, size) in [("/v1/thumb/nothing-here.jpg?fmt=png", PixelSize(width: 64, height: 60)),
                                   ("/v1/thumb/broken.jpg?fmt=png", PixelSize(width: 64, height: 60)),
                                   ("/v1/box/nothing-here.jpg?fmt=png", PixelSize(width: 90, height: 60)),
                                   ("/v1/resize?src=nothing.jpg&w=120&h=80&mode=fill&enlarge=1&fmt=png", PixelSize(width: 120, height: 80)),
                                   ("/v1/resize?src=nothing.jpg&w=120&h=80&mode=fill&fmt=png", PixelSize(width: 90, height: 60))] {
                let answer = try await RawHTTP.get(port: port, target)
                #expect(answer.status == 404, "\(target)")
                #expect(answer.headers["x-tessera-fallback"] == "1", "\(target)")
                #expect(answer.headers["cache-control"] == "public, max-age=60", "\(target)")
                #expect(answer.headers["content-type"] == "image/png", "\(target)")
                let decoded = try ImageDecoder().decode(Data(answer.body))
                #expect(PixelSize(width: decoded.width, height: decoded.height) == size, "\(target)")
            }
            let found = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg")
            #expect(found.status == 200 && found.headers["x-tessera-fallback"] == nil)
            let badSize = try await RawHTTP.get(port: port, "/v1/resize?src=nothing.jpg&w=0&h=10")
            #expect(badSize.status == 400 && badSize.text.contains("\"error\":\"bad_size\""))
            let escape = try await RawHTTP.get(port: port, "/v1/thumb/link-out.jpg")
            #expect(escape.status == 403 && escape.headers["x-tessera-fallback"] == nil)
        }
        var custom = configuration
        custom.fallback?.status = 200
        custom.fallback?.maxAgeSeconds = 5
        try await fixture.withServer(custom) { port, _ in
            let answer = try await RawHTTP.get(port: port, "/v1/thumb/nothing-here.jpg")
            #expect(answer.status == 200 && answer.headers["x-tessera-fallback"] == "1")
            #expect(answer.headers["cache-control"] == "public, max-age=5")
        }
    }

    @Test("configuration: quality per format, the older defaultQuality, fallback, and their checks")
    func configuration() throws {
        func decode(_ json: String) throws -> ServerConfiguration {
            try JSONDecoder().decode(ServerConfiguration.self, from: Data(json.utf8))
        }
        let defaults = try decode(#"{"root": "/r"}"#)
        #expect(defaults.quality == ServerConfiguration.Quality() && defaults.quality.avif == 60 && defaults.quality.webp == 80)
        #expect(defaults.quality.jpeg == 82 && defaults.avifSpeed == AVIFEncoder.defaultSpeed && defaults.avifSpeed == 9 && !defaults.onlyPresets && defaults.fallback == nil)
        #expect(defaults.avifMinPixels == 90_000 && defaults.quality.webpInPlaceOfAVIF == 75)
        let set = try decode(#"{"root": "/r", "quality": {"avif": 50}, "avifSpeed": 6, "avifMinPixels": 0, "onlyPresets": true, "fallback": {"image": "/f.png", "status": 200}}"#)
        #expect(set.quality.avif == 50 && set.quality.jpeg == 82 && set.avifSpeed == 6 && set.avifMinPixels == 0 && set.onlyPresets)
        #expect(set.quality.webpInPlaceOfAVIF == 65)
        var high = ServerConfiguration.Quality()
        high.avif = 95
        #expect(high.webpInPlaceOfAVIF == 100, "at most 100")
        #expect(set.fallback?.image == "/f.png" && set.fallback?.status == 200 && set.fallback?.maxAgeSeconds == 60)
        let older = try decode(#"{"root": "/r", "defaultQuality": 70}"#)
        #expect(older.quality.jpeg == 70 && older.quality.webp == 70 && older.quality.avif == 60)
        var bad = ServerConfiguration(root: "/r")
        bad.quality.webp = 0
        #expect(throws: ServerConfigurationError.self) { try bad.validate() }
        bad = ServerConfiguration(root: "/r")
        bad.avifSpeed = 10
        #expect(throws: ServerConfigurationError.self) { try bad.validate() }
        bad = ServerConfiguration(root: "/r")
        bad.avifMinPixels = -1
        #expect(throws: ServerConfigurationError.self) { try bad.validate() }
        bad = ServerConfiguration(root: "/r")
        bad.fallback = .init(image: "/f.png")
        bad.fallback?.status = 99
        #expect(throws: ServerConfigurationError.self) { try bad.validate() }
    }
}
