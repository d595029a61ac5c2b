import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

@Suite("Image processing: rendering, blur, smart crop, flattening")
struct ImageProcessingRenderTests {
    /// The compass points with the fractions of free space left of and above the crop, written out here.
    static let compass: [(ImageProcessing.Gravity, x: Double, y: Double)] = [
        (.center, 0.5, 0.5), (.north, 0.5, 0), (.south, 0.5, 1), (.east, 1, 0.5), (.west, 0, 0.5),
        (.northEast, 1, 0), (.northWest, 0, 0), (.southEast, 1, 1), (.southWest, 0, 1),
    ]

    @Test("fill into a square at every compass point shows the quadrants the crop arithmetic predicts",
          arguments: [PixelSize(width: 200, height: 100), PixelSize(width: 100, height: 200)])
    func fillGravity(source: PixelSize) throws {
        let data = try png(try quadrants(width: source.width, height: source.height))
        let side = 50
        // Covering scale: the crop is the short side squared, placed by the gravity's fractions.
        let cropSide = Double(min(source.width, source.height))
        let scale = Double(side) / cropSide
        for (gravity, fx, fy) in Self.compass {
            let output = try render(data, ImageProcessing(width: side, height: side, mode: .fill, gravity: gravity))
            #expect(output.width == side && output.height == side)
            let cropX = (Double(source.width) - cropSide) * fx, cropY = (Double(source.height) - cropSide) * fy
            var checked = 0
            for oy in stride(from: 3, to: side, by: 7) {
                for ox in stride(from: 3, to: side, by: 7) {
                    let sx = cropX + (Double(ox) + 0.5) / scale, sy = cropY + (Double(oy) + 0.5) / scale
                    // Away from the quadrant boundaries, where filtering mixes colours.
                    guard abs(sx - Double(source.width) / 2) > 4, abs(sy - Double(source.height) / 2) > 4 else { continue }
                    let left = sx < Double(source.width) / 2, top = sy < Double(source.height) / 2
                    let expected = top ? (left ? topLeft : topRight) : (left ? bottomLeft : bottomRight)
                    #expect(near(output.pixel(x: ox, y: oy), expected), "\(gravity) on \(source) at (\(ox), \(oy))")
                    checked += 1
                }
            }
            #expect(checked >= 30)
        }
        // The named cases the arithmetic above stands for.
        let landscape = source.width > source.height
        let west = try render(data, ImageProcessing(width: side, height: side, mode: .fill, gravity: .west))
        let northEast = try render(data, ImageProcessing(width: side, height: side, mode: .fill, gravity: .northEast))
        if landscape {
            #expect(near(west.pixel(x: side - 2, y: 2), topLeft) && near(west.pixel(x: side - 2, y: side - 2), bottomLeft))
            #expect(near(northEast.pixel(x: 1, y: 2), topRight))
        } else {
            #expect(near(northEast.pixel(x: 2, y: side - 2), topLeft) && near(northEast.pixel(x: side - 2, y: side - 2), topRight))
        }
    }

