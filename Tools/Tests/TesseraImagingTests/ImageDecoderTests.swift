import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("ImageDecoder: limits, orientation, styles, decoding into caller memory")
struct ImageDecoderTests {
    /// A 64×32 picture in four 16-pixel-wide colour bands (blocks survive JPEG well).
    static func bands() throws -> Bitmap {
        try Bitmap.drawing(size: PixelSize(width: 64, height: 32)) { context in
            let colours = [Color(red: 1, green: 0, blue: 0), Color(red: 0, green: 1, blue: 0),
                           Color(red: 0, green: 0, blue: 1), Color.white]
            for (i, colour) in colours.enumerated() {
                context.fill(Rect(x: Double(16 * i), y: 0, width: 16, height: 16), with: colour)
                context.fill(Rect(x: Double(16 * i), y: 16, width: 16, height: 16), with: colours[(i + 1) % 4])
            }
        }
    }

    static func near(_ a: [UInt8], _ b: [UInt8], _ tolerance: Int = 40) -> Bool {
        zip(a.prefix(3), b.prefix(3)).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    @Test("decode applies the EXIF orientation: every displayed block comes from the right stored block",
          arguments: ImageOrientation.allCases)
    func orientationApplied(_ orientation: ImageOrientation) throws {
        let stored = try Self.bands()
        let jpeg = ExifOrientationReaderTests.splice(ExifOrientationReaderTests.tiff(orientation: orientation.rawValue, bigEndian: false),
                                                     into: try JPEGEncoder(quality: 95).encode(stored))
        let decoded = try ImageDecoder().decode(Data(jpeg))
        #expect(decoded.layout.size == orientation.displaySize(of: stored.layout.size))
        // Sample the centre of every 16×16 block of the displayed image.
        for y in stride(from: 8, to: decoded.height, by: 16) {
            for x in stride(from: 8, to: decoded.width, by: 16) {
                let s = orientation.storedPoint(x: x, y: y, stored: stored.layout.size)
                #expect(Self.near(decoded.pixel(x: x, y: y), stored.pixel(x: s.x, y: s.y)), "(\(x),\(y)) ← \(s)")
            }
        }
    }

    @Test("bad input classes give their typed reasons through the façade")
    func badInput() throws {
        func reason(_ bytes: [UInt8], limits: DecodingLimits = .default) -> DecodingFailure? {
            do { _ = try ImageDecoder(limits: limits).decode(Data(bytes)); return nil } catch {
                guard case .decoding(let failure) = error.reason else { return nil }
                return failure
            }
        }
        #expect(reason([]) == .empty)
        guard case .unsupportedFormat = reason(Array("BM this is a bitmap".utf8)) else { Issue.record("wrong magic"); return }
        let png = try PNGEncoder().encode(try Self.bands())
        #expect(reason(png, limits: DecodingLimits(maximumInputBytes: 100)) == .inputTooLarge(bytes: png.count, limit: 100))
        #expect(reason(png, limits: DecodingLimits(maximumPixelCount: 1000)) == .tooManyPixels(width: 64, height: 32, limit: 1000))
        #expect(reason(Array(png.prefix(png.count / 2)), limits: .strict) == .truncated(.png))
        // Lenient (the default): half a PNG is either its top rows, marked truncated, or a typed refusal
        // when fewer than 10 % of the rows arrived.
        do {
            let half = try ImageDecoder().decode(Data(png.prefix(png.count / 2)))
            #expect(half.integrity == .truncated)
            #expect(half.layout.size == PixelSize(width: 64, height: 32))
        } catch {
            #expect(error.reason == .decoding(.truncated(.png)))
        }
        #expect(reason(Array(png.prefix(40))) == .truncated(.png))
        #expect(try ImageDecoder().decode(Data(png)).integrity == .intact)
    }

    @Test("a thumbnail in every pixel style has the right size, stride and colours", arguments: PixelStyle.allCases)
    func thumbnailStyles(_ style: PixelStyle) throws {
        let png = try PNGEncoder().encode(try Bitmap.drawing(size: PixelSize(width: 300, height: 200)) { $0.fill(with: .white) })
        let thumb = try ImageDecoder().thumbnail(Data(png), size: PixelSize(width: 30, height: 30), mode: .fill, style: style)
        #expect(thumb.layout == BitmapLayout(width: 30, height: 30, style: style))
        #expect(thumb.pixel(x: 15, y: 15).allSatisfy { $0 == 255 } || style == .bgr32 && Array(thumb.pixel(x: 15, y: 15).prefix(3)) == [255, 255, 255])
    }

    @Test("decoding into caller memory: the DCT-scaled size is written straight into the target when it matches")
    func directIntoTarget() throws {
        let source = try Bitmap.drawing(size: PixelSize(width: 800, height: 800)) { $0.fill(with: Color(red: 0, green: 0, blue: 1)) }
        let jpeg = Data(try JPEGEncoder().encode(source))
        let decoder = ImageDecoder()
        let (codec, info) = try jpeg.withUnsafeBytes { try decoder.probe(bytes: $0) }
        #expect(codec.decodedSize(for: info, atLeast: PixelSize(width: 100, height: 100)) == PixelSize(width: 100, height: 100))
        let layout = try BitmapLayout(width: 100, height: 100, style: .bgra32, bytesPerRow: 512)
        var memory = [UInt8](repeating: 0xEE, count: layout.byteCount)
        let integrity = try memory.withUnsafeMutableBytes { raw in
            try decoder.decode(jpeg, into: MutableBitmapView(layout: layout, baseAddress: raw.baseAddress!))
        }
        #expect(integrity == .intact)
        #expect(Self.near(Array(memory[0..<4]), [255, 0, 0, 255], 8))
        #expect(Self.near(Array(memory[99 * 512 + 99 * 4..<99 * 512 + 100 * 4]), [255, 0, 0, 255], 8))
        #expect(memory[400] == 0xEE, "row padding beyond 100 pixels is not touched")
    }

    @Test("decode with a minimum size uses the cheap path: smaller than full, never below the minimum")
    func minimumSize() throws {
        let jpeg = Data(try JPEGEncoder().encode(try Bitmap.drawing(size: PixelSize(width: 1600, height: 1200)) { $0.fill(with: .white) }))
        let small = try ImageDecoder().decode(jpeg, minimumSize: PixelSize(width: 150, height: 150))
        #expect(small.width >= 150 && small.height >= 150)
        #expect(small.width < 1600 && small.height < 1200)
        #expect(small.layout.size == PixelSize(width: 200, height: 150), "1/8 scale covers 150×150")
    }
}
