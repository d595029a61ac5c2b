import Foundation
import Testing
@_spi(Internal) import TesseraImaging

/// A `width`×`height` image of `background` with a `rect` of `inside`, drawn pixel by pixel (no filtering).
private func framed(width: Int, height: Int, background: BGRA, rect: (x: Int, y: Int, width: Int, height: Int), inside: BGRA) -> Bitmap {
    Bitmap(width: width, height: height, style: .bgra32) { view in
        for y in 0..<height {
            let row = view.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let isInside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
                for c in 0..<4 { row[x * 4 + c] = (isInside ? inside : background)[c] }
            }
        }
    }
}

/// Whether every pixel of `bitmap` is within `tolerance` of `colour`.
private func uniform(_ bitmap: Bitmap, _ colour: BGRA, tolerance: Int = 2) -> Bool {
    (0..<bitmap.height).allSatisfy { y in (0..<bitmap.width).allSatisfy { x in near(bitmap.pixel(x: x, y: y), colour, tolerance) } }
}

/// The invalid parameter `processing` is refused with when it renders `data`, or `nil`.
private func refusal(_ data: Data, _ processing: ImageProcessing, limits: ImageProcessing.Limits = .init()) -> ImageProcessing.Parameter? {
    do {
        _ = try ImageDecoder().render(data, processing: processing, limits: limits)
        return nil
    } catch {
        if case .invalid(let invalid) = error { return invalid.parameter }
        return nil
    }
}

@Suite("Image processing: crop, trim, padding and effects")
struct ImageProcessingOperationsTests {
    /// The 200×100 quadrants (blue, green / yellow, magenta), cut by a crop before anything else.
    @Test("crop cuts the region its size and gravity give, in pixels or fractions, before the resize")
    func crop() throws {
        let data = try png(try quadrants(width: 200, height: 100))
        // Each quarter alone: a 100×50 crop at a corner is one quadrant's colour all over.
        for (gravity, colour) in [(ImageProcessing.Gravity.northWest, topLeft), (.northEast, topRight),
                                  (.southWest, bottomLeft), (.southEast, bottomRight)] {
            let output = try render(data, ImageProcessing(crop: .init(width: 100, height: 50, gravity: gravity)))
            #expect(output.width == 100 && output.height == 50, "\(gravity)")
            #expect(uniform(output, colour), "\(gravity)")
        }
        // Fractions and pixels agree; centred, the region (50, 25)–(150, 75) shows all four quadrants.
        for crop in [ImageProcessing.Crop(width: 100, height: 50), .init(width: 0.5, height: 0.5)] {
            let output = try render(data, ImageProcessing(crop: crop))
            #expect(output.width == 100 && output.height == 50)
            #expect(near(output.pixel(x: 10, y: 10), topLeft) && near(output.pixel(x: 90, y: 10), topRight))
            #expect(near(output.pixel(x: 10, y: 40), bottomLeft) && near(output.pixel(x: 90, y: 40), bottomRight))
        }
        // A focal point at (0.9, 0.5) centres the 100×50 region on (180, 50), moved back inside: x = 100.
        let focal = try render(data, ImageProcessing(crop: .init(width: 100, height: 50, gravity: .focalPoint(x: 0.9, y: 0.5))))
        #expect(near(focal.pixel(x: 50, y: 10), topRight) && near(focal.pixel(x: 50, y: 40), bottomRight))
        // 0 is the whole side; then the resize works on the region: 200×50 (the top half) to 40 wide.
        let strip = try render(data, ImageProcessing(width: 40, crop: .init(width: 0, height: 50, gravity: .north)))
        #expect(strip.width == 40 && strip.height == 10)
        #expect(near(strip.pixel(x: 5, y: 5), topLeft) && near(strip.pixel(x: 35, y: 5), topRight))
    }

