import CGIF
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import Tessera
import TesseraTestSupport

/// PNG, WebP and GIF under ``DecodingPolicy/lenient`` draw what browsers draw: the rows of a cut file
/// that arrived (the rest grey or transparent), a GIF without colour tables in black; ``DecodingPolicy/strict``
/// refuses them as before.
@Suite("Lenient PNG, WebP and GIF: truncated files, palette-less GIFs, probe integrity")
struct CodecLenientTests {
    typealias S = CodecTestSupport

    static let grey: [UInt8] = [0x80, 0x80, 0x80, 0xFF], clear: [UInt8] = [0, 0, 0, 0]

    /// Probes and decodes `bytes` into `style` (at least `target` when given) and returns the decode's integrity too.
    static func decode(_ bytes: [UInt8], _ decoder: any ImageDecoding, style: PixelStyle = .bgra32,
                       atLeast target: PixelSize? = nil) throws -> (info: ImageInfo, bitmap: Bitmap, integrity: DecodeIntegrity) {
        try bytes.withUnsafeBytes { raw in
            let info = try decoder.probe(raw)
            let size = decoder.decodedSize(for: info, atLeast: target)
            var integrity = DecodeIntegrity.intact
            let bitmap = try Bitmap(width: size.width, height: size.height, style: style) { (view: MutableBitmapView) throws(TesseraError) in
                integrity = try decoder.decode(raw, info: info, into: view)
            }
            return (info, bitmap, integrity)
        }
    }

    static func rows(_ bitmap: Bitmap, _ y: Int) -> [[UInt8]] { (0..<bitmap.width).map { bitmap.pixel(x: $0, y: y) } }

    /// The number of top rows of `cut` equal to `full`'s, when every row after them is `fill`; `nil` otherwise.
    static func splitRow(_ cut: Bitmap, full: Bitmap, fill: [UInt8]) -> Int? {
        guard cut.layout.size == full.layout.size else { return nil }
        var k = 0
        while k < cut.height, rows(cut, k) == rows(full, k) { k += 1 }
        for y in k..<cut.height where !rows(cut, y).allSatisfy({ $0 == fill }) { return nil }
        return k
    }

    /// The range of bytes of every IDAT payload, first to last.
    static func idatRange(_ png: [UInt8]) -> Range<Int> {
        var offset = 8, first = Int.max, last = 0
        while offset + 8 <= png.count {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            if png[offset + 4..<offset + 8].elementsEqual(Array("IDAT".utf8)) {
                first = min(first, offset + 8); last = offset + 8 + length
            }
            offset += 12 + length
        }
        return first..<last
    }

    /// Photo-like pixels: a real JPEG photo fixture tiled and mixed with the gradient-and-noise pattern.
    static func photo(width: Int, height: Int, alpha: Bool) throws -> Bitmap {
        let jpeg = try S.decode(try S.fixture("baseline.jpg"), with: JPEGDecoder()).bitmap
        let pattern = try CodecPNGReductionTests.photoLike(width: width, height: height, alpha: alpha)
        return try S.bitmap(width: width, height: height, style: .bgra32) { x, y in
            let p = jpeg.pixel(x: x % jpeg.width, y: y % jpeg.height), q = pattern.pixel(x: x, y: y)
            let a = Int(q[3])
            return (0..<3).map { UInt8((Int(p[$0]) * a / 255 + Int(q[$0])) / 2) } + [UInt8(a)]
        }
    }

    // MARK: PNG

