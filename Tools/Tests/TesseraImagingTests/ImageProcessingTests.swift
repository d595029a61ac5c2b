import Foundation
import Testing
import TesseraImaging
import TesseraTestSupport

/// A 4:3 photo, larger than every box below.
private let photo = PixelSize(width: 4000, height: 3000)
/// The photo upright (3:4).
private let portrait = PixelSize(width: 3000, height: 4000)
/// A source smaller than the 300×300 box.
private let smallSource = PixelSize(width: 200, height: 100)

/// The compass points with the fractions of free space left of and above the crop or image, written out
/// here rather than taken from the library.
private let compass: [(ImageProcessing.Gravity, x: Double, y: Double)] = [
    (.center, 0.5, 0.5), (.north, 0.5, 0), (.south, 0.5, 1), (.east, 1, 0.5), (.west, 0, 0.5),
    (.northEast, 1, 0), (.northWest, 0, 0), (.southEast, 1, 1), (.southWest, 0, 1),
]

private func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> Rect { Rect(x: x, y: y, width: w, height: h) }

/// Whether two rectangles agree to a millionth of a pixel (crops are unrounded doubles).
private func close(_ a: Rect, _ b: Rect) -> Bool {
    abs(a.x - b.x) < 1e-6 && abs(a.y - b.y) < 1e-6 && abs(a.width - b.width) < 1e-6 && abs(a.height - b.height) < 1e-6
}

/// The parameter `validate()` names, or `nil` when the value is valid.
private func refusal(_ processing: ImageProcessing) -> String? {
    do throws(ImageProcessing.Invalid) {
        try processing.validate()
        return nil
    } catch {
        return error.parameter.rawValue
    }
}

@Suite("Image processing")
struct ImageProcessingTests {
    @Test("width or height alone keeps the source's aspect ratio in every mode, uncropped", arguments: ImageProcessing.Mode.allCases)
    func oneSide(mode: ImageProcessing.Mode) throws {
        let byWidth = try ImageProcessing(width: 300, mode: mode).geometry(for: photo)
        #expect(byWidth.canvas == PixelSize(width: 300, height: 300 * 3000 / 4000))
        #expect(byWidth.crop == Rect(size: photo))
        #expect(byWidth.placement == Rect(size: byWidth.canvas))

        let byHeight = try ImageProcessing(height: 100, mode: mode).geometry(for: photo)
        #expect(byHeight.canvas == PixelSize(width: Int((4000.0 * 100 / 3000).rounded()), height: 100))
        #expect(byHeight.canvas.width == 133)
        #expect(byHeight.crop == Rect(size: photo))

        let neither = try ImageProcessing(mode: mode).geometry(for: photo, limits: .init(maximumOutputPixels: 12_000_000))
        #expect(neither.canvas == photo)
    }

    @Test("both sides on a large source: fit, fill, fill-down, force, pad and cover", arguments: ImageProcessing.Mode.allCases)
    func bothSides(mode: ImageProcessing.Mode) throws {
        let g = try ImageProcessing(width: 300, height: 300, mode: mode).geometry(for: photo)
        let fit = min(300.0 / 4000, 300.0 / 3000)
        let fitted = PixelSize(width: Int((4000 * fit).rounded()), height: Int((3000 * fit).rounded()))
        switch mode {
        case .fit:
            #expect(g.canvas == fitted)
            #expect(g.canvas == PixelSize(width: 300, height: 225))
            #expect(g.crop == Rect(size: photo))
        case .fill, .fillDown:
            // Covering scale max(0.075, 0.1) = 0.1: a 3000×3000 window, centred horizontally.
            #expect(g.canvas == PixelSize(width: 300, height: 300))
            #expect(close(g.crop, rect((4000 - 3000) / 2, 0, 3000, 3000)))
            #expect(g.placement == Rect(size: g.canvas))
        case .stretch:
            #expect(g.canvas == PixelSize(width: 300, height: 300))
            #expect(g.crop == Rect(size: photo))
            #expect(g.placement == Rect(size: g.canvas))
        case .pad:
            #expect(g.canvas == PixelSize(width: 300, height: 300))
            #expect(g.crop == Rect(size: photo))
            #expect(g.placement == rect(0, ((300.0 - 225) / 2).rounded(.down), 300, 225))
        case .cover:
            // The covering scale 0.1, uncropped: 400×300, wider than the box.
            #expect(g.canvas == PixelSize(width: 400, height: 300))
            #expect(g.crop == Rect(size: photo))
            #expect(g.placement == Rect(size: g.canvas))
        }
    }

