import CTesseraCodecs
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// Embedded ICC profiles are converted to sRGB (docs/COLOUR.md): one known pixel per profile kind,
/// with the expected value computed from the colour spaces' definitions (Display P3's primaries,
/// the CMYK profile's corner colours, the gamma formula), never from the decoder under test.
///
/// Tolerances: JPEG at quality 100 with flat colour moves a channel by at most about 1 level, and
/// lcms2's 8-bit matrix/shaper path rounds through 1.14 fixed point (another level); 3 levels
/// covers both. The CMYK profile's table interpolates Lab between 16-bit corners: 4 levels.
@Suite("Colour profiles")
struct CodecColourTests {
    typealias C = ColourTestSupport
    typealias S = CodecTestSupport

    /// Display P3 (200, 100, 50), well inside sRGB's gamut: sRGB ≈ (214.9, 92.6, 31.0).
    static let p3Colour: [Double] = [200, 100, 50]
    static let p3BGRA: [UInt8] = [50, 100, 200, 255]

    static func p3JPEG(chunks: Int = 1, order: [Int]? = nil, width: Int = 64, height: Int = 64) throws -> [UInt8] {
        let plain = try JPEGEncoder(quality: 100).encode(C.flat(width: width, height: height, bgra: p3BGRA))
        return C.jpeg(plain, embedding: try C.displayP3Profile(), chunks: chunks, order: order)
    }

    @Test("the expected P3 → sRGB value is what the matrices give, and far from the stored value")
    func expectedValue() {
        let expected = C.sRGB(fromDisplayP3: Self.p3Colour)
        #expect(abs(expected[0] - 214.9) < 0.5 && abs(expected[1] - 92.6) < 0.5 && abs(expected[2] - 31.0) < 0.5)
        // White stays white: the arithmetic is consistent.
        #expect(C.sRGB(fromDisplayP3: [255, 255, 255]).allSatisfy { abs($0 - 255) < 0.01 })
    }

    @Test("a Display P3 JPEG comes out in sRGB: full size, DCT-scaled, the 1/8 DC path, gray8")
    func displayP3JPEG() throws {
        let expected = C.sRGB(fromDisplayP3: Self.p3Colour)
        let file = try Self.p3JPEG(chunks: 3, order: [2, 3, 1])   // chunks out of order: assembled by sequence number
        let decoder = JPEGDecoder()
        let full = try S.decode(file, with: decoder).bitmap
        #expect(full.width == 64)
        #expect(C.near(full.pixel(x: 32, y: 32), rgb: expected, tolerance: 3), "\(full.pixel(x: 32, y: 32))")
        for target in [PixelSize(width: 32, height: 32), PixelSize(width: 8, height: 8)] {
            let scaled = try S.decode(file, with: decoder, atLeast: target).bitmap
            #expect(scaled.width == target.width)
            #expect(C.near(scaled.pixel(x: target.width / 2, y: target.height / 2), rgb: expected, tolerance: 3))
        }
        let bgr32 = try S.decode(file, with: decoder, style: .bgr32, atLeast: PixelSize(width: 8, height: 8)).bitmap
        #expect(C.near(bgr32.pixel(x: 4, y: 4), rgb: expected, tolerance: 3))
        // gray8: the Rec. 601 luma of the converted colour, not of the stored one.
        let gray = try S.decode(file, with: decoder, style: .gray8, atLeast: PixelSize(width: 8, height: 8)).bitmap
        let luma = (77 * expected[0] + 150 * expected[1] + 29 * expected[2]) / 256
        #expect(abs(Double(gray.pixel(x: 4, y: 4)[0]) - luma) <= 3)
        // Without the profile the same pixels stay P3's values.
        let plain = try JPEGEncoder(quality: 100).encode(C.flat(width: 64, height: 64, bgra: Self.p3BGRA))
        #expect(C.near(try S.decode(plain, with: decoder).bitmap.pixel(x: 32, y: 32), rgb: Self.p3Colour, tolerance: 2))
    }