    @Test("PNG cut mid-IDAT: lenient keeps the top rows exactly and fills the rest; strict refuses",
          arguments: ["rgb", "rgba", "gray.png", "palette.png", "trns.png", "gray16.png"])
    func pngPlain(name: String) throws {
        let file = switch name {
        case "rgb": try PNGEncoder().encode(try Self.photo(width: 96, height: 80, alpha: false))
        case "rgba": try PNGEncoder().encode(try Self.photo(width: 96, height: 80, alpha: true))
        default: try S.fixture(name)
        }
        let full = try Self.decode(file, PNGDecoder())
        #expect(full.integrity == .intact && full.info.integrity == .intact)
        let fill = full.info.hasAlpha ? Self.clear : Self.grey
        let idat = Self.idatRange(file)
        var previous = 0, decoded = 0
        for fraction in [0.35, 0.6, 0.85, 0.99] {
            let cut = Array(file.prefix(idat.lowerBound + Int(Double(idat.count) * fraction)))
            #expect(S.failure { _ = try Self.decode(cut, PNGDecoder(limits: .strict)) } == .decoding(.truncated(.png)))
            let lenient: (info: ImageInfo, bitmap: Bitmap, integrity: DecodeIntegrity)
            do { lenient = try Self.decode(cut, PNGDecoder()) } catch let error as TesseraError {
                // A 32-row fixture's compressed data is uneven: its first part may hold fewer than 4 rows.
                #expect(error.reason == .decoding(.truncated(.png)) && fraction < 0.9 && name.hasSuffix(".png"), "\(name) at \(fraction)")
                continue
            }
            decoded += 1
            #expect(lenient.info.integrity == .truncated)
            #expect(lenient.integrity == .truncated, "\(name) at \(fraction)")
            let k = try #require(Self.splitRow(lenient.bitmap, full: full.bitmap, fill: fill), "\(name) at \(fraction)")
            #expect(k >= full.bitmap.height / 10 && (k < full.bitmap.height || fraction > 0.8), "\(name) at \(fraction): \(k) rows")
            #expect(k >= previous, "more data never gives fewer rows")
            previous = k
            // gray8 and a box-reduced decode take the same rows.
            let gray = try Self.decode(cut, PNGDecoder(), style: .gray8)
            let small = try Self.decode(cut, PNGDecoder(), atLeast: PixelSize(width: full.bitmap.width / 4, height: full.bitmap.height / 4))
            #expect(gray.integrity == .truncated && small.integrity == .truncated)
            #expect(small.bitmap.width < full.bitmap.width)
            if k < full.bitmap.height {
                #expect(gray.bitmap.pixel(x: 0, y: gray.bitmap.height - 1) == [full.info.hasAlpha ? 0 : 0x80])
                #expect(small.bitmap.pixel(x: 0, y: small.bitmap.height - 1) == fill)
            }
        }
        #expect(decoded >= (name.hasSuffix(".png") ? 2 : 4))
    }

    @Test("Interlaced PNG cut mid-IDAT: every pixel is one the whole file has in its Adam7 block, or the fill")
    func pngInterlaced() throws {
        let file = try S.fixture("interlaced.png")
        let full = try Self.decode(file, PNGDecoder())
        let fill = full.info.hasAlpha ? Self.clear : Self.grey
        let idat = Self.idatRange(file)
        var previousExact = 0, firstExact = 0, decoded = 0
        for fraction in stride(from: 0.05, to: 1.0, by: 0.1) {
            let cut = Array(file.prefix(idat.lowerBound + Int(Double(idat.count) * fraction)))
            #expect(S.failure { _ = try Self.decode(cut, PNGDecoder(limits: .strict)) } == .decoding(.truncated(.png)))
            guard let lenient = try? Self.decode(cut, PNGDecoder()) else { continue }
            decoded += 1
            #expect(lenient.integrity == .truncated)
            #expect(lenient.bitmap.pixel(x: 0, y: 0) == full.bitmap.pixel(x: 0, y: 0), "the first pass's first pixel arrived")
            var exact = 0
            for y in 0..<full.bitmap.height {
                for x in 0..<full.bitmap.width {
                    let pixel = lenient.bitmap.pixel(x: x, y: y)
                    if pixel == full.bitmap.pixel(x: x, y: y) { exact += 1; continue }
                    let block = (0...(y % 8)).contains { dy in (0...(x % 8)).contains { dx in full.bitmap.pixel(x: x - dx, y: y - dy) == pixel } }
                    #expect(block || pixel == fill, "(\(x), \(y)) at \(fraction)")
                }
            }
            #expect(exact >= previousExact)
            if previousExact == 0 { firstExact = exact }
            previousExact = exact
        }
        #expect(decoded >= 5, "most cuts decode")
        #expect(firstExact < full.bitmap.width * full.bitmap.height / 2, "an early cut has the first passes only")
    }

    @Test("PNG with fewer than 10 % of its rows throws .truncated under both policies; a complete file without IEND is truncated")
    func pngBelowMinimum() throws {
        let file = try PNGEncoder().encode(try Self.photo(width: 64, height: 200, alpha: false))
        let idat = Self.idatRange(file)
        let cut = Array(file.prefix(idat.lowerBound + 40))
        for limits in [DecodingLimits.default, .strict] {
            #expect(S.failure { _ = try Self.decode(cut, PNGDecoder(limits: limits)) } == .decoding(.truncated(.png)))
        }
        // Only IEND missing: every row is there.
        let noEnd = Array(file.prefix(file.count - 12))
        let lenient = try Self.decode(noEnd, PNGDecoder())
        #expect(lenient.info.integrity == .truncated && lenient.integrity == .truncated)
        let whole = try Self.decode(file, PNGDecoder()).bitmap
        #expect((0..<whole.height).allSatisfy { Self.rows(lenient.bitmap, $0) == Self.rows(whole, $0) })
        #expect(S.failure { _ = try Self.decode(noEnd, PNGDecoder(limits: .strict)) } == .decoding(.truncated(.png)))
    }