    @Test("enlarge off: a 200×100 source in 300×300 is never drawn larger", arguments: ImageProcessing.Mode.allCases)
    func enlargeOff(mode: ImageProcessing.Mode) throws {
        let g = try ImageProcessing(width: 300, height: 300, mode: mode).geometry(for: smallSource)
        switch mode {
        case .fit, .stretch, .cover:
            #expect(g.canvas == smallSource)
            #expect(g.crop == Rect(size: smallSource))
        case .fill:
            // Scale capped at 1, canvas cut to the source: nothing cropped, the box's aspect ratio lost.
            #expect(g.canvas == smallSource)
            #expect(close(g.crop, Rect(size: smallSource)))
        case .fillDown:
            // The box times min(200/300, 100/300) = ⅓: 100×100, cropped from the middle.
            #expect(g.canvas == PixelSize(width: 100, height: 100))
            #expect(close(g.crop, rect(50, 0, 100, 100)))
        case .pad:
            #expect(g.canvas == PixelSize(width: 300, height: 300))
            #expect(g.placement == rect(50, 100, 200, 100))
        }
        #expect(g.placement.width <= Double(smallSource.width) && g.placement.height <= Double(smallSource.height))
        #expect(try ImageProcessing(width: 400, mode: mode).geometry(for: smallSource).canvas == smallSource)
    }

    @Test("adaptive: a portrait box turns for a landscape source, a square never; cover overflows the box")
    func adaptiveBox() throws {
        func adaptive(_ processing: ImageProcessing) -> ImageProcessing {
            var processing = processing
            processing.adaptive = true
            return processing
        }
        let turned = try adaptive(ImageProcessing(width: 300, height: 400, mode: .fit)).geometry(for: photo)
        #expect(turned.canvas == PixelSize(width: 400, height: 300), "fit in 400×300")
        let kept = try ImageProcessing(width: 300, height: 400, mode: .fit).geometry(for: photo)
        #expect(kept.canvas == PixelSize(width: 300, height: 225))
        let square = try adaptive(ImageProcessing(width: 300, height: 300, mode: .fit)).geometry(for: photo)
        #expect(square.canvas == PixelSize(width: 300, height: 225))
        let portrait = try adaptive(ImageProcessing(width: 400, height: 300, mode: .cover)).geometry(for: PixelSize(width: 3000, height: 4000))
        #expect(portrait.canvas == PixelSize(width: 300, height: 400), "the box turned to 300×400 covers exactly")
        #expect(ImageProcessing(width: 300, height: 400, mode: .cover).maximumOutputSize == nil)
        #expect(adaptive(ImageProcessing(width: 300, height: 400, mode: .fit)).identity.hasSuffix(",adapt=1"))
    }

    @Test("enlarge off with a box larger on one side only: fill crops at scale 1, force caps that side")
    func enlargeOffOneSideLarger() throws {
        let fill = try ImageProcessing(width: 300, height: 50, mode: .fill).geometry(for: smallSource)
        #expect(fill.canvas == PixelSize(width: 200, height: 50))
        #expect(close(fill.crop, rect(0, (100 - 50) / 2, 200, 50)))
        let force = try ImageProcessing(width: 300, height: 50, mode: .stretch).geometry(for: smallSource)
        #expect(force.canvas == PixelSize(width: 200, height: 50))
        let fillDown = try ImageProcessing(width: 400, height: 100, mode: .fillDown).geometry(for: smallSource)
        #expect(fillDown.canvas == PixelSize(width: 200, height: 50), "400×100 times min(200/400, 100/100)")
        #expect(close(fillDown.crop, rect(0, 25, 200, 50)))
    }