    @Test("a crop box is clamped to the source; outside it, or with a crop, it is refused as crop")
    func cropBox() throws {
        let data = try png(try quadrants(width: 200, height: 100))
        let box = try render(data, ImageProcessing(cropBox: .init(left: 0, top: 50, right: 100, bottom: 100)))
        #expect(box.width == 100 && box.height == 50 && uniform(box, bottomLeft))
        let clamped = try render(data, ImageProcessing(cropBox: .init(left: 150, top: 0, right: 9000, bottom: 40)))
        #expect(clamped.width == 50 && clamped.height == 40 && uniform(clamped, topRight))
        #expect(refusal(data, ImageProcessing(cropBox: .init(left: 300, top: 0, right: 400, bottom: 10))) == .crop)
        #expect(refusal(data, ImageProcessing(cropBox: .init(left: 10, top: 0, right: 5, bottom: 10))) == .crop)
        #expect(refusal(data, ImageProcessing(crop: .init(width: 10, height: 10), cropBox: .init(left: 0, top: 0, right: 5, bottom: 5))) == .crop)
        #expect(refusal(data, ImageProcessing(crop: .init(width: -1, height: 10))) == .crop)
    }

    @Test("trim removes the border of the top-left pixel's colour, within the threshold, transparent too")
    func trim() throws {
        let white: BGRA = [255, 255, 255, 255]
        let framedRed = try png(framed(width: 60, height: 40, background: white, rect: (25, 12, 20, 10), inside: opaqueRed))
        let trimmed = try render(framedRed, ImageProcessing(trim: 0))
        #expect(trimmed.width == 20 && trimmed.height == 10 && uniform(trimmed, opaqueRed))
        // Then the resize sees the trimmed region: 20×10 to 10 wide.
        let resized = try render(framedRed, ImageProcessing(width: 10, trim: 0))
        #expect(resized.width == 10 && resized.height == 5 && uniform(resized, opaqueRed))
        // A border of near-white (250) inside the white one is trimmed at 10, kept at 0.
        let nearWhite: BGRA = [250, 250, 250, 255]
        let twoTone = framed(width: 60, height: 40, background: white, rect: (5, 5, 50, 30), inside: nearWhite)
        let inner = try png(Bitmap(width: 60, height: 40, style: .bgra32) { view in
            twoTone.withUnsafeBytes { bytes in view.baseAddress.copyMemory(from: bytes.baseAddress!, byteCount: twoTone.layout.byteCount) }
            for y in 15..<25 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 20..<40 { for c in 0..<4 { row[x * 4 + c] = opaqueRed[c] } }
            }
        })
        let loose = try render(inner, ImageProcessing(trim: 10))
        #expect(loose.width == 20 && loose.height == 10 && uniform(loose, opaqueRed))
        let strict = try render(inner, ImageProcessing(trim: 0))
        #expect(strict.width == 50 && strict.height == 30)
        // Transparent borders: a transparent corner trims every transparent pixel.
        let clear: BGRA = [0, 0, 0, 0]
        let floating = try png(framed(width: 30, height: 30, background: clear, rect: (10, 4, 8, 20), inside: opaqueRed))
        let cut = try render(floating, ImageProcessing(trim: 0))
        #expect(cut.width == 8 && cut.height == 20 && uniform(cut, opaqueRed))
        // A flat image is all border: left whole.
        let flat = try png(framed(width: 16, height: 12, background: white, rect: (0, 0, 0, 0), inside: white))
        let whole = try render(flat, ImageProcessing(trim: 30))
        #expect(whole.width == 16 && whole.height == 12)
        #expect(refusal(flat, ImageProcessing(trim: 256)) == .trim)
    }

    @Test("padding surrounds the turned output with the background, and counts in the output-pixel limit")
    func padding() throws {
        let data = try png(try quadrants(width: 40, height: 20))
        let padding = ImageProcessing.Padding(top: 2, right: 4, bottom: 6, left: 8)
        let output = try render(data, ImageProcessing(width: 40, background: .init(red: 255, green: 0, blue: 0), padding: padding))
        #expect(output.width == 40 + 12 && output.height == 20 + 8)
        for (x, y) in [(0, 0), (7, 10), (48, 10), (51, 27), (20, 1), (20, 22)] {
            #expect(near(output.pixel(x: x, y: y), opaqueRed), "(\(x), \(y)) is padding")
        }
        #expect(near(output.pixel(x: 8 + 2, y: 2 + 2), topLeft) && near(output.pixel(x: 8 + 37, y: 2 + 17), bottomRight))
        // After a quarter turn: the turned 20×40 image, then the padding.
        let turned = try render(data, ImageProcessing(width: 40, rotation: .quarter, padding: padding))
        #expect(turned.width == 20 + 12 && turned.height == 40 + 8)
        #expect(near(turned.pixel(x: 8 + 2, y: 2 + 2), bottomLeft), "a quarter turn brings the bottom-left quadrant to the top left")
        // 100×100 fits a 10,000-pixel limit; padded by 1 it does not.
        let big = try png(try quadrants(width: 200, height: 200))
        let limits = ImageProcessing.Limits(maximumOutputPixels: 10_000)
        #expect(refusal(big, ImageProcessing(width: 100, height: 100), limits: limits) == nil)
        #expect(refusal(big, ImageProcessing(width: 100, height: 100, padding: .init(1)), limits: limits) == .output)
        #expect(refusal(big, ImageProcessing(width: 100, padding: .init(top: -1, right: 0, bottom: 0, left: 0))) == .padding)
        #expect(ImageProcessing(width: 300, height: 200, rotation: .quarter, padding: .init(10)).maximumOutputSize
                == PixelSize(width: 220, height: 320))
    }

    @Test("sharpen overshoots both sides of an edge and leaves flat areas; sigma 0 changes nothing")
    func sharpen() throws {
        let dark: BGRA = [100, 100, 100, 255], light: BGRA = [200, 200, 200, 255]
        let edge = try png(framed(width: 40, height: 10, background: dark, rect: (20, 0, 20, 10), inside: light))
        let sharp = try render(edge, ImageProcessing(sharpen: 1))
        #expect(sharp.pixel(x: 19, y: 5)[1] < 95 && sharp.pixel(x: 20, y: 5)[1] > 205,
                "\(sharp.pixel(x: 19, y: 5)) \(sharp.pixel(x: 20, y: 5))")
        #expect(near(sharp.pixel(x: 2, y: 5), dark, 1) && near(sharp.pixel(x: 37, y: 5), light, 1))
        #expect(sharp.pixel(x: 19, y: 5)[3] == 255, "opaque stays opaque")
        let unchanged = try render(edge, ImageProcessing(sharpen: 0))
        #expect(channels(unchanged) == channels(try render(edge, ImageProcessing())))
        #expect(refusal(edge, ImageProcessing(sharpen: 11)) == .sharpen)
    }

    @Test("pixelate paints each block with its pixels' mean, from the top-left corner")
    func pixelate() throws {
        let data = try png(try quadrants(width: 40, height: 20))
        // 10-pixel blocks align with the quadrants: the colours are unchanged.
        let aligned = try render(data, ImageProcessing(pixelate: 10))
        #expect(near(aligned.pixel(x: 5, y: 5), topLeft, 0) && near(aligned.pixel(x: 35, y: 15), bottomRight, 0))
        // One 40-pixel block (cut to 40×20) is the mean of the four colours: (255+0+0+255)/4 = 127.5 → 128 each.
        let whole = try render(data, ImageProcessing(pixelate: 40))
        #expect(uniform(whole, [128, 128, 128, 255], tolerance: 0))
        // 15-pixel blocks: the block at (15, 0) spans columns 15–29 (5 left of the middle, 10 right) and rows
        // 0–14 (10 above, 5 below): 50 blue, 100 green, 25 yellow and 50 magenta pixels of 225. Blue channel
        // 255 × (50 + 50) / 225 = 113.3, green 255 × (100 + 25) / 225 = 141.7, red 255 × (25 + 50) / 225 = 85.
        let straddling = try render(data, ImageProcessing(pixelate: 15))
        #expect(near(straddling.pixel(x: 20, y: 0), [113, 142, 85, 255], 0), "\(straddling.pixel(x: 20, y: 0))")
        #expect(straddling.pixel(x: 29, y: 14) == straddling.pixel(x: 15, y: 0), "one block, one colour")
        #expect(refusal(data, ImageProcessing(pixelate: 0)) == .pixelate)
    }

    @Test("grayscale sets every colour to its Rec. 709 luma")
    func grayscale() throws {
        let data = try png(try quadrants(width: 40, height: 20))
        let grey = try render(data, ImageProcessing(grayscale: true))
        // 256ths: blue 19, green 183, yellow 183 + 54 = 237, magenta 19 + 54 = 73; (w × 255 + 128) >> 8.
        for (x, y, luma) in [(5, 5, 19), (35, 5, 182), (5, 15, 236), (35, 15, 73)] as [(Int, Int, UInt8)] {
            #expect(near(grey.pixel(x: x, y: y), [luma, luma, luma, 255], 1), "(\(x), \(y)): \(grey.pixel(x: x, y: y))")
        }
    }

    @Test("round corners paint outside quarter ellipses, antialiased on the edge; a focal point in pixels centres the crop")
    func roundCornersAndFocalPixels() throws {
        let white: BGRA = [255, 255, 255, 255]
        let canvas = try png(framed(width: 40, height: 20, background: white, rect: (0, 0, 0, 0), inside: white))
        var processing = ImageProcessing()
        processing.roundCorners = ImageProcessing.RoundCorners(horizontal: 8, vertical: 6, colour: ImageProcessing.Background(red: 255, green: 0, blue: 0))
        let rounded = try render(canvas, processing)
        for (x, y) in [(0, 0), (39, 0), (0, 19), (39, 19), (1, 0)] {
            #expect(near(rounded.pixel(x: x, y: y), opaqueRed), "(\(x), \(y)) outside the ellipse: \(rounded.pixel(x: x, y: y))")
        }
        for (x, y) in [(8, 6), (20, 10), (0, 10), (20, 0), (31, 13)] {
            #expect(near(rounded.pixel(x: x, y: y), white), "(\(x), \(y)) inside: \(rounded.pixel(x: x, y: y))")
        }
        let edge = rounded.pixel(x: 2, y: 1)   // on the ellipse's edge: between the two
        #expect(edge[1] > 0 && edge[1] < 255, "antialiased: \(edge)")
        #expect(processing.identity.hasSuffix(",round=8:6:ff0000ff"))
        // 4000×3000 in 300×300: a 3000×3000 window centred on x = 3500 stops at the right edge (1000).
        var focal = ImageProcessing(width: 300, height: 300, mode: .fill)
        focal.gravity = .focalPixel(x: 3500, y: 10)
        let geometry = try focal.geometry(for: PixelSize(width: 4000, height: 3000))
        #expect(abs(geometry.crop.x - 1000) < 0.001 && geometry.crop.y == 0)
        focal.gravity = .focalPixel(x: 1600, y: 10)
        #expect(abs(try focal.geometry(for: PixelSize(width: 4000, height: 3000)).crop.x - 100) < 0.001, "1600 − 1500")
        #expect(focal.gravity.identity == "fpx:1600:10")
        #expect(try JSONDecoder().decode(ImageProcessing.Gravity.self, from: Data(#"{"px": 1600, "py": 10}"#.utf8)) == focal.gravity)
    }

    @Test("a watermark is drawn at its position, offset inward, scaled, at its opacity, or tiled")
    func watermark() throws {
        let white: BGRA = [255, 255, 255, 255]
        let canvas = try png(framed(width: 40, height: 20, background: white, rect: (0, 0, 0, 0), inside: white))
        let mark = framed(width: 4, height: 2, background: opaqueRed, rect: (0, 0, 0, 0), inside: opaqueRed)
        func marked(_ watermark: ImageProcessing.Watermark) throws -> Bitmap {
            try ImageDecoder().render(canvas, processing: ImageProcessing(watermark: watermark), watermark: mark)
        }
        let corner = try marked(.init(name: "logo"))   // south-east, its own size
        #expect(near(corner.pixel(x: 36, y: 18), opaqueRed) && near(corner.pixel(x: 39, y: 19), opaqueRed))
        #expect(near(corner.pixel(x: 35, y: 19), white) && near(corner.pixel(x: 39, y: 17), white))
        let inward = try marked(.init(name: "logo", offsetX: 2, offsetY: 1))   // (40 − 4 − 2, 20 − 2 − 1) = (34, 17)
        #expect(near(inward.pixel(x: 34, y: 17), opaqueRed) && near(inward.pixel(x: 37, y: 18), opaqueRed))
        #expect(near(inward.pixel(x: 38, y: 18), white) && near(inward.pixel(x: 34, y: 19), white))
        let northWest = try marked(.init(name: "logo", position: .gravity(.northWest), offsetX: 1))
        #expect(near(northWest.pixel(x: 1, y: 0), opaqueRed) && near(northWest.pixel(x: 0, y: 0), white))
        // Half opacity over white: 0.5 × (0, 0, 255) + 0.5 × (255, 255, 255) per channel.
        let faint = try marked(.init(name: "logo", opacity: 0.5))
        #expect(near(faint.pixel(x: 38, y: 19), [128, 128, 255, 255], 2), "\(faint.pixel(x: 38, y: 19))")
        // Half the output's width: 20 × 10 (the 2:1 image), at (20, 10).
        let scaled = try marked(.init(name: "logo", scale: 0.5))
        #expect(near(scaled.pixel(x: 20, y: 10), opaqueRed) && near(scaled.pixel(x: 19, y: 10), white) && near(scaled.pixel(x: 20, y: 9), white))
        // Tiled with no gap: red all over; with a gap of (4, 2): tiles at x = 0, 8, 16, … and y = 0, 4, ….
        #expect(uniform(try marked(.init(name: "logo", position: .repeat)), opaqueRed))
        let gapped = try marked(.init(name: "logo", position: .repeat, offsetX: 4, offsetY: 2))
        #expect(near(gapped.pixel(x: 0, y: 0), opaqueRed) && near(gapped.pixel(x: 5, y: 0), white) && near(gapped.pixel(x: 8, y: 1), opaqueRed))
        #expect(near(gapped.pixel(x: 0, y: 2), white) && near(gapped.pixel(x: 0, y: 4), opaqueRed))
        // No pixels for the name, too many tiles, values out of range: refused as the watermark.
        #expect(refusal(canvas, ImageProcessing(watermark: .init(name: "logo"))) == .watermark)
        let dot = framed(width: 1, height: 1, background: opaqueRed, rect: (0, 0, 0, 0), inside: opaqueRed)
        let big = try png(try quadrants(width: 200, height: 100))
        #expect(throws: ImageDecoder.RenderError.self) {
            try ImageDecoder().render(big, processing: ImageProcessing(watermark: .init(name: "dot", position: .repeat)), watermark: dot)
        }
        for bad in [ImageProcessing.Watermark(name: "logo", opacity: 1.5), .init(name: "logo", scale: 0), .init(name: "logo", offsetX: 9000)] {
            #expect(refusal(canvas, ImageProcessing(watermark: bad)) == .watermark, "\(bad)")
        }
        // Its version is part of the identity: new pixels under the same name, a new identity.
        #expect(ImageProcessing(watermark: .init(name: "logo", version: "a")).identity != ImageProcessing(watermark: .init(name: "logo", version: "b")).identity)
    }

    @Test("the operations are part of the identity only when set, and of recipes")
    func identityAndRecipes() throws {
        let plain = ImageProcessing(width: 300, mode: .fill)
        let all = ImageProcessing(width: 300, mode: .fill, crop: .init(width: 0.5, height: 100, gravity: .north), trim: 3,
                                  padding: .init(top: 1, right: 2, bottom: 3, left: 4), sharpen: 0.5, pixelate: 8, grayscale: true)
        #expect(all.identity == plain.identity + ",crop=0.5:100.0:north,trim=3,pad=1,2,3,4,sh=0.5,pix=8,gray=1")
        #expect(ImageProcessing(cropBox: .init(left: 1, top: 2, right: 3, bottom: 4)).identity.hasSuffix(",cbox=1,2,3,4"))
        let recipe = try JSONDecoder().decode(ImageProcessing.self, from: Data(#"""
            {"width": 10, "crop": {"width": 100, "height": 50, "gravity": "south"}, "trim": 5, "padding": 4,
             "sharpen": 1.5, "pixelate": 3, "grayscale": true}
            """#.utf8))
        #expect(recipe.crop == .init(width: 100, height: 50, gravity: .south) && recipe.trim == 5 && recipe.padding == .init(4))
        #expect(recipe.sharpen == 1.5 && recipe.pixelate == 3 && recipe.grayscale)
        let sides = try JSONDecoder().decode(ImageProcessing.self, from: Data(#"""
            {"padding": {"top": 1, "right": 2, "bottom": 3, "left": 4}, "cropBox": {"left": 0, "top": 0, "right": 9, "bottom": 9}}
            """#.utf8))
        #expect(sides.padding == .init(top: 1, right: 2, bottom: 3, left: 4) && sides.cropBox?.right == 9)
        let roundTrip = try JSONDecoder().decode(ImageProcessing.self, from: try JSONEncoder().encode(all))
        #expect(roundTrip == all)
    }
}