    // MARK: WebP

    @Test("WebP cut short: lenient keeps the rows libwebp produced and fills the rest; strict refuses",
          arguments: ["lossy", "lossless", "alpha", "lossy.webp", "lossless.webp", "alpha.webp"])
    func webpCut(name: String) throws {
        let file = switch name {
        case "lossy": try WebPEncoder(quality: 80).encode(try Self.photo(width: 96, height: 160, alpha: false))
        case "lossless": try WebPEncoder(lossless: true).encode(try Self.photo(width: 96, height: 160, alpha: false))
        case "alpha": try WebPEncoder(quality: 80).encode(try Self.photo(width: 96, height: 160, alpha: true))
        default: try S.fixture(name)
        }
        let full = try Self.decode(file, WebPDecoder())
        #expect(full.integrity == .intact && full.info.integrity == .intact)
        let fill = full.info.hasAlpha ? Self.clear : Self.grey
        var decoded = 0
        for fraction in [0.5, 0.7, 0.9] {
            let cut = Array(file.prefix(Int(Double(file.count) * fraction)))
            #expect(S.failure { _ = try Self.decode(cut, WebPDecoder(limits: .strict)) } == .decoding(.truncated(.webp)))
            let result: (info: ImageInfo, bitmap: Bitmap, integrity: DecodeIntegrity)
            do { result = try Self.decode(cut, WebPDecoder()) } catch let error as TesseraError {
                #expect(error.reason == .decoding(.truncated(.webp)), "\(name) at \(fraction)")
                continue
            }
            decoded += 1
            #expect(result.info.integrity == .truncated && result.integrity == .truncated)
            let k = try #require(Self.splitRow(result.bitmap, full: full.bitmap, fill: fill), "\(name) at \(fraction)")
            #expect(k >= full.bitmap.height / 10 && k < full.bitmap.height, "\(name) at \(fraction): \(k) rows")
            // Scaled: the rows are output rows; the last ones are the fill.
            let small = try Self.decode(cut, WebPDecoder(), atLeast: PixelSize(width: full.bitmap.width / 2, height: full.bitmap.height / 2))
            #expect(small.bitmap.height < full.bitmap.height && small.integrity == .truncated)
            #expect(small.bitmap.pixel(x: 1, y: small.bitmap.height - 1) == fill)
            #expect(small.bitmap.pixel(x: 1, y: 0) != fill)
        }
        #expect(decoded >= 1 || name.hasSuffix(".webp"), "a 160-row image cut at 90 % decodes")
    }

    @Test("WebP with fewer than 10 % of its rows throws .truncated under both policies")
    func webpBelowMinimum() throws {
        for lossless in [false, true] {
            let file = try WebPEncoder(lossless: lossless).encode(try Self.photo(width: 64, height: 400, alpha: false))
            let cut = Array(file.prefix(file.count / 50 + 40))
            for limits in [DecodingLimits.default, .strict] {
                #expect(S.failure { _ = try Self.decode(cut, WebPDecoder(limits: limits)) } == .decoding(.truncated(.webp)), "lossless \(lossless)")
            }
        }
    }

    // MARK: GIF

    /// A GIF89a 4×2 with neither global nor local colour table, pixels `indices`, and a transparent index when given.
    static func paletteless(transparent: Int? = nil, frames: Int = 1) -> [UInt8] {
        var file: [UInt8] = Array("GIF89a".utf8) + [4, 0, 2, 0, 0, 0, 0]
        for _ in 0..<frames {
            if let transparent { file += [0x21, 0xF9, 4, 1, 0, 0, UInt8(transparent), 0] }
            let indices = [0, 1, 2, 3, 3, 2, 1, 0]
            file += [0x2C, 0, 0, 0, 0, 4, 0, 2, 0, 0]
            var packed: [UInt8] = [], bits = 0, count = 0
            for code in indices.flatMap({ [4, $0] }) + [5] {
                bits |= code << count; count += 3
                while count >= 8 { packed.append(UInt8(bits & 0xFF)); bits >>= 8; count -= 8 }
            }
            if count > 0 { packed.append(UInt8(bits & 0xFF)) }
            file += [2, UInt8(packed.count)] + packed + [0]
        }
        return file + [0x3B]
    }

