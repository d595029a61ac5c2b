import Foundation
import Testing
@_spi(Internal) import Tessera
import TesseraTestSupport

/// The operations of `/v1/resize` and of preset recipes on the release binary: a config file with a
/// watermark and a preset that crops, pads, turns, greys and watermarks; each answer's pixels checked at
/// positions its arithmetic gives, on the 200×100 quadrants (red, green / blue, white); the preset's
/// answer the same bytes after a restart, from its table.
@Suite("tessera serve, image operations, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeOperationsEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    @Test("crop, crop box, trim, padding, rotate, effects, watermark, download name; a preset of them across a restart")
    func operations() async throws {
        let scratch = try ScratchDirectory("serve-operations")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Data(try Quadrants.png()).write(to: URL(fileURLWithPath: root + "/q.png"))
        let black = Bitmap(width: 10, height: 10, style: .bgra32) { view in
            for y in 0..<10 { for x in 0..<10 { (view.row(y) + x * 4).storeBytes(of: 0xFF00_0000 as UInt32, as: UInt32.self) } }
        }
        try Data(try PNGEncoder().encode(black)).write(to: URL(fileURLWithPath: scratch.path("mark.png")))
        let config = """
            {"watermarks": [{"name": "logo", "file": "\(scratch.path("mark.png"))"}],
             "presets": [{"name": "framed", "width": 100, "height": 50, "mode": "fit", "crop": {"width": 100, "height": 50, "gravity": "north-west"},
                          "padding": 5, "rotate": 90, "grayscale": true, "watermark": {"name": "logo", "position": "south-west"}, "format": "png"}]}
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: scratch.path("serve.json")))
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--config", scratch.path("serve.json")]
        let black4: [UInt8] = [0, 0, 0, 255]
        var presetBody: [UInt8] = []
        do {
            let server = try await Server(arguments, scratch: scratch)
            func image(_ query: String) async throws -> Bitmap {
                let answer = try await server.get("/v1/resize?src=q.png&fmt=png&" + query)
                #expect(answer.status == 200, "\(query): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                return try ImageDecoder().decode(Data(answer.body))
            }
            let corner = try await image("crop=100:50&crop_gravity=south-east")
            #expect(corner.width == 100 && corner.height == 50 && Quadrants.close(corner.pixel(x: 50, y: 25), Quadrants.white))
            let box = try await image("crop_box=0,50,100,100&w=50")
            #expect(box.width == 50 && box.height == 25 && Quadrants.close(box.pixel(x: 25, y: 12), Quadrants.blue))
            let turned = try await image("w=40&rotate=270&padding=2&bg=000000")
            #expect(turned.width == 24 && turned.height == 44)
            // A counter-clockwise quarter turn brings the top-right (green) quadrant to the top left.
            #expect(Quadrants.close(turned.pixel(x: 0, y: 0), black4) && Quadrants.close(turned.pixel(x: 4, y: 4), Quadrants.green))
            let grey = try await image("crop=100:50&crop_gravity=north-west&grayscale=1")
            #expect(Quadrants.close(grey.pixel(x: 50, y: 25), [54, 54, 54, 255]), "red's Rec. 709 luma")
            let marked = try await image("watermark=logo&watermark_position=north-east&watermark_offset=5,5")
            #expect(Quadrants.close(marked.pixel(x: 190, y: 10), black4) && Quadrants.close(marked.pixel(x: 197, y: 2), Quadrants.green))
            let trimmed = try await image("padding=7&bg=ff0000&trim=0")   // trim sees the source: nothing to trim, then padding
            #expect(trimmed.width == 214 && trimmed.height == 114)
            let named = try await server.get("/v1/resize?src=q.png&w=20&fmt=webp&filename=Quarter%20view&attachment=1")
            #expect(named.headers["content-disposition"] == "attachment; filename=\"Quarter_view.webp\"")
            #expect(named.headers["last-modified"] != nil)
            let refused = try await server.get("/v1/resize?src=q.png&crop=1:1&crop_box=0,0,1,1")
            #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("bad_crop"))

            // The preset: crop the red quadrant (100×50), fit 100×50, turn (50×100), pad 5 (60×110), grey,
            // the black watermark at the bottom left.
            let preset = try await server.get("/v1/framed/q.png")
            #expect(preset.status == 200 && preset.headers["content-type"] == "image/png")
            let framed = try ImageDecoder().decode(Data(preset.body))
            #expect(framed.width == 60 && framed.height == 110)
            #expect(Quadrants.close(framed.pixel(x: 2, y: 2), [255, 255, 255, 255]), "white padding, grey stays white")
            #expect(Quadrants.close(framed.pixel(x: 30, y: 20), [54, 54, 54, 255]), "the red quadrant, greyed")
            #expect(Quadrants.close(framed.pixel(x: 3, y: 106), black4), "the watermark at the bottom left")
            presetBody = preset.body
            #expect(await server.terminate().status == 0)
        }
        let restarted = try await Server(arguments, scratch: scratch)
        let again = try await restarted.get("/v1/framed/q.png")
        #expect(again.status == 200 && again.headers["x-tessera-cache"] == "table")
        #expect(again.body == presetBody, "the same pixels from the table after a restart")
        #expect(await restarted.terminate().status == 0)
    }
}
