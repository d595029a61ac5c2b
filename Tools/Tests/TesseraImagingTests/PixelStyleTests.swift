import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Pixel styles and row alignment")
struct PixelStyleTests {
    @Test("hasTransparentPixels finds one pixel that is not opaque wherever it is, odd widths and row ends included")
    func transparentPixelAnywhere() throws {
        for width in 1...5 {
            for height in 1...3 {
                let opaque = try CodecTestSupport.bitmap(width: width, height: height, style: .bgra32) { _, _ in [10, 20, 30, 255] }
                #expect(!opaque.hasTransparentPixels, "\(width)×\(height)")
                for index in 0..<(width * height) {
                    let one = try CodecTestSupport.bitmap(width: width, height: height, style: .bgra32) { x, y in
                        y * width + x == index ? [10, 20, 30, 254] : [10, 20, 30, 255]
                    }
                    #expect(one.hasTransparentPixels, "\(width)×\(height), pixel \(index)")
                }
            }
        }
        let padded = try CodecTestSupport.bitmap(width: 3, height: 2, style: .bgr32) { _, _ in [1, 2, 3, 255] }
        #expect(!padded.hasTransparentPixels, "an opaque style is never scanned")
    }

    @Test("rows are multiples of 64 bytes and of 8 pixels", arguments: PixelStyle.allCases)
    func rowAlignment(style: PixelStyle) {
        for width in [1, 7, 8, 63, 64, 100, 101, 1000, 2561] {
            let bpr = style.bytesPerRow(forWidth: width)
            #expect(bpr % 64 == 0)
            #expect(bpr % (8 * style.bytesPerPixel) == 0)
            #expect(bpr >= width * style.bytesPerPixel)
            #expect(bpr - width * style.bytesPerPixel < 64, "no more padding than needed")
        }
    }

    @Test("100-pixel BGRA row is 448 bytes")
    func knownValue() {
        #expect(PixelStyle.bgra32.bytesPerRow(forWidth: 100) == 448)
        #expect(PixelStyle.gray8.bytesPerRow(forWidth: 100) == 128)
        #expect(PixelStyle.bgr565.bytesPerRow(forWidth: 100) == 256)
    }

    @Test("explicit layouts reject impossible strides")
    func invalidLayout() {
        #expect(throws: TesseraError.self) { try BitmapLayout(width: 10, height: 10, style: .bgra32, bytesPerRow: 39) }
        #expect(throws: TesseraError.self) { try BitmapLayout(width: 0, height: 10, style: .gray8, bytesPerRow: 64) }
        #expect((try? BitmapLayout(width: 10, height: 10, style: .bgra32, bytesPerRow: 40)) != nil)
    }

    @Test("size parsing")
    func parsing() {
        #expect(PixelSize(parsing: "100x80") == PixelSize(width: 100, height: 80))
        #expect(PixelSize(parsing: "0x80") == nil)
        #expect(PixelSize(parsing: "abc") == nil)
    }
}