    @Test("through ImageDecoder.thumbnail: the resampled thumbnail of a P3 JPEG is in sRGB")
    func thumbnail() throws {
        let thumb = try ImageDecoder().thumbnail(Data(try Self.p3JPEG(width: 300, height: 200)), size: PixelSize(width: 30, height: 20))
        #expect(C.near(thumb.pixel(x: 15, y: 10), rgb: C.sRGB(fromDisplayP3: Self.p3Colour), tolerance: 3))
    }

    @Test("a P3 PNG (iCCP) comes out in sRGB: fast path, box-reduced, libpng (interlace-free 16-bit), with alpha")
    func displayP3PNG() throws {
        let expected = C.sRGB(fromDisplayP3: Self.p3Colour)
        let chunk = C.iCCP(try C.displayP3Profile())
        let decoder = PNGDecoder()
        let file = C.png(try PNGEncoder().encode(C.flat(width: 64, height: 64, bgra: Self.p3BGRA)), inserting: chunk)
        for target: PixelSize? in [nil, PixelSize(width: 8, height: 8)] {
            let bitmap = try S.decode(file, with: decoder, atLeast: target).bitmap
            #expect(C.near(bitmap.pixel(x: 2, y: 2), rgb: expected, tolerance: 2), "\(bitmap.pixel(x: 2, y: 2))")
        }
        let gray = try S.decode(file, with: decoder, style: .gray8).bitmap
        #expect(abs(Double(gray.pixel(x: 2, y: 2)[0]) - (77 * expected[0] + 150 * expected[1] + 29 * expected[2]) / 256) <= 2)

        // Half-transparent P3 (premultiplied BGRA in, premultiplied BGRA out): lcms2 un-premultiplies,
        // converts and premultiplies again; alpha is kept.
        let half = C.flat(width: 16, height: 16, bgra: [25, 50, 100, 128])   // P3 (200, 100, 50) at alpha 128, premultiplied
        let translucent = C.png(try PNGEncoder().encode(half), inserting: chunk)
        let pixel = try S.decode(translucent, with: decoder).bitmap.pixel(x: 8, y: 8)
        #expect(pixel[3] == 128)
        #expect(C.near(pixel, rgb: expected.map { $0 * 128 / 255 }, tolerance: 3), "\(pixel)")
    }

    @Test("iCCP overrides gAMA: a P3 PNG with gAMA 1.0 decodes as without it")
    func profileOverridesGamma() throws {
        let plain = try PNGEncoder().encode(C.flat(width: 32, height: 32, bgra: Self.p3BGRA))
        let file = C.png(plain, inserting: C.gAMA(100_000) + C.iCCP(try C.displayP3Profile()))
        let pixel = try S.decode(file, with: PNGDecoder()).bitmap.pixel(x: 4, y: 4)
        #expect(C.near(pixel, rgb: C.sRGB(fromDisplayP3: Self.p3Colour), tolerance: 2), "\(pixel)")
    }

    @Test("a gAMA-only PNG keeps libpng's gamma handling: out = 255 (in / 255)^(1 / (2.2 g)), on every path")
    func gammaOnlyPNG() throws {
        // gAMA 1.0 (linear light): 128 → 255 · (128/255)^(1/2.2) ≈ 186.5; gAMA 1/1.8 (old Macs):
        // 128 → 255 · (128/255)^(1.8/2.2) ≈ 145.1.
        for (gamma, g) in [(100_000, 1.0), (55_556, 0.55556)] {
            let expected = 255 * pow(128.0 / 255, 1 / (2.2 * g))
            let file = C.png(try PNGEncoder().encode(C.flat(width: 64, height: 64, bgra: [128, 128, 128, 255])), inserting: C.gAMA(gamma))
            for target: PixelSize? in [nil, PixelSize(width: 8, height: 8)] {
                let pixel = try S.decode(file, with: PNGDecoder(), atLeast: target).bitmap.pixel(x: 2, y: 2)
                #expect(C.near(pixel, rgb: [expected, expected, expected], tolerance: 1.5), "gAMA \(gamma): \(pixel) vs \(expected)")
            }
        }
    }

