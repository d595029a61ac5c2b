import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// A bitmap whose left half is red and right half is blue (opaque), for placement checks.
func twoColourBitmap(width: Int, height: Int) throws -> Bitmap {
    try Bitmap.drawing(size: PixelSize(width: width, height: height)) { context in
        context.fill(Rect(x: 0, y: 0, width: Double(width) / 2, height: Double(height)), with: Color(red: 1, green: 0, blue: 0))
        context.fill(Rect(x: Double(width) / 2, y: 0, width: Double(width) / 2, height: Double(height)), with: Color(red: 0, green: 0, blue: 1))
    }
}

let red: [UInt8] = [0, 0, 255, 255]
let blue: [UInt8] = [255, 0, 0, 255]
let transparent: [UInt8] = [0, 0, 0, 0]

@Suite("Drawing context")
struct DrawingContextTests {
    @Test("fill paints known colours at known coordinates, BGRA premultiplied")
    func fillColours() throws {
        let image = try Bitmap.drawing(size: PixelSize(width: 10, height: 10)) { context in
            context.fill(Rect(x: 0, y: 0, width: 5, height: 10), with: Color(red: 0, green: 1, blue: 0))
            context.fill(Rect(x: 5, y: 0, width: 5, height: 10), with: Color(red: 1, green: 0, blue: 0, alpha: 0.5))
        }
        #expect(image.pixel(x: 1, y: 1) == [0, 255, 0, 255])
        let half = image.pixel(x: 8, y: 8)
        #expect(half[3] == 128 || half[3] == 127)
        #expect(half[2] == half[3], "premultiplied: red equals alpha")
        #expect(half[0] == 0 && half[1] == 0)
    }

    @Test("rounded-rectangle clip leaves corners untouched and fills the middle")
    func roundedClip() throws {
        let image = try Bitmap.drawing(size: PixelSize(width: 100, height: 100)) { context in
            context.clip(toRoundedRect: context.bounds, radius: 30)
            context.fill(with: Color(red: 1, green: 0, blue: 0))
        }
        #expect(image.pixel(x: 0, y: 0) == transparent)
        #expect(image.pixel(x: 99, y: 99) == transparent)
        #expect(image.pixel(x: 3, y: 3) == transparent)
        #expect(image.pixel(x: 50, y: 50) == red)
        #expect(image.pixel(x: 50, y: 0) == red, "straight edge is inside")
        #expect(image.pixel(x: 0, y: 50) == red)
    }

    @Test("circle clip")
    func circleClip() throws {
        let image = try Bitmap.drawing(size: PixelSize(width: 64, height: 64)) { context in
            context.clip(toEllipseIn: context.bounds)
            context.fill(with: Color.white)
        }
        #expect(image.pixel(x: 32, y: 32) == [255, 255, 255, 255])
        #expect(image.pixel(x: 2, y: 2) == transparent)
        #expect(image.pixel(x: 61, y: 61) == transparent)
    }

    @Test("aspect fill crops the overflow, centred")
    func aspectFill() throws {
        // 200×100 source: left half red, right half blue. Into 50×50 with aspect fill, the centre
        // 100×100 of the source is shown: left 25 columns red, right 25 blue.
        let source = try twoColourBitmap(width: 200, height: 100)
        let image = try Bitmap.drawing(size: PixelSize(width: 50, height: 50)) { context in
            try context.draw(source, in: context.bounds, mode: .fill)
        }
        #expect(image.pixel(x: 0, y: 0) == red)
        #expect(image.pixel(x: 20, y: 49) == red)
        #expect(image.pixel(x: 30, y: 0) == blue)
        #expect(image.pixel(x: 49, y: 49) == blue)
    }

    @Test("aspect fit letterboxes, leaving bars untouched")
    func aspectFit() throws {
        let source = try twoColourBitmap(width: 200, height: 100)
        let image = try Bitmap.drawing(size: PixelSize(width: 50, height: 50)) { context in
            try context.draw(source, in: context.bounds, mode: .fit)
        }
        // Placed at y 12.5…37.5.
        #expect(image.pixel(x: 10, y: 5) == transparent)
        #expect(image.pixel(x: 10, y: 45) == transparent)
        #expect(image.pixel(x: 5, y: 25) == red)
        #expect(image.pixel(x: 45, y: 25) == blue)
    }

    @Test("fill stretches")
    func stretch() throws {
        let source = try twoColourBitmap(width: 200, height: 100)
        let image = try Bitmap.drawing(size: PixelSize(width: 40, height: 80)) { context in
            try context.draw(source, in: context.bounds, mode: .stretch)
        }
        #expect(image.pixel(x: 2, y: 2) == red)
        #expect(image.pixel(x: 2, y: 77) == red)
        #expect(image.pixel(x: 37, y: 40) == blue)
    }

