import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// `copyPixels(as:)`: owned copies in RGBA/BGRA, straight or premultiplied, from every pixel style.
@Suite("pixel export")
struct PixelExportTests {
    /// A 3×2 bgra32 bitmap: a half-transparent pixel, an opaque one, a transparent one, then grays.
    static func sample() -> Bitmap {
        Bitmap(width: 3, height: 2, style: .bgra32) { view in
            let pixels: [[UInt8]] = [[40, 80, 120, 128], [10, 20, 30, 255], [0, 0, 0, 0], [7, 7, 7, 255], [9, 9, 9, 255], [200, 100, 50, 255]]
            for (i, pixel) in pixels.enumerated() {
                (view.row(i / 3) + (i % 3) * 4).copyMemory(from: pixel, byteCount: 4)
            }
        }
    }

    @Test("RGBA straight un-premultiplies and swaps red and blue; rows are packed")
    func rgbaStraight() {
        let bytes = Self.sample().copyPixels(as: .rgbaStraight)
        #expect(bytes.count == 3 * 2 * 4)
        // Premultiplied (b 40, g 80, r 120, a 128) → straight (r 239, g 159, b 80): round(c × 255 / 128).
        #expect(Array(bytes[0..<4]) == [239, 159, 80, 128])
        #expect(Array(bytes[4..<8]) == [30, 20, 10, 255])
        #expect(Array(bytes[8..<12]) == [0, 0, 0, 0])
        #expect(Array(bytes[20..<24]) == [50, 100, 200, 255])
    }

    @Test("BGRA premultiplied is the visible bytes unchanged")
    func bgraPremultiplied() {
        let image = Self.sample()
        let bytes = image.copyPixels(as: .bgraPremultiplied)
        for y in 0..<2 {
            for x in 0..<3 { #expect(Array(bytes[(y * 3 + x) * 4..<(y * 3 + x) * 4 + 4]) == image.pixel(x: x, y: y)) }
        }
    }

    @Test("opaque styles export with alpha 255")
    func gray() {
        let gray = Bitmap(width: 2, height: 1, style: .gray8) { view in
            view.row(0).storeBytes(of: 17, as: UInt8.self)
            (view.row(0) + 1).storeBytes(of: 230, as: UInt8.self)
        }
        #expect(gray.copyPixels(as: .rgbaStraight) == [17, 17, 17, 255, 230, 230, 230, 255])
    }
}