    @Test("a WebP with an ICCP chunk comes out in sRGB, scaled or not")
    func displayP3WebP() throws {
        let plain = try WebPEncoder(lossless: true).encode(C.flat(width: 48, height: 32, bgra: Self.p3BGRA))
        let file = C.webp(plain, width: 48, height: 32, embedding: try C.displayP3Profile())
        let expected = C.sRGB(fromDisplayP3: Self.p3Colour)
        for target: PixelSize? in [nil, PixelSize(width: 12, height: 8)] {
            let bitmap = try S.decode(file, with: WebPDecoder(), atLeast: target).bitmap
            #expect(C.near(bitmap.pixel(x: 4, y: 4), rgb: expected, tolerance: 2), "\(bitmap.pixel(x: 4, y: 4))")
        }
        #expect(C.near(try S.decode(plain, with: WebPDecoder()).bitmap.pixel(x: 4, y: 4), rgb: Self.p3Colour, tolerance: 0))
    }

    @Test("a Display P3 HEIC and AVIF (ICC profile in colr, as phones write) come out in sRGB, full size and as a thumbnail",
          arguments: [ImageFileFormat.heic, .avif])
    func displayP3HEIF(format: ImageFileFormat) throws {
        let directory = try HEIFTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // heif-enc copies a PNG's iCCP into the colr box.
        let png = directory.appendingPathComponent("p3.png")
        let plain = try PNGEncoder().encode(C.flat(width: 64, height: 64, bgra: Self.p3BGRA))
        try Data(C.png(plain, inserting: C.iCCP(try C.displayP3Profile()))).write(to: png)
        let flags = (format == .avif ? ["-A", "-p", "speed=9"] : []) + ["-q", "100"]
        let file = try HEIFTestSupport.heifEnc(flags + [png.path], output: directory.appendingPathComponent("p3.\(format.fileExtension)"))
        #expect(try file.withUnsafeBytes { bytes throws(TesseraError) in try HEIFDecoder(format: format).iccProfile(bytes) } != nil)
        let expected = C.sRGB(fromDisplayP3: Self.p3Colour)
        let full = try ImageDecoder().decode(Data(file))
        #expect(C.near(full.pixel(x: 32, y: 32), rgb: expected, tolerance: 4), "\(full.pixel(x: 32, y: 32))")
        let thumb = try ImageDecoder().thumbnail(Data(file), size: PixelSize(width: 16, height: 16))
        #expect(C.near(thumb.pixel(x: 8, y: 8), rgb: expected, tolerance: 4), "\(thumb.pixel(x: 8, y: 8))")
    }

    @Test("a CMYK JPEG with a CMYK profile converts through it (Adobe-inverted values); without one, the naive formula")
    func cmykJPEG() throws {
        // Quadrants: cyan, magenta + yellow, white paper, cyan + magenta.
        let inks: [[UInt8]] = [[255, 0, 0, 0], [0, 255, 255, 0], [0, 0, 0, 0], [255, 255, 0, 0]]
        let plain = try C.cmykJPEG(width: 64, height: 64) { x, y in inks[(y >= 32 ? 2 : 0) + (x >= 32 ? 1 : 0)] }
        let file = C.jpeg(plain, embedding: try C.cmykProfile())
        let bitmap = try S.decode(file, with: JPEGDecoder()).bitmap
        let points = [(16, 16), (48, 16), (16, 48), (48, 48)]
        let expected = [C.cmykCorner(c: true, m: false, y: false, k: false), C.cmykCorner(c: false, m: true, y: true, k: false),
                        C.cmykCorner(c: false, m: false, y: false, k: false), C.cmykCorner(c: true, m: true, y: false, k: false)]
        for (point, rgb) in zip(points, expected) {
            let pixel = bitmap.pixel(x: point.0, y: point.1)
            #expect(C.near(pixel, rgb: rgb, tolerance: 4), "\(point): \(pixel) vs \(rgb)")
            #expect(pixel[3] == 255)
        }
        // Without the profile: R = (255 − C)(255 − K)/255 …: cyan is (0, 255, 255).
        let naive = try S.decode(plain, with: JPEGDecoder()).bitmap.pixel(x: 16, y: 16)
        #expect(C.near(naive, rgb: [0, 255, 255], tolerance: 2))
        // gray8 through the profile: the luma of the converted cyan.
        let gray = try S.decode(file, with: JPEGDecoder(), style: .gray8).bitmap.pixel(x: 16, y: 16)[0]
        let cyan = expected[0]
        #expect(abs(Double(gray) - (77 * cyan[0] + 150 * cyan[1] + 29 * cyan[2]) / 256) <= 4)
    }

