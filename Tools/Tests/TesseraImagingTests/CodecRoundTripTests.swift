import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Encode → decode round trips")
struct CodecRoundTripTests {
    typealias S = CodecTestSupport

    /// Premultiplied BGRA with opaque, transparent and partly transparent pixels.
    static func pattern(_ x: Int, _ y: Int) -> [UInt8] {
        let a = [255, 0, 128, 200, 1][(x + y) % 5]
        return [UInt8(x * 5 * a / 255 % (a + 1)), UInt8(y * 9 * a / 255 % (a + 1)), UInt8(a / 2), UInt8(a)]
    }

    @Test("PNG round trip is lossless", arguments: PixelStyle.allCases)
    func png(style: PixelStyle) throws {
        let original = try S.bitmap(width: 45, height: 17, style: style, color: Self.pattern)
        let encoded = try PNGEncoder().encode(original)
        #expect(encoded.withUnsafeBytes { ImageFileFormat(sniffing: $0) } == .png)
        let decoded = try S.decodeAny(encoded, with: PNGDecoder(), style: style)
        #expect(decoded.hasSamePixels(as: original))
        let info = try encoded.withUnsafeBytes { try PNGDecoder().probe($0) }
        #expect(info.hasAlpha == (style == .bgra32))
        #expect(info.isGrayscale == (style == .gray8))
    }

    @Test("WebP lossless round trip keeps every pixel (alpha within premultiplication rounding); lossy stays close", arguments: PixelStyle.allCases)
    func webp(style: PixelStyle) throws {
        let original = try S.bitmap(width: 45, height: 17, style: style, color: Self.pattern)
        let lossless = try WebPEncoder(lossless: true).encode(original)
        #expect(lossless.withUnsafeBytes { ImageFileFormat(sniffing: $0) } == .webp)
        let exact = try S.decodeAny(lossless, with: WebPDecoder(), style: style)
        if style == .bgra32 {
            // libwebp premultiplies with its own rounding, so straight → premultiplied can differ by one step.
            #expect(S.close(exact, original, maxDelta: 2, meanDelta: 0.5))
        } else {
            #expect(exact.hasSamePixels(as: original), "\(style)")
        }
        #expect(try lossless.withUnsafeBytes { try WebPDecoder().probe($0) }.hasAlpha == (style == .bgra32))

        let smooth = try S.bitmap(width: 64, height: 40, style: style, color: S.gradient)
        let lossy = try WebPEncoder(quality: 95).encode(smooth)
        let a = try S.decodeAny(try PNGEncoder().encode(try S.decodeAny(lossy, with: WebPDecoder(), style: style)), with: PNGDecoder(), style: .bgra32)
        let b = try S.decodeAny(try PNGEncoder().encode(smooth), with: PNGDecoder(), style: .bgra32)
        #expect(S.close(a, b, maxDelta: 24, meanDelta: 3), "\(style)")
        #expect(throws: TesseraError.self) { _ = try WebPEncoder().encode(Bitmap(width: 16_384, height: 1, style: .gray8) { _ in }) }
    }

    @Test("JPEG round trip is close", arguments: PixelStyle.allCases)
    func jpeg(style: PixelStyle) throws {
        let original = try S.bitmap(width: 64, height: 40, style: style, color: S.gradient)
        let encoded = try JPEGEncoder(quality: 95).encode(original)
        #expect(encoded.starts(with: [0xFF, 0xD8, 0xFF]))
        let decoded = try S.decodeAny(encoded, with: JPEGDecoder(), style: style)
        // Compare channel values: packed 565 bytes are not comparable byte by byte.
        let a = try S.decodeAny(try PNGEncoder().encode(decoded), with: PNGDecoder(), style: .bgra32)
        let b = try S.decodeAny(try PNGEncoder().encode(original), with: PNGDecoder(), style: .bgra32)
        #expect(S.close(a, b, maxDelta: 24, meanDelta: 3), "\(style)")
        let info = try encoded.withUnsafeBytes { try JPEGDecoder().probe($0) }
        #expect(info.storedSize == PixelSize(width: 64, height: 40))
        #expect(info.isGrayscale == (style == .gray8))
    }

    @Test("JPEG drops alpha by compositing over black")
    func jpegAlpha() throws {
        let original = try S.bitmap(width: 16, height: 16, style: .bgra32) { _, _ in [0, 0, 100, 100] }   // red at 39 % alpha
        let decoded = try S.decode(try JPEGEncoder(quality: 100).encode(original), with: JPEGDecoder()).bitmap
        #expect(S.matches(decoded.pixel(x: 8, y: 8), [0, 0, 100, 255], tolerance: 4))
    }

    @Test("lower JPEG quality gives a smaller file")
    func quality() throws {
        let original = try S.bitmap(width: 64, height: 64, style: .bgr32) { x, y in [UInt8(x * y % 256), UInt8(x * 3), UInt8(y * 3), 255] }
        #expect(try JPEGEncoder(quality: 20).encode(original).count < JPEGEncoder(quality: 95).encode(original).count)
    }
}
