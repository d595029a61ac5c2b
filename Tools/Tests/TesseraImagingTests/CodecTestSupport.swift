import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// Shared helpers for the codec tests: fixtures, decoding, synthetic bitmaps.
enum CodecTestSupport {
    /// Tools/Tests/Fixtures.
    static var fixturesDirectory: URL { TestFixtures.directory }

    /// Every committed fixture and its format.
    static var fixtures: [(name: String, format: ImageFileFormat)] { TestFixtures.images }

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixturesDirectory.appendingPathComponent(name)))
    }

    static func decoder(for format: ImageFileFormat, limits: DecodingLimits = .default) -> any ImageDecoding {
        switch format {
        case .jpeg: JPEGDecoder(limits: limits)
        case .png: PNGDecoder(limits: limits)
        case .webp: WebPDecoder(limits: limits)
        case .gif: GIFDecoder(limits: limits)
        case .heic, .avif: HEIFDecoder(format: format, limits: limits)
        }
    }

    /// Probes and decodes `bytes` directly into `style` (which the decoder must support).
    static func decode(_ bytes: [UInt8], with decoder: any ImageDecoding, style: PixelStyle = .bgra32,
                       atLeast target: PixelSize? = nil) throws -> (info: ImageInfo, bitmap: Bitmap) {
        try bytes.withUnsafeBytes { raw in
            let info = try decoder.probe(raw)
            let size = decoder.decodedSize(for: info, atLeast: target)
            let bitmap = try Bitmap(width: size.width, height: size.height, style: style) { (view: MutableBitmapView) throws(TesseraError) in
                try decoder.decode(raw, info: info, into: view)
            }
            return (info, bitmap)
        }
    }

    /// Decodes to `style`, through bgra32 and ``PixelConversion`` when the decoder cannot do it directly.
    static func decodeAny(_ bytes: [UInt8], with decoder: any ImageDecoding, style: PixelStyle) throws -> Bitmap {
        if decoder.supportsDirectDecode(to: style) { return try decode(bytes, with: decoder, style: style).bitmap }
        let bgra = try decode(bytes, with: decoder).bitmap
        return try Bitmap(width: bgra.width, height: bgra.height, style: style) { (view: MutableBitmapView) throws(TesseraError) in
            try PixelConversion.convert(bgra, to: view)
        }
    }

    /// The error reason of `body`, or `nil` when it did not throw a ``TesseraError``.
    static func failure(_ body: () throws -> Void) -> TesseraError.Reason? {
        do { try body(); return nil } catch let error as TesseraError { return error.reason } catch { return nil }
    }

    /// A bitmap whose pixel (x, y) is `color(x, y)` given as BGRA bytes (premultiplied), converted to `style`.
    static func bitmap(width: Int, height: Int, style: PixelStyle, color: (Int, Int) -> [UInt8]) throws -> Bitmap {
        let bgra = Bitmap(width: width, height: height, style: .bgra32) { view in
            for y in 0..<height {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width { for (k, v) in color(x, y).enumerated() { row[x * 4 + k] = v } }
            }
        }
        if style == .bgra32 { return bgra }
        return try Bitmap(width: width, height: height, style: style) { (view: MutableBitmapView) throws(TesseraError) in
            try PixelConversion.convert(bgra, to: view)
        }
    }

    /// A smooth opaque test pattern (JPEG-friendly).
    static func gradient(_ x: Int, _ y: Int) -> [UInt8] {
        [UInt8((x * 4) & 0xFF), UInt8((y * 4) & 0xFF), UInt8((x + y) * 2 & 0xFF), 255]
    }

    /// Whether every channel of every pixel differs by at most `maxDelta` and the mean by at most `meanDelta`.
    static func close(_ a: Bitmap, _ b: Bitmap, maxDelta: Int, meanDelta: Double) -> Bool {
        guard a.layout.size == b.layout.size, a.style == b.style else { return false }
        var total = 0, count = 0, worst = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for (p, q) in zip(a.pixel(x: x, y: y), b.pixel(x: x, y: y)) {
                    let d = abs(Int(p) - Int(q))
                    total += d; count += 1; worst = max(worst, d)
                }
            }
        }
        return worst <= maxDelta && Double(total) / Double(count) <= meanDelta
    }

    /// Whether `pixel` matches `expected` within `tolerance` per channel.
    static func matches(_ pixel: [UInt8], _ expected: [UInt8], tolerance: Int = 0) -> Bool {
        pixel.count == expected.count && zip(pixel, expected).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }
}