    @Test("an sRGB-tagged file decodes to exactly the untagged pixels, and the profile is remembered as sRGB")
    func sRGBTaggedUnchanged() throws {
        let sRGB = try C.sRGBProfile()
        let plain = try JPEGEncoder(quality: 90).encode(C.flat(width: 40, height: 24, bgra: Self.p3BGRA))
        let tagged = C.jpeg(plain, embedding: sRGB)
        #expect(try S.decode(tagged, with: JPEGDecoder()).bitmap.hasSamePixels(as: S.decode(plain, with: JPEGDecoder()).bitmap))
        let png = try PNGEncoder().encode(C.flat(width: 16, height: 16, bgra: Self.p3BGRA))
        let pngTagged = C.png(png, inserting: C.iCCP(sRGB) + C.pngChunk("sRGB", [0]))
        #expect(try S.decode(pngTagged, with: PNGDecoder()).bitmap.hasSamePixels(as: S.decode(png, with: PNGDecoder()).bitmap))
        guard case .sRGB = ColourConversion.use(of: sRGB, for: .rgb) else { Issue.record("sRGB profile not recognised"); return }
        guard case .convert = ColourConversion.use(of: try C.displayP3Profile(), for: .rgb) else { Issue.record("P3 not converted"); return }
    }

    @Test("malformed and hostile profiles are ignored: the pixels stay as decoded, no error")
    func hostileProfiles() throws {
        let p3 = try C.displayP3Profile()
        let plain = try JPEGEncoder(quality: 100).encode(C.flat(width: 32, height: 32, bgra: Self.p3BGRA))
        let reference = try S.decode(plain, with: JPEGDecoder()).bitmap
        var hugeSize = p3
        hugeSize.replaceSubrange(0..<4, with: [0xFF, 0xFF, 0xFF, 0xFF])
        var tagCount = p3
        tagCount.replaceSubrange(128..<132, with: [0x7F, 0xFF, 0xFF, 0xFF])
        var generator = SeededGenerator(seed: 13)
        let garbage = (0..<600).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let files: [(String, [UInt8])] = [
            ("truncated profile", C.jpeg(plain, embedding: Array(p3.prefix(p3.count / 2)))),
            ("declared size 4 GB", C.jpeg(plain, embedding: hugeSize)),
            ("2^31 tags", C.jpeg(plain, embedding: tagCount)),
            ("garbage", C.jpeg(plain, embedding: garbage)),
            ("a chunk missing", C.jpeg(plain, embedding: p3, chunks: 3, order: [1, 3])),
            ("a chunk twice", C.jpeg(plain, embedding: p3, chunks: 2, order: [1, 1])),
            ("count 0", C.jpeg(plain, embedding: p3, declaredCount: 0)),
            ("sequence beyond the count", C.jpeg(plain, embedding: p3, chunks: 2, order: [1, 2], declaredCount: 1)),
        ]
        for (name, file) in files {
            #expect(try S.decode(file, with: JPEGDecoder()).bitmap.hasSamePixels(as: reference), "\(name)")
        }
        // A PNG whose iCCP does not inflate, and a gray PNG with an RGB profile, keep their pixels too.
        let png = try PNGEncoder().encode(C.flat(width: 16, height: 16, bgra: Self.p3BGRA))
        let broken = C.png(png, inserting: C.pngChunk("iCCP", Array("x".utf8) + [0, 0, 0x78, 0x01, 0xFF, 0xFF]))
        #expect(try S.decode(broken, with: PNGDecoder()).bitmap.hasSamePixels(as: S.decode(png, with: PNGDecoder()).bitmap))
        let grayPNG = try PNGEncoder().encode(try S.bitmap(width: 16, height: 16, style: .gray8) { _, _ in [50, 100, 200, 255] })
        let grayTagged = C.png(grayPNG, inserting: C.iCCP(p3))
        #expect(try S.decode(grayTagged, with: PNGDecoder()).bitmap.hasSamePixels(as: S.decode(grayPNG, with: PNGDecoder()).bitmap))
        // Profiles over 4 MiB are not even opened.
        #expect(!ColourConversion.use(of: [UInt8](repeating: 0, count: ColourConversion.maximumProfileBytes + 1), for: .rgb).isUsable)
        #expect(!ColourConversion.use(of: p3, for: .cmyk).isUsable)   // an RGB profile for CMYK pixels
    }

