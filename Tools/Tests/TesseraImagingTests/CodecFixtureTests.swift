import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Codec fixtures decode to the known colours")
struct CodecFixtureTests {
    typealias S = CodecTestSupport
    static let red: [UInt8] = [0, 0, 255, 255], green: [UInt8] = [0, 255, 0, 255]
    static let blue: [UInt8] = [255, 0, 0, 255], white: [UInt8] = [255, 255, 255, 255]
    static let clear: [UInt8] = [0, 0, 0, 0]
    /// Centres of the four quadrants of the 32×32 fixtures: top-left, top-right, bottom-left, bottom-right.
    static let centres = [(8, 8), (24, 8), (8, 24), (24, 24)]

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String, format: ImageFileFormat, colors: [[UInt8]], tolerance: Int
        let hasAlpha: Bool, isGrayscale: Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "baseline.jpg", format: .jpeg, colors: [red, green, blue, white], tolerance: 8, hasAlpha: false, isGrayscale: false),
        Case(name: "progressive.jpg", format: .jpeg, colors: [red, green, blue, white], tolerance: 8, hasAlpha: false, isGrayscale: false),
        Case(name: "gray.jpg", format: .jpeg, colors: [[30, 30, 30, 255], [100, 100, 100, 255], [170, 170, 170, 255], [240, 240, 240, 255]],
             tolerance: 3, hasAlpha: false, isGrayscale: true),
        // Pillow decodes this Adobe CMYK file to red, green, blue and (127, 127, 127).
        Case(name: "cmyk.jpg", format: .jpeg, colors: [red, green, blue, [127, 127, 127, 255]], tolerance: 8, hasAlpha: false, isGrayscale: false),
        Case(name: "palette.png", format: .png, colors: [red, green, blue, white], tolerance: 0, hasAlpha: false, isGrayscale: false),
        Case(name: "gray.png", format: .png, colors: [[0, 0, 0, 255], [85, 85, 85, 255], [170, 170, 170, 255], white],
             tolerance: 0, hasAlpha: false, isGrayscale: true),
        // 16-bit 0x8080 is 128 when the samples are taken as sRGB (not linear).
        Case(name: "gray16.png", format: .png, colors: [[128, 128, 128, 255], white, [128, 128, 128, 255], white],
             tolerance: 0, hasAlpha: false, isGrayscale: true),
        Case(name: "interlaced.png", format: .png, colors: [red, green, blue, white], tolerance: 0, hasAlpha: false, isGrayscale: false),
        Case(name: "trns.png", format: .png, colors: [red, clear, blue, white], tolerance: 0, hasAlpha: true, isGrayscale: false),
        Case(name: "lossy.webp", format: .webp, colors: [red, green, blue, white], tolerance: 16, hasAlpha: false, isGrayscale: false),
        Case(name: "lossless.webp", format: .webp, colors: [red, green, blue, white], tolerance: 0, hasAlpha: false, isGrayscale: false),
        Case(name: "alpha.webp", format: .webp, colors: [red, [0, 128, 0, 128], clear, white], tolerance: 1, hasAlpha: true, isGrayscale: false),
        Case(name: "transparent.gif", format: .gif, colors: [red, clear, blue, white], tolerance: 0, hasAlpha: true, isGrayscale: false),
        Case(name: "lossy.heic", format: .heic, colors: [red, green, blue, white], tolerance: 16, hasAlpha: false, isGrayscale: false),
        Case(name: "lossy.avif", format: .avif, colors: [red, green, blue, white], tolerance: 16, hasAlpha: false, isGrayscale: false),
        Case(name: "alpha.avif", format: .avif, colors: [red, [0, 128, 0, 128], clear, white], tolerance: 16, hasAlpha: true, isGrayscale: false),
    ]

    @Test("probe and decode to BGRA", arguments: cases)
    func decodeBGRA(_ c: Case) throws {
        let bytes = try S.fixture(c.name)
        let (info, bitmap) = try S.decode(bytes, with: S.decoder(for: c.format))
        #expect(info.format == c.format)
        #expect(info.storedSize == PixelSize(width: 32, height: 32))
        #expect(info.hasAlpha == c.hasAlpha)
        #expect(info.isGrayscale == c.isGrayscale)
        #expect(info.orientation == .up)
        #expect(bitmap.layout.size == info.storedSize)
        for ((x, y), expected) in zip(Self.centres, c.colors) {
            #expect(S.matches(bitmap.pixel(x: x, y: y), expected, tolerance: c.tolerance), "\(c.name) (\(x), \(y)): \(bitmap.pixel(x: x, y: y))")
        }
    }

    @Test("every style, direct or converted, agrees with BGRA", arguments: cases)
    func otherStyles(_ c: Case) throws {
        let bytes = try S.fixture(c.name)
        let decoder = S.decoder(for: c.format)
        #expect(decoder.supportsDirectDecode(to: .bgra32))
        let reference = try S.decode(bytes, with: decoder).bitmap
        for style in PixelStyle.allCases where style != .bgra32 {
            let viaHub = try Bitmap(width: 32, height: 32, style: style) { (v: MutableBitmapView) throws(TesseraError) in
                try PixelConversion.convert(reference, to: v)
            }
            let decoded = try S.decodeAny(bytes, with: decoder, style: style)
            // Direct gray decoding computes luma in the codec, so allow small differences there.
            let tolerance = style == .gray8 ? 3 : 0
            #expect(S.close(decoded, viaHub, maxDelta: tolerance, meanDelta: Double(tolerance)), "\(c.name) as \(style)")
        }
    }

    @Test("the GIF's transparent quadrant becomes black in bgr32")
    func gifOpaque() throws {
        let bitmap = try S.decode(try S.fixture("transparent.gif"), with: GIFDecoder(), style: .bgr32).bitmap
        #expect(bitmap.pixel(x: 24, y: 8) == [0, 0, 0, 255])
        #expect(bitmap.pixel(x: 8, y: 8) == Self.red)
    }

    @Test("CMYK conversion: Adobe (inverted) and plain storage")
    func cmykFormula() {
        // Red is C=0 M=255 Y=255 K=0; Adobe files store 255 minus each value.
        var adobe: [UInt8] = [255, 0, 0, 255, 255, 255, 255, 127]
        var plain: [UInt8] = [0, 255, 255, 0, 0, 0, 0, 128]
        adobe.withUnsafeMutableBytes { JPEGDecoder.cmykToBGRA($0.baseAddress!, width: 2, inverted: true) }
        plain.withUnsafeMutableBytes { JPEGDecoder.cmykToBGRA($0.baseAddress!, width: 2, inverted: false) }
        #expect(adobe == [0, 0, 255, 255, 127, 127, 127, 255])
        #expect(plain == adobe)
    }

    @Test("the right decoder format is reported")
    func formats() {
        #expect(JPEGDecoder().format == .jpeg)
        #expect(PNGDecoder().format == .png)
        #expect(WebPDecoder().format == .webp)
        #expect(GIFDecoder().format == .gif)
        #expect(!PNGDecoder().supportsDirectDecode(to: .bgr565))
        #expect(JPEGDecoder().supportsDirectDecode(to: .gray8))
    }
}