    @Test("EXIF orientation: the crop is taken from the upright image, through the JPEG's cheap downscale",
          arguments: ImageOrientation.allCases)
    func orientation(_ orientation: ImageOrientation) throws {
        let stored = try quadrants(width: 400, height: 200)
        let jpeg = Data(ExifOrientationReaderTests.splice(ExifOrientationReaderTests.tiff(orientation: orientation.rawValue, bigEndian: false),
                                                          into: try JPEGEncoder(quality: 95).encode(stored)))
        let upright = try ImageDecoder().decode(jpeg)
        let display = PixelSize(width: upright.width, height: upright.height)
        #expect(display == orientation.displaySize(of: stored.layout.size))
        let side = 50, cropSide = Double(min(display.width, display.height))
        for (gravity, fx, fy) in [(ImageProcessing.Gravity.southEast, 1.0, 1.0), (.northWest, 0, 0)] {
            let output = try render(jpeg, ImageProcessing(width: side, height: side, mode: .fill, gravity: gravity))
            #expect(output.width == side && output.height == side)
            let cropX = (Double(display.width) - cropSide) * fx, cropY = (Double(display.height) - cropSide) * fy
            for oy in stride(from: 4, to: side, by: 8) {
                for ox in stride(from: 4, to: side, by: 8) {
                    let dx = cropX + (Double(ox) + 0.5) * cropSide / Double(side)
                    let dy = cropY + (Double(oy) + 0.5) * cropSide / Double(side)
                    guard abs(dx - Double(display.width) / 2) > 12, abs(dy - Double(display.height) / 2) > 12 else { continue }
                    #expect(near(output.pixel(x: ox, y: oy), upright.pixel(x: Int(dx), y: Int(dy)), 40),
                            "\(orientation) \(gravity) at (\(ox), \(oy)) ← (\(Int(dx)), \(Int(dy)))")
                }
            }
        }
    }

    @Test("drawing a sub-rectangle of a turned image: the rectangle is in upright coordinates")
    func drawSubRectangle() throws {
        // Stored 200×100 turned by .right is 100×200 upright; its top half comes from the stored left half,
        // the stored top-left quadrant on the right and the bottom-left one on the left.
        let stored = try quadrants(width: 200, height: 100)
        let drawn = try Bitmap.drawing(size: PixelSize(width: 50, height: 50)) { context in
            try context.draw(stored, from: Rect(x: 0, y: 0, width: 100, height: 100), in: context.bounds, orientation: .right)
        }
        for y in [2, 25, 47] {
            #expect(near(drawn.pixel(x: 2, y: y), bottomLeft) && near(drawn.pixel(x: 47, y: y), topLeft), "row \(y)")
        }
        // Only the target rectangle is drawn.
        let inset = try Bitmap.drawing(size: PixelSize(width: 50, height: 50)) { context in
            try context.draw(stored, from: Rect(x: 100, y: 0, width: 100, height: 100), in: Rect(x: 10, y: 10, width: 20, height: 20))
        }
        #expect(inset.pixel(x: 9, y: 15) == [0, 0, 0, 0] && inset.pixel(x: 30, y: 15) == [0, 0, 0, 0])
        #expect(near(inset.pixel(x: 12, y: 12), topRight) && near(inset.pixel(x: 28, y: 28), bottomRight))
    }

    @Test("a focal point at (0.9, 0.5) on a landscape crops as east does (clamped to the edge)")
    func focalPoint() throws {
        let data = try png(try quadrants(width: 200, height: 100))
        let focal = try render(data, ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .focalPoint(x: 0.9, y: 0.5)))
        let east = try render(data, ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .east))
        let center = try render(data, ImageProcessing(width: 50, height: 50, mode: .fill))
        #expect(focal.hasSamePixels(as: east))
        #expect(!focal.hasSamePixels(as: center))
        #expect(near(focal.pixel(x: 5, y: 5), topRight) && near(focal.pixel(x: 5, y: 45), bottomRight))
    }

    @Test("pad: the bars are exactly the background, the fitted image is inside the placement")
    func pad() throws {
        let data = try png(try quadrants(width: 200, height: 100))
        let background = try #require(ImageProcessing.Background(hex: "ff0000ff"))
        for (gravity, top) in [(ImageProcessing.Gravity.center, 25), (.north, 0), (.south, 50)] {
            let output = try render(data, ImageProcessing(width: 100, height: 100, mode: .pad, gravity: gravity, background: background))
            #expect(output.width == 100 && output.height == 100)
            for y in 0..<100 {
                for x in stride(from: 0, to: 100, by: 3) {
                    let pixel = output.pixel(x: x, y: y)
                    if y < top || y >= top + 50 {
                        #expect(pixel == opaqueRed, "\(gravity) bar at (\(x), \(y))")
                    } else if pixel == opaqueRed {
                        Issue.record("\(gravity): background inside the image at (\(x), \(y))")
                    }
                }
            }
            #expect(near(output.pixel(x: 10, y: top + 5), topLeft) && near(output.pixel(x: 90, y: top + 45), bottomRight))
        }
    }

    @Test("no upscaling unless enlarge is on; DPR 2 doubles the size")
    func sizes() throws {
        let small = try png(try quadrants(width: 50, height: 40))
        let kept = try render(small, ImageProcessing(width: 200))
        #expect(kept.width == 50 && kept.height == 40)
        let enlarged = try render(small, ImageProcessing(width: 200, enlarge: true))
        #expect(enlarged.width == 200 && enlarged.height == 160)
        #expect(near(enlarged.pixel(x: 5, y: 5), topLeft) && near(enlarged.pixel(x: 195, y: 155), bottomRight))

        let data = try png(try quadrants(width: 200, height: 100))
        let single = try render(data, ImageProcessing(width: 50))
        let double = try render(data, ImageProcessing(width: 50, dpr: 2))
        #expect(single.width == 50 && single.height == 25)
        #expect(double.width == 2 * single.width && double.height == 2 * single.height)
    }

    @Test("force: exactly the box, the whole source stretched")
    func force() throws {
        let data = try png(try quadrants(width: 200, height: 100))
        let output = try render(data, ImageProcessing(width: 60, height: 60, mode: .stretch))
        #expect(output.width == 60 && output.height == 60)
        #expect(near(output.pixel(x: 0, y: 0), topLeft) && near(output.pixel(x: 59, y: 0), topRight))
        #expect(near(output.pixel(x: 0, y: 59), bottomLeft) && near(output.pixel(x: 59, y: 59), bottomRight))
    }

    /// A 40×20 image, black on the left half and white on the right.
    static func edge() throws -> Bitmap {
        try Bitmap.drawing(size: PixelSize(width: 40, height: 20)) { context in
            context.fill(with: .black)
            context.fill(Rect(x: 20, y: 0, width: 20, height: 20), with: .white)
        }
    }

    @Test("blur turns a sharp edge into a ramp and keeps the mean; sigma 0 or nil changes nothing")
    func blur() throws {
        let source = try Self.edge()
        let data = try png(source)
        let sharp = try render(data, ImageProcessing())
        #expect(sharp.hasSamePixels(as: source))
        #expect(try render(data, ImageProcessing(blur: 0)).hasSamePixels(as: source))
        #expect(source.blurred(sigma: 0).hasSamePixels(as: source))

        let blurred = try render(data, ImageProcessing(blur: 2))
        #expect(blurred.width == 40 && blurred.height == 20)
        for y in [0, 10, 19] {
            for x in 18...21 {
                let value = blurred.pixel(x: x, y: y)[0]
                #expect(value > 0 && value < 255, "(\(x), \(y)) is \(value)")
            }
            #expect(blurred.pixel(x: 19, y: y)[0] < blurred.pixel(x: 20, y: y)[0])
            #expect(blurred.pixel(x: 0, y: y)[0] == 0 && blurred.pixel(x: 39, y: y)[0] == 255)
            #expect(blurred.pixel(x: 19, y: y)[3] == 255)
        }
        let before = channels(source), after = channels(blurred)
        let meanBefore = Double(before.reduce(0, +)) / Double(before.count)
        let meanAfter = Double(after.reduce(0, +)) / Double(after.count)
        #expect(abs(meanBefore - meanAfter) <= 1, "\(meanBefore) → \(meanAfter)")
        #expect(source.blurred(sigma: 2).hasSamePixels(as: blurred))
        // A wider blur spreads further.
        let wide = source.blurred(sigma: 6)
        #expect(wide.pixel(x: 12, y: 10)[0] > blurred.pixel(x: 12, y: 10)[0])
    }

    /// A flat grey `size` image with a 120×120 checkerboard of 20-pixel black and white squares at `patch`.
    static func patched(_ size: PixelSize, patch: (x: Int, y: Int)?) throws -> Bitmap {
        try Bitmap.drawing(size: size) { context in
            context.fill(with: Color(red8: 128, green8: 128, blue8: 128))
            guard let patch else { return }
            for row in 0..<6 {
                for column in 0..<6 {
                    context.fill(Rect(x: Double(patch.x + 20 * column), y: Double(patch.y + 20 * row), width: 20, height: 20),
                                 with: (row + column) % 2 == 0 ? .black : .white)
                }
            }
        }
    }

    /// 600×200 with the patch in the right or the left third, 200×600 with it in the bottom third: the
    /// 200×200 centre crop (the middle third) never meets it.
    static let smartLayouts: [(width: Int, height: Int, x: Int, y: Int)] = [
        (600, 200, 450, 40), (600, 200, 30, 40), (200, 600, 40, 450),
    ]

    @Test("smart gravity finds a detailed patch off-centre that the centre crop misses", arguments: smartLayouts)
    func smart(layout: (width: Int, height: Int, x: Int, y: Int)) throws {
        let size = PixelSize(width: layout.width, height: layout.height)
        let source = try Self.patched(size, patch: (layout.x, layout.y))
        let data = try png(source)
        func contents(_ processing: ImageProcessing) throws -> (dark: Int, light: Int, variance: Double) {
            let output = try render(data, processing)
            #expect(output.width == 100 && output.height == 100)
            let greens = (0..<100).flatMap { y in (0..<100).map { x in Double(output.pixel(x: x, y: y)[1]) } }
            let mean = greens.reduce(0, +) / Double(greens.count)
            let variance = greens.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(greens.count)
            return (greens.filter { $0 < 20 }.count, greens.filter { $0 > 235 }.count, variance)
        }
        let center = try contents(ImageProcessing(width: 100, height: 100, mode: .fill))
        #expect(center.dark == 0 && center.light == 0 && center.variance < 1)
        for mode in [ImageProcessing.Mode.fill, .fillDown] {
            let smart = try contents(ImageProcessing(width: 100, height: 100, mode: mode, gravity: .smart))
            #expect(smart.dark > 1000 && smart.light > 1000, "\(mode): \(smart)")
            #expect(smart.variance > 2000)
        }
        // The window chosen directly: the whole 120-pixel patch inside the 200×200 crop.
        let crop = Rect(x: 0, y: 0, width: 200, height: 200)
        let placed = try SmartCrop.place(crop, in: size, image: source)
        #expect(placed.width == 200 && placed.height == 200)
        #expect(placed.x <= Double(layout.x) && placed.maxX >= Double(layout.x + 120), "\(placed)")
        #expect(placed.y <= Double(layout.y) && placed.maxY >= Double(layout.y + 120), "\(placed)")
        #expect(placed.x >= 0 && placed.maxX <= Double(size.width) && placed.y >= 0 && placed.maxY <= Double(size.height))
    }

    @Test("smart crop on an image without detail is the centre; a crop that spans the source stays put")
    func smartFlat() throws {
        let flat = try Self.patched(PixelSize(width: 600, height: 200), patch: nil)
        let placed = try SmartCrop.place(Rect(x: 0, y: 0, width: 200, height: 200), in: PixelSize(width: 600, height: 200), image: flat)
        #expect(placed == Rect(x: (600 - 200) / 2, y: 0, width: 200, height: 200))
        let whole = Rect(x: 0, y: 0, width: 600, height: 200)
        #expect(try SmartCrop.place(whole, in: PixelSize(width: 600, height: 200), image: flat) == whole)
    }

    @Test("a PNG cut in the middle of its image data renders with integrity .truncated")
    func truncated() throws {
        // Noise, so that the compressed data grows with the rows.
        var seed: UInt32 = 12345
        let noise = Bitmap(width: 120, height: 80, style: .bgra32) { view in
            for y in 0..<80 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<120 {
                    for c in 0..<3 {
                        seed = seed &* 1_103_515_245 &+ 12345
                        row[x * 4 + c] = UInt8(truncatingIfNeeded: seed >> 16)
                    }
                    row[x * 4 + 3] = 255
                }
            }
        }
        let file = try PNGEncoder().encode(noise)
        let idat = try #require(file.indices.first { i in i + 4 <= file.count && Array(file[i..<i + 4]) == Array("IDAT".utf8) })
        let length = Int(file[idat - 4]) << 24 | Int(file[idat - 3]) << 16 | Int(file[idat - 2]) << 8 | Int(file[idat - 1])
        let cut = Data(file.prefix(idat + 4 + length * 6 / 10))
        let whole = try render(Data(file), ImageProcessing(width: 60))
        #expect(whole.integrity == .intact)
        let output = try render(cut, ImageProcessing(width: 60))
        #expect(output.integrity == .truncated)
        #expect(output.width == 60 && output.height == 40)
    }

    @Test("errors: a refused processing is .invalid naming the parameter, bad data is the decoder's error")
    func errors() throws {
        let data = try png(try quadrants(width: 20, height: 10))
        #expect(throws: ImageDecoder.RenderError.invalid(ImageProcessing.Invalid(parameter: .width, message: "0 is not a whole number from 1 to 8192"))) {
            try ImageDecoder().render(data, processing: ImageProcessing(width: 0))
        }
        do {
            _ = try ImageDecoder().render(data, processing: ImageProcessing(width: 2000, height: 2000, enlarge: true),
                                          limits: .init(maximumOutputPixels: 1000))
            Issue.record("an output beyond the limit was rendered")
        } catch {
            guard case .invalid(let invalid) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(invalid.parameter == .output)
        }
        do {
            _ = try ImageDecoder().render(Data("not an image".utf8), processing: ImageProcessing(width: 10))
            Issue.record("garbage was rendered")
        } catch {
            guard case .failed(let failure) = error, case .decoding(.unsupportedFormat) = failure.reason else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test("flattening a half-transparent image onto white blends by the premultiplied arithmetic")
    func flatten() throws {
        // Straight red at alpha 128, premultiplied: red 128.
        let alpha = 128
        let premultipliedRed = (255 * alpha + 127) / 255
        let half = Bitmap(width: 4, height: 3, style: .bgra32) { view in
            for y in 0..<3 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<4 {
                    row[x * 4 + 2] = UInt8(premultipliedRed)
                    row[x * 4 + 3] = UInt8(alpha)
                }
            }
        }
        let flat = half.flattened(onto: .white)
        // Over white: c + 255·(1 − a/255) on every channel, alpha 255.
        let uncovered = Double(255 - alpha)
        let expected = [0 + uncovered, 0 + uncovered, Double(premultipliedRed) + uncovered, 255].map { UInt8(min(255, $0.rounded())) }
        #expect(expected == [127, 127, 255, 255])
        for y in 0..<3 {
            for x in 0..<4 { #expect(near(flat.pixel(x: x, y: y), expected, 1)) }
        }
        // Opaque pixels are unchanged; transparent ones become the background.
        let opaque = try quadrants(width: 8, height: 8)
        #expect(opaque.flattened(onto: .white).hasSamePixels(as: opaque))
        let clear = try Bitmap.drawing(size: PixelSize(width: 2, height: 2)) { _ in }
        let background = try #require(ImageProcessing.Background(hex: "336699"))
        #expect(clear.flattened(onto: background).pixel(x: 1, y: 1) == [0x99, 0x66, 0x33, 255])
    }
}