    @Test("enlarge on: a 200×100 source grows to the box (fill-down still does not)", arguments: ImageProcessing.Mode.allCases)
    func enlargeOn(mode: ImageProcessing.Mode) throws {
        let g = try ImageProcessing(width: 300, height: 300, mode: mode, enlarge: true).geometry(for: smallSource)
        switch mode {
        case .fit:
            #expect(g.canvas == PixelSize(width: 300, height: 150))
        case .fill:
            // Covering scale 3: a 100×100 window.
            #expect(g.canvas == PixelSize(width: 300, height: 300))
            #expect(close(g.crop, rect(50, 0, 100, 100)))
        case .fillDown:
            #expect(g.canvas == PixelSize(width: 100, height: 100))
        case .stretch:
            #expect(g.canvas == PixelSize(width: 300, height: 300))
            #expect(g.crop == Rect(size: smallSource))
        case .pad:
            #expect(g.canvas == PixelSize(width: 300, height: 300))
            #expect(g.placement == rect(0, 75, 300, 150))
        case .cover:
            // Covering scale 3, uncropped: 600×300.
            #expect(g.canvas == PixelSize(width: 600, height: 300))
            #expect(g.crop == Rect(size: smallSource))
        }
        #expect(try ImageProcessing(width: 400, mode: mode, enlarge: true).geometry(for: smallSource).canvas
            == PixelSize(width: 400, height: 200))
    }

    @Test("fill's crop sits at each compass point, on landscape and portrait sources")
    func compassCrops() throws {
        for (gravity, fx, fy) in compass {
            let wide = try ImageProcessing(width: 300, height: 300, mode: .fill, gravity: gravity).geometry(for: photo)
            #expect(close(wide.crop, rect((4000 - 3000) * fx, 0, 3000, 3000)), "\(gravity)")
            let tall = try ImageProcessing(width: 300, height: 300, mode: .fill, gravity: gravity).geometry(for: portrait)
            #expect(close(tall.crop, rect(0, (4000 - 3000) * fy, 3000, 3000)), "\(gravity)")
        }
        let smart = try ImageProcessing(width: 300, height: 300, mode: .fill, gravity: .smart).geometry(for: photo)
        #expect(close(smart.crop, rect(500, 0, 3000, 3000)), "smart is the centre for now")
    }

    @Test("focal points centre the crop, clamped inside the source at the corners")
    func focalPoints() throws {
        // 300×100 on 4000×3000: scale 0.075, a 4000×1333.3 window; 100×300: scale 0.1, a 1000×3000 window.
        let wideHeight = 100 / 0.075, tallWidth = 100 / 0.1
        let cases: [(x: Double, y: Double, wide: Double, tall: Double)] = [
            (0, 0, 0, 0),
            (1, 1, 3000 - wideHeight, 4000 - tallWidth),
            (1, 0, 0, 4000 - tallWidth),
            (0, 1, 3000 - wideHeight, 0),
            (0.3, 0.5, 0.5 * 3000 - wideHeight / 2, 0.3 * 4000 - tallWidth / 2),
            (0.5, 0.3, 0.3 * 3000 - wideHeight / 2, 0.5 * 4000 - tallWidth / 2),
        ]
        for c in cases {
            let gravity = ImageProcessing.Gravity.focalPoint(x: c.x, y: c.y)
            let wide = try ImageProcessing(width: 300, height: 100, mode: .fill, gravity: gravity).geometry(for: photo)
            #expect(close(wide.crop, rect(0, c.wide, 4000, wideHeight)), "\(gravity)")
            let tall = try ImageProcessing(width: 100, height: 300, mode: .fill, gravity: gravity).geometry(for: photo)
            #expect(close(tall.crop, rect(c.tall, 0, tallWidth, 3000)), "\(gravity)")
        }
    }

    @Test("pad places the fitted image by compass point; focal points and smart in the centre")
    func padPlacement() throws {
        for (gravity, fx, fy) in compass {
            // 300×225 in 300×300 leaves 75 rows; 225×300 leaves 75 columns.
            let wide = try ImageProcessing(width: 300, height: 300, mode: .pad, gravity: gravity).geometry(for: photo)
            #expect(wide.placement == rect(0, (75 * fy).rounded(.down), 300, 225), "\(gravity)")
            let tall = try ImageProcessing(width: 300, height: 300, mode: .pad, gravity: gravity).geometry(for: portrait)
            #expect(tall.placement == rect((75 * fx).rounded(.down), 0, 225, 300), "\(gravity)")
        }
        for gravity in [ImageProcessing.Gravity.focalPoint(x: 0, y: 1), .smart] {
            let g = try ImageProcessing(width: 300, height: 300, mode: .pad, gravity: gravity).geometry(for: photo)
            #expect(g.placement == rect(0, 37, 300, 225), "\(gravity)")
        }
    }

    @Test("DPR multiplies the box before everything, and the output-pixel limit applies after it")
    func devicePixelRatio() throws {
        for dpr in [2, 3] {
            let fit = try ImageProcessing(width: 300, dpr: Double(dpr)).geometry(for: photo)
            #expect(fit.canvas == PixelSize(width: 300 * dpr, height: 225 * dpr))
            let fill = try ImageProcessing(width: 300, height: 200, mode: .fill, dpr: Double(dpr)).geometry(for: photo)
            #expect(fill.canvas == PixelSize(width: 300 * dpr, height: 200 * dpr))
        }
        #expect(try ImageProcessing(width: 301, dpr: 1.5).geometry(for: photo).canvas.width == 452, "451.5 rounds up")
        // Without enlarge a DPR cannot grow the source.
        #expect(try ImageProcessing(width: 300, height: 300, dpr: 3).geometry(for: smallSource).canvas == smallSource)

        let big = PixelSize(width: 8000, height: 8000)
        let atLimit = try ImageProcessing(width: 2000, height: 2000, mode: .fill).geometry(for: big)
        #expect(atLimit.canvas.pixelCount == 4_000_000, "exactly the default limit passes")
        let doubled = ImageProcessing(width: 2000, height: 2000, mode: .fill, dpr: 2)
        #expect(throws: ImageProcessing.Invalid.self) { try doubled.geometry(for: big) }
        do throws(ImageProcessing.Invalid) {
            _ = try doubled.geometry(for: big)
        } catch {
            #expect(error.parameter == .output)
        }
        #expect(try doubled.geometry(for: big, limits: .init(maximumOutputPixels: 16_000_000)).canvas
            == PixelSize(width: 4000, height: 4000))
    }

    @Test("identity: one documented format, equal for equal values, different for every single-field change")
    func identity() {
        #expect(ImageProcessing(width: 300, mode: .fill, gravity: .northEast, dpr: 2).identity
            == "w=300,h=-,m=fill,g=north-east,e=0,bg=ffffffff,dpr=2.0,blur=-,f=-,q=-")
        #expect(ImageProcessing(gravity: .focalPoint(x: 0.25, y: 0.75)).identity.contains(",g=fp:0.25:0.75,"))

        let base = ImageProcessing(width: 300, height: 200, mode: .fill)
        #expect(base.identity == ImageProcessing(width: 300, height: 200, mode: .fill).identity)
        #expect(ImageProcessing(blur: -0.0).identity == ImageProcessing(blur: 0).identity, "equal values, equal identities")

        var variants: [ImageProcessing] = []
        func vary(_ change: (inout ImageProcessing) -> Void) {
            var value = base
            change(&value)
            variants.append(value)
        }
        vary { $0.width = 301 }
        vary { $0.width = nil }
        vary { $0.height = 201 }
        vary { $0.height = nil }
        for mode in ImageProcessing.Mode.allCases where mode != base.mode { vary { $0.mode = mode } }
        for (gravity, _, _) in compass where gravity != base.gravity { vary { $0.gravity = gravity } }
        vary { $0.gravity = .smart }
        vary { $0.gravity = .focalPoint(x: 0.5, y: 0.5) }
        vary { $0.gravity = .focalPoint(x: 0.5, y: 0.25) }
        vary { $0.gravity = .focalPoint(x: 0.25, y: 0.5) }
        vary { $0.enlarge = true }
        vary { $0.background = .clear }
        vary { $0.background.red = 254 }
        vary { $0.background.green = 254 }
        vary { $0.background.blue = 254 }
        vary { $0.background.alpha = 254 }
        vary { $0.dpr = 2 }
        vary { $0.dpr = 1.5 }
        vary { $0.blur = 0 }
        vary { $0.blur = 2.5 }
        for format in ImageFileFormat.encodable { vary { $0.format = format } }
        vary { $0.quality = 80 }
        vary { $0.quality = 81 }

        for variant in variants {
            #expect(variant != base)
            #expect(variant.identity != base.identity, "\(variant.identity)")
        }
        let all = Set(([base] + variants).map(\.identity))
        #expect(all.count == variants.count + 1, "every variant has its own identity")
    }

    @Test("validation names the parameter at fault")
    func validation() {
        #expect(refusal(ImageProcessing()) == nil)
        #expect(refusal(ImageProcessing(width: 8192, height: 1, gravity: .focalPoint(x: 0, y: 1), dpr: 4, quality: 100)) == nil)
        #expect(refusal(ImageProcessing(width: 0)) == "width")
        #expect(refusal(ImageProcessing(width: 8193)) == "width")
        #expect(refusal(ImageProcessing(height: -1)) == "height")
        #expect(refusal(ImageProcessing(dpr: 9)) == "dpr")
        #expect(refusal(ImageProcessing(dpr: 0.5)) == "dpr")
        #expect(refusal(ImageProcessing(dpr: .nan)) == "dpr")
        #expect(refusal(ImageProcessing(gravity: .focalPoint(x: 2, y: 2))) == "gravity")
        #expect(refusal(ImageProcessing(gravity: .focalPoint(x: 0.5, y: -0.1))) == "gravity")
        #expect(refusal(ImageProcessing(quality: 0)) == "quality")
        #expect(refusal(ImageProcessing(quality: 101)) == "quality")
        #expect(refusal(ImageProcessing(blur: -1)) == "blur")
        #expect(refusal(ImageProcessing(blur: 101)) == "blur")
        #expect(refusal(ImageProcessing(blur: 100)) == nil)

        #expect(throws: ImageProcessing.Invalid(parameter: .width, message: "0 is not a whole number from 1 to 8192")) {
            try ImageProcessing(width: 0).geometry(for: photo)
        }
        do throws(ImageProcessing.Invalid) {
            _ = try ImageProcessing(width: 10).geometry(for: PixelSize(width: 0, height: 10))
            Issue.record("a zero-width source was accepted")
        } catch {
            #expect(error.parameter == .source)
        }
    }

    @Test("JSON round-trips every field, and recipes may leave fields out")
    func codable() throws {
        let values = [
            ImageProcessing(),
            ImageProcessing(width: 300, height: 200, mode: .fillDown, gravity: .southWest, enlarge: true,
                       background: ImageProcessing.Background(red: 1, green: 2, blue: 3, alpha: 4), dpr: 2.5, blur: 1.5,
                       format: .webp, quality: 70),
            ImageProcessing(height: 50, mode: .pad, gravity: .focalPoint(x: 0.25, y: 0.75)),
            ImageProcessing(width: 10, gravity: .smart, format: .avif),
        ]
        for value in values {
            let data = try JSONEncoder().encode(value)
            #expect(try JSONDecoder().decode(ImageProcessing.self, from: data) == value, "\(String(decoding: data, as: UTF8.self))")
        }

        let recipe = ##"{"width": 300, "mode": "fill-down", "gravity": "north-east", "background": "#FF8800"}"##
        let decoded = try JSONDecoder().decode(ImageProcessing.self, from: Data(recipe.utf8))
        #expect(decoded == ImageProcessing(width: 300, mode: .fillDown, gravity: .northEast,
                                      background: ImageProcessing.Background(red: 255, green: 136, blue: 0)))
        let focal = try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"gravity": {"x": 0.1, "y": 0.9}}"#.utf8))
        #expect(focal.gravity == .focalPoint(x: 0.1, y: 0.9))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"gravity": "up"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"background": "white"}"#.utf8))
        }
    }

    @Test("background colours parse and print as rrggbbaa")
    func backgroundHex() {
        #expect(ImageProcessing.Background(hex: "ff8800") == ImageProcessing.Background(red: 255, green: 136, blue: 0, alpha: 255))
        #expect(ImageProcessing.Background(hex: "#0A0B0C80") == ImageProcessing.Background(red: 10, green: 11, blue: 12, alpha: 128))
        #expect(ImageProcessing.Background(red: 1, green: 2, blue: 3, alpha: 4).hex == "01020304")
        #expect(ImageProcessing.Background.white.hex == "ffffffff")
        for bad in ["", "fff", "ff88001", "gg8800", "+f8800", "#ff88000000"] {
            #expect(ImageProcessing.Background(hex: bad) == nil, "\(bad)")
        }
        for gravity in compass.map(\.0) + [.smart] {
            #expect(gravity.name.flatMap(ImageProcessing.Gravity.init(name:)) == gravity)
        }
    }
}
