import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Pixel conversions")
struct PixelConversionTests {
    typealias S = CodecTestSupport

    @Test("premultiply rounds and has exact fast paths")
    func premultiply() {
        let bitmap = Bitmap(width: 4, height: 1, style: .bgra32) { view in
            let bytes: [UInt8] = [200, 100, 50, 255, 200, 100, 50, 0, 255, 255, 255, 128, 10, 20, 30, 1]
            view.baseAddress.copyMemory(from: bytes, byteCount: bytes.count)
            PixelConversion.premultiplyBGRA(view)
        }
        #expect(bitmap.pixel(x: 0, y: 0) == [200, 100, 50, 255])
        #expect(bitmap.pixel(x: 1, y: 0) == [0, 0, 0, 0])
        #expect(bitmap.pixel(x: 2, y: 0) == [128, 128, 128, 128])
        #expect(bitmap.pixel(x: 3, y: 0) == [0, 0, 0, 1])
    }

    @Test("premultiply then unpremultiply then premultiply is stable for every alpha")
    func unpremultiplyRoundTrip() {
        for a in 0...255 {
            for c in stride(from: 0, through: a, by: 1) {
                let src: [UInt8] = [UInt8(c), UInt8(c), UInt8(c), UInt8(a)]
                var straight = [UInt8](repeating: 0, count: 4)
                src.withUnsafeBufferPointer { s in
                    straight.withUnsafeMutableBufferPointer { d in
                        PixelConversion.unpremultiplyRow(s.baseAddress!, to: d.baseAddress!, width: 1)
                    }
                }
                straight.withUnsafeMutableBufferPointer { PixelConversion.premultiplyRow($0.baseAddress!, width: 1) }
                #expect(straight == src, "c=\(c) a=\(a)")
            }
        }
    }

    @Test("known values for every target style")
    func knownValues() throws {
        let source = try S.bitmap(width: 3, height: 2, style: .bgra32) { x, _ in
            [[0, 0, 255, 255], [128, 128, 128, 128], [255, 255, 255, 255]][x]
        }
        let bgr = try S.bitmap(width: 3, height: 2, style: .bgr32) { x, _ in [[0, 0, 255, 255], [128, 128, 128, 128], [255, 255, 255, 255]][x] }
        #expect(bgr.pixel(x: 1, y: 1) == [128, 128, 128, 255])
        let gray = try Bitmap(width: 3, height: 2, style: .gray8) { (v: MutableBitmapView) throws(TesseraError) in try PixelConversion.convert(source, to: v) }
        #expect(gray.pixel(x: 0, y: 0) == [77])   // pure red, Rec. 601
        #expect(gray.pixel(x: 2, y: 1) == [255])
        let rgb565 = try Bitmap(width: 3, height: 2, style: .bgr565) { (v: MutableBitmapView) throws(TesseraError) in try PixelConversion.convert(source, to: v) }
        #expect(rgb565.pixel(x: 0, y: 0) == [0x00, 0xF8])
        #expect(rgb565.pixel(x: 2, y: 0) == [0xFF, 0xFF])
        let back = try Bitmap(width: 3, height: 2, style: .bgra32) { (v: MutableBitmapView) throws(TesseraError) in try PixelConversion.convert(rgb565, to: v) }
        #expect(back.pixel(x: 0, y: 0) == [0, 0, 255, 255])
        let fromGray = try Bitmap(width: 3, height: 2, style: .bgr32) { (v: MutableBitmapView) throws(TesseraError) in try PixelConversion.convert(gray, to: v) }
        #expect(fromGray.pixel(x: 0, y: 1) == [77, 77, 77, 255])
    }

    @Test("every pair converts and 565 survives a round trip through every style", arguments: PixelStyle.allCases)
    func everyPair(through middle: PixelStyle) throws {
        let original = try S.bitmap(width: 37, height: 5, style: .bgr565) { x, y in [UInt8(x * 7 % 256), UInt8(y * 50), UInt8(x * 3), 255] }
        let mid = try Bitmap(width: 37, height: 5, style: middle) { (v: MutableBitmapView) throws(TesseraError) in try PixelConversion.convert(original, to: v) }
        let back = try Bitmap(width: 37, height: 5, style: .bgr565) { (v: MutableBitmapView) throws(TesseraError) in try PixelConversion.convert(mid, to: v) }
        if middle != .gray8 { #expect(back.hasSamePixels(as: original)) } else { #expect(back.width == 37) }
    }

    @Test("the raw-pointer entry point respects strides and rejects size mismatches")
    func rawPointer() throws {
        let source = try S.bitmap(width: 5, height: 3, style: .gray8) { x, y in let v = UInt8(x * 40 + y); return [v, v, v, 255] }
        let target = try source.withUnsafeBytes { src in
            try Bitmap(layout: try BitmapLayout(width: 5, height: 3, style: .bgra32, bytesPerRow: 40)) { (v: MutableBitmapView) throws(TesseraError) in
                try PixelConversion.convert(source: src.baseAddress!, layout: source.layout, to: v)
            }
        }
        #expect(target.pixel(x: 4, y: 2) == [162, 162, 162, 255])
        let mismatch = S.failure {
            _ = try source.withUnsafeBytes { src in
                try Bitmap(width: 4, height: 3, style: .gray8) { (v: MutableBitmapView) throws(TesseraError) in
                    try PixelConversion.convert(source: src.baseAddress!, layout: source.layout, to: v)
                }
            }
        }
        #expect(mismatch == .invalidLayout(width: 4, height: 3, bytesPerRow: 64))
    }
}
