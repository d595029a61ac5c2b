import Foundation
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// Presets as full recipes, written in the JSON config: gravity, pad and background, blur, one side only,
/// smart crop, format and quality, each answered from its table after a restart, and tables keyed by
/// everything that shapes the pixels.
@Suite("tessera serve: presets as recipes")
struct ServePresetRecipeTests {
    /// Presets as an operator writes them in the config file.
    static let recipes = """
    {"root": "unused", "presets": [
      {"name": "ne", "width": 50, "height": 50, "mode": "fill", "gravity": "north-east"},
      {"name": "sw", "width": 50, "height": 50, "mode": "fill", "gravity": "south-west"},
      {"name": "padded", "width": 100, "height": 100, "mode": "pad", "background": "00ff00", "gravity": "north"},
      {"name": "soft", "width": 100, "height": 50, "mode": "fill", "blur": 3, "format": "webp", "quality": 90},
      {"name": "w80", "width": 80},
      {"name": "smart", "width": 100, "height": 100, "mode": "fill", "gravity": "smart"}
    ]}
    """

    /// The quadrants fixture of ``ServeResizeProcessingTests`` plus `patch.png`: 300×100 of flat grey with
    /// a fine checkerboard at x 220…279, y 20…79 (the salient object, far right of centre).
    static func fixture() throws -> ServeFixture {
        let fixture = try ServeResizeProcessingTests.fixture()
        let patch = Bitmap(width: 300, height: 100, style: .bgra32) { view in
            for y in 0..<100 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<300 {
                    let inPatch = (220..<280).contains(x) && (20..<80).contains(y)
                    let value: UInt8 = inPatch ? ((x / 3 + y / 3) % 2 == 0 ? 10 : 245) : 128
                    for c in 0..<3 { row[x * 4 + c] = value }
                    row[x * 4 + 3] = 255
                }
            }
        }
        try Data(try PNGEncoder().encode(patch)).write(to: fixture.root.appendingPathComponent("patch.png"))
        return fixture
    }

    static func configuration(_ fixture: ServeFixture) throws -> ServerConfiguration {
        var configuration = try JSONDecoder().decode(ServerConfiguration.self, from: Data(recipes.utf8))
        configuration.root = fixture.root.path
        configuration.tablesDirectory = fixture.tables.path
        return configuration
    }

    static func pixel(_ image: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        image.withUnsafeBytes { bytes in Array(bytes[(y * image.bytesPerRow + x * 4)..<(y * image.bytesPerRow + x * 4 + 4)]) }
    }

    /// The standard deviation of the grey level (blue channel) over the whole image.
    static func spread(_ image: Bitmap) -> Double {
        var values: [Double] = []
        for y in 0..<image.height { for x in 0..<image.width { values.append(Double(pixel(image, x, y)[0])) } }
        let mean = values.reduce(0, +) / Double(values.count)
        return (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
    }

    /// Asks for every recipe and checks what each option must show; `outcome` is the `X-Tessera-Cache` expected.
    static func checkRecipes(port: Int, outcome: String) async throws {
        func get(_ target: String, outcome: String = outcome) async throws -> (RawHTTP.Response, Bitmap) {
            let response = try await RawHTTP.get(port: port, target)
            #expect(response.status == 200, "\(target): \(response.text.prefix(200))")
            #expect(response.headers["x-tessera-cache"] == outcome, "\(target)")
            return (response, try ImageDecoder().decode(Data(response.body)))
        }
        let close = ServeResizeProcessingTests.close
        // 200×100 covering 50×50 at scale ½: a 100×100 crop at the right edge (north-east) is the green
        // top-right quadrant and the blue-bottom-left one is the left half.
        let (_, ne) = try await get("/v1/ne/quadrants.png?fmt=png")
        #expect(ne.width == 50 && ne.height == 50)
        #expect(close(pixel(ne, 5, 5), ServeResizeProcessingTests.green) && close(pixel(ne, 44, 44), ServeResizeProcessingTests.white))
        let (_, sw) = try await get("/v1/sw/quadrants.png?fmt=png")
        #expect(close(pixel(sw, 5, 5), ServeResizeProcessingTests.red) && close(pixel(sw, 5, 44), ServeResizeProcessingTests.blue))
        // pad: 100×50 at the top of 100×100 (north), green bars below.
        let (_, padded) = try await get("/v1/padded/quadrants.png?fmt=png")
        #expect(padded.width == 100 && padded.height == 100)
        #expect(close(pixel(padded, 10, 10), ServeResizeProcessingTests.red) && close(pixel(padded, 50, 80), [0, 255, 0, 255]))
        // The recipe's format and quality; `fmt` still overrides the format.
        let (soft, blurred) = try await get("/v1/soft/quadrants.png")
        #expect(soft.headers["content-type"] == "image/webp")
        #expect(blurred.width == 100 && blurred.height == 50)
        // Blurred: the quadrants' edge at x = 50 is a ramp, not a step.
        #expect(!close(pixel(blurred, 49, 10), ServeResizeProcessingTests.red) && !close(pixel(blurred, 50, 10), ServeResizeProcessingTests.green))
        let (png, _) = try await get("/v1/soft/quadrants.png?fmt=png", outcome: "table")   // one slot, whatever the format
        #expect(png.headers["content-type"] == "image/png")
        // Width only: the aspect ratio kept.
        let (_, w80) = try await get("/v1/w80/quadrants.png?fmt=png")
        #expect(w80.width == 80 && w80.height == 40)
        // Smart: the 100×100 window holds the checkerboard (a centre crop is flat grey: spread 0).
        let (_, smart) = try await get("/v1/smart/patch.png?fmt=png")
        #expect(smart.width == 100 && smart.height == 100)
        #expect(spread(smart) > 60, "the smart crop missed the detailed patch: spread \(spread(smart))")
    }

    @Test("every option of a recipe shows in its answer, first drawn, then from the table after a restart")
    func recipesAnswerFromTheirTables() async throws {
        let fixture = try Self.fixture()
        let configuration = try Self.configuration(fixture)
        try await fixture.withServer(configuration) { port, _ in try await Self.checkRecipes(port: port, outcome: "produced") }
        try await fixture.withServer(configuration) { port, server in
            try await Self.checkRecipes(port: port, outcome: "table")
            #expect(server.service.statistics.decodes == 0)
        }
    }

    @Test("a recipe that changes its gravity gets a new table; one that changes only its encoding keeps it")
    func tablesAreKeyedByTheRecipe() async throws {
        let fixture = try Self.fixture()
        let northEast = try Self.configuration(fixture)
        try await fixture.withServer(northEast) { port, _ in
            let first = try await RawHTTP.get(port: port, "/v1/ne/quadrants.png")
            #expect(first.headers["x-tessera-cache"] == "produced")
        }
        var southWest = northEast
        southWest.presets[0].processing.gravity = .southWest
        try await fixture.withServer(southWest) { port, _ in
            let response = try await RawHTTP.get(port: port, "/v1/ne/quadrants.png?fmt=png")
            #expect(response.headers["x-tessera-cache"] == "produced", "another gravity never reads the old slot")
            let image = try ImageDecoder().decode(Data(response.body))
            #expect(ServeResizeProcessingTests.close(Self.pixel(image, 5, 5), ServeResizeProcessingTests.red))
        }
        var encoded = northEast
        encoded.presets[0].processing.format = .webp
        encoded.presets[0].processing.quality = 50
        try await fixture.withServer(encoded) { port, _ in
            let response = try await RawHTTP.get(port: port, "/v1/ne/quadrants.png")
            #expect(response.headers["x-tessera-cache"] == "table")
            #expect(response.headers["content-type"] == "image/webp")
        }
    }

    @Test("an image taller than a width-only preset's slot is answered without the table")
    func aTallImageOfAWidthOnlyPresetIsNotStored() async throws {
        let fixture = try Self.fixture()
        try ServeFixture.png(width: 40, height: 200, alpha: false).write(to: fixture.root.appendingPathComponent("tall.png"))
        let configuration = try Self.configuration(fixture)
        for _ in 0..<2 {   // the second server finds no entry: nothing was stored
            try await fixture.withServer(configuration) { port, _ in
                let response = try await RawHTTP.get(port: port, "/v1/w80/tall.png?fmt=png")
                #expect(response.status == 200)
                #expect(response.headers["x-tessera-cache"] == "produced")
                let image = try ImageDecoder().decode(Data(response.body))
                #expect(image.width == 40 && image.height == 200, "never enlarged; 1:5 does not fit the 80×160 slot")
            }
        }
    }

    @Test("presets parse from flags with one side, every mode, and refuse what cannot work")
    func presetsParseAndValidate() throws {
        let wide = try ServerConfiguration.Preset(parsing: "w:300x:fill-down")
        #expect(wide.processing == ImageProcessing(width: 300, mode: .fillDown))
        #expect(try ServerConfiguration.Preset(parsing: "h:x120:pad").processing == ImageProcessing(height: 120, mode: .pad))
        #expect(PresetTable.slotSize(of: wide.processing) == PixelSize(width: 300, height: 600))
        #expect(PresetTable.slotSize(of: ImageProcessing(width: 100, height: 50, dpr: 2)) == PixelSize(width: 200, height: 100))
        for bad in ["x:x:fit", "x:10x10:up", "x:10y10:fit", "x:axb:fit"] {
            #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.Preset(parsing: bad) }
        }
        var configuration = ServerConfiguration(root: "/tmp")
        configuration.presets = [ServerConfiguration.Preset(name: "p", processing: ImageProcessing(mode: .fill))]
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        configuration.presets = [ServerConfiguration.Preset(name: "p", processing: ImageProcessing(width: 100, dpr: 9))]
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        configuration.presets = [ServerConfiguration.Preset(name: "p", processing: ImageProcessing(width: 100, dpr: 2, blur: 2))]
        try configuration.validate()
    }
}
