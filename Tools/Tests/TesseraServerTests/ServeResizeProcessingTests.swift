import Foundation
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// `/v1/resize` with the processing vocabulary: one side alone, no upscaling unless asked, gravity and
/// focal points, pad, DPR, flattening for JPEG, and a `400` naming each bad parameter. Pixels are
/// checked against a synthetic source whose content is known: four quadrants of distinct colours.
@Suite("tessera serve: /v1/resize with the processing vocabulary")
struct ServeResizeProcessingTests {
    static let red = Quadrants.red, green = Quadrants.green, blue = Quadrants.blue, white = Quadrants.white

    static func fixture() throws -> ServeFixture {
        let fixture = try ServeFixture()
        try Data(try Quadrants.png()).write(to: fixture.root.appendingPathComponent("quadrants.png"))
        return fixture
    }

    /// The answer to `query` (after `/v1/resize?src=quadrants.png&`), decoded.
    static func image(_ port: Int, _ query: String) async throws -> Bitmap {
        let response = try await RawHTTP.get(port: port, "/v1/resize?src=quadrants.png&" + query)
        #expect(response.status == 200, "\(query): \(response.text.prefix(200))")
        return try ImageDecoder().decode(Data(response.body))
    }

    static func close(_ a: [UInt8], _ b: [UInt8]) -> Bool { Quadrants.close(a, b) }

    @Test("fill at each side's gravity and at a focal point shows the quadrants the crop arithmetic predicts")
    func gravity() async throws {
        let fixture = try Self.fixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            // A 50×50 fill of 200×100 crops a 100×100 window: west is the left half, east the right.
            let cases: [(String, top: [UInt8], bottom: [UInt8])] = [
                ("gravity=west", Self.red, Self.blue), ("gravity=east", Self.green, Self.white),
                ("gravity=north-west", Self.red, Self.blue), ("gravity=south-east", Self.green, Self.white),
                ("fp=0.9,0.5", Self.green, Self.white), ("gravity=fp&fp=0.05,0.5", Self.red, Self.blue),
            ]
            for (query, top, bottom) in cases {
                let image = try await Self.image(port, "w=50&h=50&mode=fill&fmt=png&" + query)
                #expect(image.width == 50 && image.height == 50)
                #expect(Self.close(image.pixel(x: 25, y: 10), top), "\(query): \(image.pixel(x: 25, y: 10))")
                #expect(Self.close(image.pixel(x: 25, y: 40), bottom), "\(query): \(image.pixel(x: 25, y: 40))")
            }
            // Centre straddles the middle: red/green halves on top.
            let centre = try await Self.image(port, "w=50&h=50&mode=fill&fmt=png")
            #expect(Self.close(centre.pixel(x: 5, y: 10), Self.red) && Self.close(centre.pixel(x: 45, y: 10), Self.green))
            // Two requests that differ only in gravity never share an answer.
            let west = try await RawHTTP.get(port: port, "/v1/resize?src=quadrants.png&w=50&h=50&mode=fill&gravity=west")
            let east = try await RawHTTP.get(port: port, "/v1/resize?src=quadrants.png&w=50&h=50&mode=fill&gravity=east")
            #expect(west.headers["etag"] != east.headers["etag"] && west.body != east.body)
        }
    }

    @Test("sizes: one side alone, no upscaling unless enlarge=1, DPR, pad with its background, force")
    func sizes() async throws {
        let fixture = try Self.fixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            for (query, width, height) in [("w=100", 100, 50), ("h=20", 40, 20), ("w=400", 200, 100), ("w=400&enlarge=1", 400, 200),
                                           ("w=300&h=300&mode=fill", 200, 100), ("w=50&dpr=2", 100, 50), ("w=60&h=60&mode=force", 60, 60),
                                           ("w=60&h=60&mode=fill-down", 60, 60)] {
                let image = try await Self.image(port, query + "&fmt=png")
                #expect(image.width == width && image.height == height, "\(query): \(image.width)x\(image.height)")
            }
            // pad: 200×100 fitted to 100×50, centred in 100×100, bars in the background colour.
            let padded = try await Self.image(port, "w=100&h=100&mode=pad&bg=ff00ff&fmt=png")
            #expect(padded.width == 100 && padded.height == 100)
            for (x, y) in [(50, 5), (50, 95), (0, 0), (99, 99)] {
                #expect(padded.pixel(x: x, y: y) == [255, 0, 255, 255], "bar at \(x),\(y)")
            }
            #expect(Self.close(padded.pixel(x: 20, y: 35), Self.red) && Self.close(padded.pixel(x: 80, y: 65), Self.white))
            // force stretches the whole source: every quadrant reaches its corner.
            let forced = try await Self.image(port, "w=60&h=60&mode=force&fmt=png")
            #expect(Self.close(forced.pixel(x: 2, y: 2), Self.red) && Self.close(forced.pixel(x: 57, y: 57), Self.white))
        }
    }

    @Test("a transparent source asked for as JPEG is flattened onto bg")
    func flattening() async throws {
        let fixture = try Self.fixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            // logo.png is 120×120, its left half transparent.
            let response = try await RawHTTP.get(port: port, "/v1/resize?src=logo.png&w=60&fmt=jpeg&bg=00ff00")
            #expect(response.headers["content-type"] == "image/jpeg")
            let image = try ImageDecoder().decode(Data(response.body))
            #expect(Self.close(image.pixel(x: 10, y: 30), [0, 255, 0, 255]), "\(image.pixel(x: 10, y: 30))")
        }
    }

    @Test("bad values are 400 with a code naming the parameter")
    func badValues() async throws {
        let fixture = try Self.fixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            for (query, code) in [("w=50&gravity=up", "bad_gravity"), ("w=0", "bad_size"), ("w=50&dpr=9", "bad_dpr"),
                                  ("w=50&bg=xyz", "bad_bg"), ("w=50&fp=2,2", "bad_fp"), ("w=50&enlarge=yes", "bad_enlarge"),
                                  ("w=50&blur=-1", "bad_blur"), ("w=50&mode=stretch", "bad_mode"), ("h=50&gravity=fp", "bad_gravity"),
                                  ("w=2000&h=2000&dpr=2", "output_too_large")] {
                let response = try await RawHTTP.get(port: port, "/v1/resize?src=quadrants.png&" + query)
                #expect(response.status == 400, "\(query)")
                #expect(response.text.contains("\"error\":\"\(code)\""), "\(query): \(response.text)")
            }
        }
    }
}