    @Test("converting after the box filter (as the codecs do) stays within a level of converting before it, on a photo")
    func convertAfterReduction() throws {
        // A MATE wallpaper (Debian's mate-backgrounds, installed by scripts/setup), decoded untagged
        // and converted as if it were Display P3: exact = convert every pixel, then box-reduce by 8;
        // Tessera's order = box-reduce, then convert. docs/COLOUR.md quotes the numbers.
        let path = "/usr/share/backgrounds/mate/nature/Garden.jpg"
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let transform = try #require(ColourConversion.use(of: try C.displayP3Profile(), for: .rgb).transform)
        let full = try S.decode(bytes, with: JPEGDecoder()).bitmap
        func copy(_ source: Bitmap, convert: Bool) -> Bitmap {
            Bitmap(width: source.width, height: source.height, style: .bgra32) { view in
                source.withUnsafeBytes { raw in
                    for y in 0..<source.height { view.row(y).copyMemory(from: raw.baseAddress! + y * source.bytesPerRow, byteCount: source.width * 4) }
                }
                if convert { transform.apply(to: view) }
            }
        }
        func reduced(_ source: Bitmap) -> Bitmap {
            Bitmap(width: (source.width + 7) / 8, height: (source.height + 7) / 8, style: .bgra32) { view in
                source.withUnsafeBytes { raw in
                    _ = tessera_box_reduce_bgra(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), source.bytesPerRow, Int32(source.width),
                                                Int32(source.height), 8, view.baseAddress.assumingMemoryBound(to: UInt8.self), view.layout.bytesPerRow)
                }
            }
        }
        let exact = reduced(copy(full, convert: true))
        let cheap = copy(reduced(full), convert: true)
        var total = 0, far = 0, count = 0
        for y in 0..<exact.height {
            for x in 0..<exact.width {
                for (a, b) in zip(exact.pixel(x: x, y: y).prefix(3), cheap.pixel(x: x, y: y).prefix(3)) {
                    let d = abs(Int(a) - Int(b))
                    total += d; count += 1; if d > 2 { far += 1 }
                }
            }
        }
        #expect(count > 100_000)
        #expect(Double(total) / Double(count) < 1, "mean \(Double(total) / Double(count))")
        #expect(Double(far) / Double(count) < 0.03, "share over 2 levels \(Double(far) / Double(count))")
        #expect(total > 0)   // the orders do differ: the test measures something
    }

    @Test("the transform cache stays within its entry limit and evicts the least recently used")
    func cacheBound() throws {
        var cache = TransformCache()
        let keys = (0..<(ColourConversion.cacheCapacity + 8)).map {
            ColourConversion.CacheKey(profile: [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)], input: .rgb)
        }
        for key in keys {
            cache.insert(.ignored, for: key)
            _ = cache.lookup(keys[0])   // keep the first one hot
        }
        #expect(cache.count == ColourConversion.cacheCapacity)
        #expect(cache.lookup(keys[0]) != nil)
        #expect(cache.lookup(keys[1]) == nil)
        #expect(cache.lookup(keys.last!) != nil)
    }
}
