import Foundation
import Testing
@_spi(Internal) import Tessera
import TesseraTestSupport

/// The release binary's flags for presets only, allowed sizes and the fallback image, as an operator
/// sets them on the command line and in the environment.
@Suite("tessera serve, presets only, allowed sizes, fallback image, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeOptionsEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    @Test("--only-presets with --fallback-image and --fallback-status; --allowed-widths from the environment")
    func flags() async throws {
        let scratch = try ScratchDirectory("serve-options")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        try FileManager.default.copyItem(atPath: photo.path, toPath: root + "/p.jpg")
        let fallback = scratch.path("fallback.png")
        let placeholder = try Bitmap.drawing(size: PixelSize(width: 80, height: 80)) { $0.fill(with: Color(red: 0, green: 0.5, blue: 1)) }
        try Data(try PNGEncoder().encode(placeholder)).write(to: URL(fileURLWithPath: fallback))

        let presetsOnly = try await Server(["--root", root, "--tables", scratch.path("tables"), "--preset", "t:120x120:fill",
                                            "--only-presets", "--fallback-image", fallback, "--fallback-status", "200",
                                            "--fallback-max-age", "30"], scratch: scratch)
        #expect(try await presetsOnly.get("/v1/resize?src=p.jpg&w=50&h=50").status == 404)
        #expect(try await presetsOnly.get("/v1/t/p.jpg?q=10").status == 400)
        let missing = try await presetsOnly.get("/v1/t/gone.jpg", headers: ["Accept": "image/png"])
        #expect(missing.status == 200)
        #expect(missing.headers["x-tessera-fallback"] == "1")
        #expect(missing.headers["cache-control"] == "public, max-age=30")
        let image = try ImageDecoder().decode(Data(missing.body))
        #expect(image.width == 80 && image.height == 80, "drawn like the preset, which never enlarges its 80×80")
        #expect(image.pixel(x: 40, y: 40).prefix(3).map { Int($0) }.elementsEqual([255, 128, 0], by: { abs($0 - $1) <= 2 }),
                "the fallback's colour (BGR)")
        let found = try await presetsOnly.get("/v1/t/p.jpg")
        #expect(found.status == 200 && found.headers["x-tessera-fallback"] == nil)
        #expect(await presetsOnly.terminate().status == 0)

        let sized = try await Server(["--root", root, "--tables", scratch.path("tables2")], scratch: scratch,
                                     environment: ["TESSERA_ALLOWED_WIDTHS": "100,200", "TESSERA_AVIF_SPEED": "9"])
        #expect(try await sized.get("/v1/resize?src=p.jpg&w=100&h=80").status == 200)
        let refused = try await sized.get("/v1/resize?src=p.jpg&w=150&h=80")
        #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("size_not_allowed"))
        let avif = try await sized.get("/v1/resize?src=p.jpg&w=200&h=150&fmt=avif")
        #expect(avif.status == 200 && avif.headers["content-type"] == "image/avif")
        #expect(await sized.terminate().status == 0)
    }
}