@Suite("Image processing: rotate and flip")
struct ImageProcessingOrientationTests {
    /// Each turn and mirror of a 40×20 image of four quadrants moves each quadrant where the clockwise
    /// turn, then the mirror, puts it (written out here, not worked out by the code under test), swapping
    /// the sides for a quarter turn.
    @Test("rotate and flip move the quadrants where a clockwise turn, then a mirror, puts them")
    func quadrantsMove() throws {
        let data = try png(try quadrants(width: 40, height: 20))
        // Expected colours at the output's top-left, top-right, bottom-left and bottom-right quarters.
        let cases: [(ImageProcessing.Rotation, ImageProcessing.Flip?, [BGRA])] = [
            (.none, nil, [topLeft, topRight, bottomLeft, bottomRight]),
            (.quarter, nil, [bottomLeft, topLeft, bottomRight, topRight]),
            (.half, nil, [bottomRight, bottomLeft, topRight, topLeft]),
            (.threeQuarters, nil, [topRight, bottomRight, topLeft, bottomLeft]),
            (.none, .horizontal, [topRight, topLeft, bottomRight, bottomLeft]),
            (.none, .vertical, [bottomLeft, bottomRight, topLeft, topRight]),
            (.none, .both, [bottomRight, bottomLeft, topRight, topLeft]),
            (.quarter, .horizontal, [topLeft, bottomLeft, topRight, bottomRight]),
            (.quarter, .vertical, [bottomRight, topRight, bottomLeft, topLeft]),
        ]
        for (rotation, flip, expected) in cases {
            let output = try render(data, ImageProcessing(width: 40, height: 20, rotation: rotation, flip: flip))
            let turned = rotation == .quarter || rotation == .threeQuarters
            #expect(output.width == (turned ? 20 : 40) && output.height == (turned ? 40 : 20), "\(rotation) \(String(describing: flip))")
            let (w, h) = (output.width, output.height)
            let probes = [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)]
            for ((x, y), colour) in zip(probes, expected) {
                #expect(near(output.pixel(x: x, y: y), colour), "\(rotation) \(String(describing: flip)) at \(x),\(y)")
            }
        }
    }

    @Test("rotation and flip are part of the identity only when set, and of recipes as rotate and flip")
    func identityAndRecipes() throws {
        let plain = ImageProcessing(width: 300, mode: .fill)
        #expect(plain.identity.hasSuffix(",q=-") && !plain.identity.contains(",r=") && !plain.identity.contains(",fl="))
        #expect(ImageProcessing(width: 300, mode: .fill, rotation: .quarter, flip: .both).identity == plain.identity + ",r=90,fl=hv")
        let recipe = try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"width": 10, "rotate": 270, "flip": "v"}"#.utf8))
        #expect(recipe.rotation == .threeQuarters && recipe.flip == .vertical)
        for bad in [#"{"rotate": 45}"#, #"{"flip": "x"}"#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(ImageProcessing.self, from: Data(bad.utf8)) }
        }
        #expect(ImageProcessing(rotation: .half, flip: .both).outputOrientation == .up, "a half turn mirrored both ways is the identity")
    }
}
