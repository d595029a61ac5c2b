import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Downscaled decoding")
struct CodecScalingTests {
    typealias S = CodecTestSupport

    static func quadrants(_ x: Int, _ y: Int, width: Int, height: Int) -> [UInt8] {
        [[0, 0, 255, 255], [0, 255, 0, 255], [255, 0, 0, 255], [255, 255, 255, 255]][(y >= height / 2 ? 2 : 0) + (x >= width / 2 ? 1 : 0)]
    }

    @Test("JPEG picks the smallest DCT scale covering the target", arguments: [
        (PixelSize?.none, PixelSize(width: 64, height: 48)),
        (PixelSize(width: 100, height: 100), PixelSize(width: 64, height: 48)),
        (PixelSize(width: 64, height: 48), PixelSize(width: 64, height: 48)),
        (PixelSize(width: 32, height: 24), PixelSize(width: 32, height: 24)),    // 1/2
        (PixelSize(width: 16, height: 12), PixelSize(width: 16, height: 12)),    // 1/4
        (PixelSize(width: 8, height: 6), PixelSize(width: 8, height: 6)),        // 1/8
        (PixelSize(width: 1, height: 1), PixelSize(width: 8, height: 6)),        // never below 1/8
        (PixelSize(width: 20, height: 10), PixelSize(width: 24, height: 18)),    // 3/8
        (PixelSize(width: 33, height: 1), PixelSize(width: 40, height: 30)),     // 5/8
    ])
    func jpeg(target: PixelSize?, expected: PixelSize) throws {
        let original = try S.bitmap(width: 64, height: 48, style: .bgr32) { Self.quadrants($0, $1, width: 64, height: 48) }
        let file = try JPEGEncoder(quality: 95).encode(original)
        for style in [PixelStyle.bgra32, .bgr32, .gray8] {
            let (_, bitmap) = try S.decode(file, with: JPEGDecoder(), style: style, atLeast: target)
            #expect(bitmap.layout.size == expected)
            if style != .gray8 {
                let w = expected.width, h = expected.height
                #expect(S.matches(bitmap.pixel(x: w / 4, y: h / 4), [0, 0, 255, 255], tolerance: 10))
                #expect(S.matches(bitmap.pixel(x: 3 * w / 4, y: 3 * h / 4), [255, 255, 255, 255], tolerance: 10))
            }
        }
    }

    @Test("JPEG rejects a target size that is no DCT scale")
    func jpegBadTarget() throws {
        let file = try JPEGEncoder().encode(try S.bitmap(width: 64, height: 48, style: .bgr32, color: S.gradient))
        let reason = S.failure {
            _ = try file.withUnsafeBytes { raw in
                let info = try JPEGDecoder().probe(raw)
                return try Bitmap(width: 30, height: 20, style: .bgra32) { (v: MutableBitmapView) throws(TesseraError) in
                    try JPEGDecoder().decode(raw, info: info, into: v)
                }
            }
        }
        #expect(reason == .invalidLayout(width: 30, height: 20, bytesPerRow: 128))
    }

    @Test("WebP scales to the aspect-preserving size covering the target", arguments: [
        (PixelSize?.none, PixelSize(width: 32, height: 32)),
        (PixelSize(width: 16, height: 8), PixelSize(width: 16, height: 16)),
        (PixelSize(width: 8, height: 16), PixelSize(width: 16, height: 16)),
        (PixelSize(width: 10, height: 5), PixelSize(width: 10, height: 10)),
        (PixelSize(width: 40, height: 40), PixelSize(width: 32, height: 32)),
        (PixelSize(width: 31, height: 1), PixelSize(width: 31, height: 31)),
    ])
    func webp(target: PixelSize?, expected: PixelSize) throws {
        let (_, bitmap) = try S.decode(try S.fixture("lossless.webp"), with: WebPDecoder(), atLeast: target)
        #expect(bitmap.layout.size == expected)
        let w = expected.width, h = expected.height
        #expect(S.matches(bitmap.pixel(x: w / 4, y: h / 4), [0, 0, 255, 255], tolerance: 2))
        #expect(S.matches(bitmap.pixel(x: 3 * w / 4, y: h / 4), [0, 255, 0, 255], tolerance: 2))
        #expect(S.matches(bitmap.pixel(x: w / 4, y: 3 * h / 4), [255, 0, 0, 255], tolerance: 2))
    }

    @Test("WebP decodedSize on a non-square image")
    func webpAspect() {
        let info = ImageInfo(format: .webp, width: 300, height: 100, hasAlpha: false)
        #expect(WebPDecoder().decodedSize(for: info, atLeast: PixelSize(width: 50, height: 50)) == PixelSize(width: 150, height: 50))
        #expect(WebPDecoder().decodedSize(for: info, atLeast: PixelSize(width: 100, height: 10)) == PixelSize(width: 100, height: 34))
    }

    @Test("PNG reduces by the largest integer factor keeping twice the target; GIF always decodes at full size")
    func pngFactorGIFFull() {
        let info = ImageInfo(format: .png, width: 300, height: 100, hasAlpha: false)
        #expect(PNGDecoder().decodedSize(for: info, atLeast: nil) == info.storedSize)
        // The largest factor that keeps at least twice the target in both dimensions.
        #expect(PNGDecoder().decodedSize(for: info, atLeast: PixelSize(width: 3, height: 1)) == PixelSize(width: 6, height: 2))
        #expect(PNGDecoder().decodedSize(for: info, atLeast: PixelSize(width: 25, height: 25)) == PixelSize(width: 150, height: 50))
        #expect(PNGDecoder().decodedSize(for: info, atLeast: PixelSize(width: 35, height: 15)) == PixelSize(width: 100, height: 34))
        #expect(PNGDecoder().decodedSize(for: info, atLeast: PixelSize(width: 50, height: 50)) == info.storedSize)
        #expect(PNGDecoder().decodedSize(for: info, atLeast: PixelSize(width: 400, height: 400)) == info.storedSize)
        #expect(GIFDecoder().decodedSize(for: info, atLeast: PixelSize(width: 3, height: 1)) == info.storedSize)
    }
}