    @Test("A GIF without colour tables draws as Chromium 156 does: every index opaque black, the transparent index transparent")
    func gifWithoutColourTable() throws {
        let black: [UInt8] = [0, 0, 0, 255]
        let plain = try Self.decode(Self.paletteless(), GIFDecoder())
        #expect(plain.integrity == .damaged)
        #expect((0..<2).allSatisfy { y in Self.rows(plain.bitmap, y).allSatisfy { $0 == black } })
        let keyed = try Self.decode(Self.paletteless(transparent: 1), GIFDecoder())
        // Indices 0 1 2 3 / 3 2 1 0: index 1 is at (1, 0) and (2, 1).
        #expect(Self.rows(keyed.bitmap, 0) == [black, Self.clear, black, black])
        #expect(Self.rows(keyed.bitmap, 1) == [black, black, Self.clear, black])
        let noColourMap = TesseraError.Reason.decoding(.codec(.gif, message: GIFDecoder.message(D_GIF_ERR_NO_COLOR_MAP)))
        #expect(S.failure { _ = try Self.decode(Self.paletteless(), GIFDecoder(limits: .strict)) } == noColourMap)
        // The animation path draws the same.
        let animation = try Self.paletteless(transparent: 0, frames: 2).withUnsafeBytes { try GIFDecoder().decodeAnimation($0) }
        #expect(animation.frames.count == 2)
        #expect(animation.frames[1].image.pixel(x: 1, y: 0) == black && animation.frames[1].image.pixel(x: 0, y: 0) == Self.clear)
        #expect(S.failure { _ = try Self.paletteless(frames: 2).withUnsafeBytes { try GIFDecoder(limits: .strict).decodeAnimation($0) } } == noColourMap)
    }

    @Test("A still GIF cut inside its frame: lenient keeps the rows read, the rest transparent; strict refuses; too few rows throw")
    func gifCut() throws {
        // 16×100 pixels in 6-bit codes: 1,200 bytes of image data in five sub-blocks; giflib reads whole sub-blocks.
        let file = GIFDecoderTests.gif(screen: (16, 100), frame: (0, 0, 16, 100), index: 2)
        let red: [UInt8] = [0, 0, 255, 255]
        let cut = Array(file.prefix(file.count * 3 / 5))
        let result = try Self.decode(cut, GIFDecoder())
        #expect(result.info.integrity == .truncated && result.integrity == .truncated)
        let k = try #require(Self.splitRow(result.bitmap, full: try Self.decode(file, GIFDecoder()).bitmap, fill: Self.clear))
        #expect(k > 10 && k < 100 && Self.rows(result.bitmap, 0) == Array(repeating: red, count: 16))
        let bgr = try Self.decode(cut, GIFDecoder(), style: .bgr32)
        #expect(bgr.bitmap.pixel(x: 0, y: 99) == [0, 0, 0, 255] && bgr.bitmap.pixel(x: 0, y: 0) == red)
        #expect(S.failure { _ = try Self.decode(cut, GIFDecoder(limits: .strict)) } == .decoding(.truncated(.gif)))
        // Interlaced (the same pixels, flag set): the first two passes and part of the third arrive, and
        // each row read stands for the rows below it, so every row shows red.
        var interlaced = file
        let descriptor = try #require(interlaced.firstIndex(of: 0x2C))
        interlaced[descriptor + 9] |= 0x40
        let partial = try Self.decode(Array(interlaced.prefix(interlaced.count * 3 / 5)), GIFDecoder())
        #expect(partial.integrity == .truncated)
        #expect((0..<100).allSatisfy { Self.rows(partial.bitmap, $0) == Array(repeating: red, count: 16) })
        let early = Array(file.prefix(file.count / 20 + 30))
        for limits in [DecodingLimits.default, .strict] {
            #expect(S.failure { _ = try Self.decode(early, GIFDecoder(limits: limits)) } == .decoding(.truncated(.gif)))
        }
    }

    // MARK: Probe

    @Test("probe integrity: intact for whole files, truncated for cut ones (PNG without IEND, short RIFF, GIF without trailer)")
    func probeIntegrity() throws {
        for (name, format) in S.fixtures where [.png, .webp, .gif].contains(format) {
            let bytes = try S.fixture(name)
            let decoder = S.decoder(for: format)
            #expect(try bytes.withUnsafeBytes { try decoder.probe($0) }.integrity == .intact, "\(name)")
            let cut = Array(bytes.prefix(bytes.count - 1))
            #expect(try cut.withUnsafeBytes { try decoder.probe($0) }.integrity == .truncated, "\(name) less one byte")
        }
        let gif = Array(GIFDecoderTests.gif(screen: (2, 2), frame: (0, 0, 2, 2), index: 1).dropLast())
        #expect(try ImageDecoder().probe(Data(gif)).integrity == .truncated)
    }
}