    @Test("downscaling averages (box filter), it does not pick one pixel")
    func boxFilter() throws {
        // Alternating black and white columns shrink to a uniform mid grey.
        let stripes = try Bitmap.drawing(size: PixelSize(width: 64, height: 64)) { context in
            context.fill(with: .black)
            for x in stride(from: 0, to: 64, by: 2) {
                context.fill(Rect(x: Double(x), y: 0, width: 1, height: 64), with: .white)
            }
        }
        let small = try Bitmap.drawing(size: PixelSize(width: 8, height: 8)) { context in
            try context.draw(stripes, in: context.bounds)
        }
        for x in 0..<8 {
            let p = small.pixel(x: x, y: 4)
            #expect((112...143).contains(p[0]), "pixel \(x) is \(p)")
        }
    }

    @Test("orientation: every EXIF orientation maps stored pixels to the expected displayed place",
          arguments: ImageOrientation.allCases)
    func orientation(_ orientation: ImageOrientation) throws {
        // A 4×2 stored image where every pixel has a distinct colour.
        let stored = PixelSize(width: 4, height: 2)
        let source = Bitmap(width: 4, height: 2, style: .bgra32) { view in
            for y in 0..<2 { for x in 0..<4 {
                let p = view.row(y).assumingMemoryBound(to: UInt8.self) + 4 * x
                p[0] = UInt8(x * 60); p[1] = UInt8(y * 200); p[2] = 7; p[3] = 255
            } }
        }
        let shown = orientation.displaySize(of: stored)
        let image = try Bitmap.drawing(size: shown) { context in
            try context.draw(source, in: context.bounds, orientation: orientation)
        }
        for y in 0..<shown.height { for x in 0..<shown.width {
            let s = orientation.storedPoint(x: x, y: y, stored: stored)
            #expect(image.pixel(x: x, y: y) == source.pixel(x: s.x, y: s.y), "(\(x),\(y)) from \(s)")
        } }
    }

    @Test("every pixel style can be drawn into, and gray8 holds luminance", arguments: PixelStyle.allCases)
    func styles(_ style: PixelStyle) throws {
        let image = try Bitmap.drawing(size: PixelSize(width: 20, height: 10), style: style) { context in
            context.fill(Rect(x: 0, y: 0, width: 10, height: 10), with: .white)
            context.fill(Rect(x: 10, y: 0, width: 10, height: 10), with: Color(red: 1, green: 0, blue: 0))
        }
        switch style {
        case .bgra32: #expect(image.pixel(x: 15, y: 5) == red)
        case .bgr32: #expect(image.pixel(x: 15, y: 5) == [0, 0, 255, 255], "the unused byte stays 255")
        case .bgr565:
            let v = UInt16(image.pixel(x: 15, y: 5)[0]) | UInt16(image.pixel(x: 15, y: 5)[1]) << 8
            #expect(v == 0xF800)
            #expect(image.pixel(x: 2, y: 2) == [0xFF, 0xFF])
        case .gray8:
            #expect(image.pixel(x: 2, y: 2) == [255])
            #expect((75...78).contains(image.pixel(x: 15, y: 5)[0]), "red luma ≈ 0.299")
        }
    }

    @Test("clearing an opaque style gives opaque black, not a zero fourth byte")
    func clearOpaque() throws {
        let image = try Bitmap.drawing(size: PixelSize(width: 4, height: 4), style: .bgr32) { context in
            context.clear()
            context.fill(Rect(x: 0, y: 0, width: 2, height: 4), with: Color(red: 1, green: 0, blue: 0))
        }
        #expect(image.pixel(x: 0, y: 0) == [0, 0, 255, 255])
        #expect(image.pixel(x: 3, y: 0) == [0, 0, 0, 255])
    }

    @Test("a context over caller-owned memory with a custom stride writes only inside rows")
    func callerMemory() throws {
        let layout = try BitmapLayout(width: 3, height: 2, style: .bgra32, bytesPerRow: 16)
        var memory = [UInt8](repeating: 0xAA, count: 32)
        try memory.withUnsafeMutableBytes { raw in
            let view = MutableBitmapView(layout: layout, baseAddress: raw.baseAddress!)
            try DrawingContext.draw(into: view) { context in context.clear(to: .white) }
        }
        #expect(Array(memory[0..<12]) == [UInt8](repeating: 255, count: 12))
        #expect(Array(memory[12..<16]) == [0xAA, 0xAA, 0xAA, 0xAA], "row padding untouched")
    }

    @Test("overlay blends with alpha")
    func overlay() throws {
        let badge = try Bitmap.drawing(size: PixelSize(width: 4, height: 4)) { $0.fill(with: .white) }
        let image = try Bitmap.drawing(size: PixelSize(width: 8, height: 8)) { context in
            context.fill(with: .black)
            try context.drawOverlay(badge, in: Rect(x: 4, y: 4, width: 4, height: 4), alpha: 0.5)
        }
        #expect(image.pixel(x: 1, y: 1) == [0, 0, 0, 255])
        #expect((126...129).contains(image.pixel(x: 6, y: 6)[0]))
    }
}
