import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import Tessera
import TesseraTestSupport

/// ThumbHash: known answers from an independent implementation (Tests/Fixtures/thumbhash-cases.json,
/// written once by generate-thumbhash.py with PyPI's thumbhash-python), round trips, and hostile hashes.
@Suite("ThumbHash")
struct ThumbHashTests {
    // MARK: Fixtures

    typealias Fixture = ThumbHashFixtures.Fixture

    static var fixtureFile: ThumbHashFixtures.File { ThumbHashFixtures.file }

    static var fixtureNames: [String] { fixtureFile.cases.map(\.name) }

    static func fixture(_ name: String) -> Fixture { ThumbHashFixtures.fixture(name) }

    static func bitmap(rgba: [UInt8], width: Int, height: Int, style: PixelStyle = .bgra32) -> Bitmap {
        ThumbHashFixtures.bitmap(rgba: rgba, width: width, height: height, style: style)
    }

    /// Whether `actual` is the fixture's hash. With glibc's libm (Linux, where the fixtures were made and
    /// the package computes in the same order of operations with the same `cos`) every byte must match.
    /// Elsewhere a nibble the generator listed as within 1e-9 of a half may round the other way (see
    /// `near_halves` in generate-thumbhash.py), and only those nibbles may differ, by 1.
    static func matches(_ actual: [UInt8], _ fixture: Fixture) -> Bool {
        let expected = fixture.hashBytes
        guard actual.count == expected.count else { return false }
        #if canImport(Glibc)
        return actual == expected
        #else
        for i in actual.indices where actual[i] != expected[i] {
            for (half, shift) in [("low", 0), ("high", 4)] {
                let a = Int(actual[i] >> shift) & 15, e = Int(expected[i] >> shift) & 15
                if a == e { continue }
                let listed = fixture.nearHalves?.contains { $0.byte == i && $0.half == half } ?? false
                if !listed || abs(a - e) != 1 { return false }
            }
        }
        return true
        #endif
    }

    @Test("the fixture names its source and holds every kind of case")
    func fixtureFileShape() {
        let file = Self.fixtureFile
        #expect(file.source.package == "thumbhash-python")
        #expect(file.note.contains(file.source.package) && file.note.contains(file.source.version))
        #expect(file.cases.count >= 10)
        #expect(file.cases.contains { !$0.isOpaque } && file.cases.contains { $0.isOpaque })
        #expect(file.cases.contains { $0.width != $0.height })
        #expect(file.cases.allSatisfy { $0.width <= 100 && $0.height <= 100 })
    }

    // MARK: Known answers

    @Test("straight RGBA hashes to the known bytes", arguments: fixtureNames)
    func knownAnswerFromRGBA(name: String) throws {
        let fixture = Self.fixture(name)
        let hash = try ThumbHash(rgba: fixture.pixels, width: fixture.width, height: fixture.height)
        #expect(Self.matches(hash.bytes, fixture), "\(hash.base64) vs \(fixture.thumbHash)")
        #expect(hash.base64 == fixture.thumbHash)
    }

    @Test("a premultiplied BGRA bitmap (and BGR for opaque cases) hashes to the known bytes", arguments: fixtureNames)
    func knownAnswerFromBitmap(name: String) throws {
        let fixture = Self.fixture(name)
        let bgra = Self.bitmap(rgba: fixture.pixels, width: fixture.width, height: fixture.height)
        // The generator chose partially transparent colours that survive premultiplying and
        // un-premultiplying with Tessera's rounding, so the bitmap hands the encoder the fixture's bytes.
        #expect(bgra.copyPixels(as: .rgbaStraight) == fixture.pixels)
        #expect(Self.matches(try ThumbHash(image: bgra).bytes, fixture))
        if fixture.isOpaque {
            let bgr = Self.bitmap(rgba: fixture.pixels, width: fixture.width, height: fixture.height, style: .bgr32)
            #expect(Self.matches(try ThumbHash(image: bgr).bytes, fixture))
        }
    }

    @Test("where the package's half-to-even rounding differs, Tessera writes the reference's half-up")
    func roundingTies() throws {
        let ties = Self.fixtureFile.cases.filter { $0.packageThumbHash != nil }
        #expect(ties.count == 2, "the two lx ties: 7 × 30 / 84 and 5 × 10 / 20 are both 2.5")
        for fixture in ties {
            let hash = try ThumbHash(rgba: fixture.pixels, width: fixture.width, height: fixture.height)
            let package = try #require(fixture.packageThumbHash.flatMap { Data(base64Encoded: $0) })
            #expect(hash.bytes != Array(package))
            // Byte 3's low 3 bits are the luminance count: JavaScript's Math.round(2.5) is 3, Python's round 2.
            #expect(hash.bytes[3] & 7 == 3 && package[3] & 7 == 2)
            #expect(try ThumbHash(bytes: Array(package)).bytes == Array(package), "the package's hash is valid too")
        }
    }

    @Test("decoding gives the package's size and pixels (the reference truncates where it rounds)", arguments: fixtureNames)
    func knownDecode(name: String) throws {
        let fixture = Self.fixture(name)
        let hash = try ThumbHash(base64: fixture.thumbHash)
        let ours = hash.placeholderRGBA()
        let bitmap = hash.placeholder()
        #expect(bitmap.style == .bgra32 && bitmap.layout.size == hash.placeholderSize)
        #expect(bitmap.copyPixels(as: .rgbaPremultiplied) == Self.premultiplied(ours))
        if fixture.decoded.note != nil {
            // A stored luminance count below 3: the package sizes the placeholder from max(3, count), the
            // published reference from the count itself. The reference's thumbHashToRGBA (js/thumbhash.js,
            // run once) gives 5 × 32 for the 7 × 100 stripes: round(32 × 1 / 7) = 5; the package 14 × 32.
            #expect(fixture.hashBytes[3] & 7 < 3)
            #expect(hash.placeholderSize == PixelSize(width: 5, height: 32))
            #expect(fixture.decoded.width == 14)
            return
        }
        #expect(hash.placeholderSize == PixelSize(width: fixture.decoded.width, height: fixture.decoded.height))
        let package = Array(try #require(Data(base64Encoded: fixture.decoded.rgba)))
        #expect(ours.count == package.count)
        // The package stores round(v), the reference (and Tessera) trunc(v) of the same v = 255 × c, so
        // each channel is the same or 1 below.
        let worst = zip(ours, package).map { Int($1) - Int($0) }
        #expect(worst.allSatisfy { (0...1).contains($0) }, "differences \(Set(worst))")
    }

    /// Straight RGBA premultiplied with `round(c × a / 255)`.
    static func premultiplied(_ rgba: [UInt8]) -> [UInt8] {
        var out = rgba
        for i in stride(from: 0, to: out.count, by: 4) {
            let a = Int(out[i + 3])
            for c in 0..<3 { out[i + c] = UInt8((Int(out[i + c]) * a * 2 + 255) / 510) }
        }
        return out
    }

    /// `thumbHashToAverageRGBA` and `thumbHashToApproximateAspectRatio` of the published JavaScript
    /// reference (js/thumbhash.js), run once on these fixtures' hashes; the Python package has neither.
    @Test("average colour and aspect ratio are the reference's")
    func averageColourAndAspectRatio() throws {
        let known: [(String, Double, Double, Double, Double, Double)] = [
            ("gradient 64x48", 0.5158730158730158, 0.5, 0.746031746031746, 1, 1.4),
            ("transparent disc 60x90", 0.8915343915343915, 0.49470899470899476, 0.23280423280423285, 0.3333333333333333, 0.6),
            ("stripes 7x100", 0.3994708994708995, 0.38359788359788366, 0.2169312169312169, 1, 1.0 / 7),
            ("checker with holes 40x25", 1, 0.9973544973544974, 0.9894179894179894, 0.5333333333333333, 5.0 / 3),
        ]
        for (name, r, g, b, a, ratio) in known {
            let hash = try ThumbHash(base64: Self.fixture(name).thumbHash)
            let colour = hash.averageColor
            for (ours, theirs) in [(colour.red, r), (colour.green, g), (colour.blue, b), (colour.alpha, a)] {
                #expect(abs(ours - theirs) < 1e-12, "\(name): \(colour)")
            }
            #expect(abs(hash.approximateAspectRatio - ratio) < 1e-12, "\(name)")
        }
    }

    // MARK: Round trips

    /// 64 × 64 in four flat quadrants: red, green, blue, white.
    static let quadrantColours: [[UInt8]] = [[220, 40, 40], [40, 200, 60], [30, 60, 210], [240, 240, 240]]

    static func quadrants(size: Int) -> [UInt8] {
        var rgba: [UInt8] = []
        for y in 0..<size {
            for x in 0..<size {
                rgba += quadrantColours[(y < size / 2 ? 0 : 2) + (x < size / 2 ? 0 : 1)] + [255]
            }
        }
        return rgba
    }

    /// The mean of each quadrant of a `w × h` straight RGBA image (the colours the placeholder stands for,
    /// the source box-averaged down to 2 × 2).
    static func quadrantMeans(_ rgba: [UInt8], width w: Int, height h: Int) -> [[Double]] {
        var sums = [[Double]](repeating: [0, 0, 0], count: 4), counts = [Double](repeating: 0, count: 4)
        for y in 0..<h {
            for x in 0..<w {
                let q = (y < h / 2 ? 0 : 2) + (x < w / 2 ? 0 : 1)
                for c in 0..<3 { sums[q][c] += Double(rgba[(y * w + x) * 4 + c]) }
                counts[q] += 1
            }
        }
        return sums.indices.map { q in sums[q].map { $0 / counts[q] } }
    }

    /// Four flat quadrants, compared as quadrant means (the source and the placeholder each box-averaged
    /// to 2 × 2) and as whole-image means.
    ///
    /// The whole-image mean is the DC terms, kept to 6 bits: L to 1/63 (±2 of 255 after rounding), P and
    /// Q to 1/31.5 (±4); r = L + P/3 + Q/2 puts that at most ±5.3 off, so the tolerance is 6 of 255.
    ///
    /// Quadrant means are a low-pass view: a quadrant image is its mean plus a horizontal step, a vertical
    /// step and a 2 × 2 checker, and ThumbHash keeps a 7 × 7 triangle of luminance frequencies but only a
    /// 3 × 3 triangle of P and Q (cx + cy ≤ 2), boosted 1.25× on decode. A ±1 step's first cosine term
    /// carries 8/π² ≈ 0.81 of it into the quadrant means and the checker's (1, 1) term (8/π²)² ≈ 0.66, so
    /// these colours (red's checker part is (220 + 240 − 40 − 30) / 4 ≈ 98) lose up to about a third of
    /// their contrast: with exact coefficients the worst channel (red) is 57 of 255 off. The 4-bit
    /// coefficients add up to about 15, so the tolerance is 72, and each placeholder quadrant must still
    /// be nearer its own colour than any other quadrant's.
    @Test("four colour quadrants come back as their colours, quadrant by quadrant")
    func quadrantRoundTrip() throws {
        let source = Self.quadrants(size: 64)
        let hash = try ThumbHash(image: Self.bitmap(rgba: source, width: 64, height: 64))
        let size = hash.placeholderSize
        #expect(size == PixelSize(width: 32, height: 32))
        let expected = Self.quadrantMeans(source, width: 64, height: 64)
        let placeholder = hash.placeholder().copyPixels(as: .rgbaStraight)
        let actual = Self.quadrantMeans(placeholder, width: size.width, height: size.height)
        var worst = 0.0
        for q in 0..<4 {
            for c in 0..<3 { worst = max(worst, abs(actual[q][c] - expected[q][c])) }
            let distances = expected.map { colour in zip(colour, actual[q]).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) }
            #expect(distances.firstIndex(of: distances.min()!) == q, "quadrant \(q): \(actual[q])")
        }
        #expect(worst <= 72, "quadrants \(actual) vs \(expected)")
        for c in 0..<3 {
            let sourceMean = expected.map { $0[c] }.reduce(0, +) / 4
            let placeholderMean = actual.map { $0[c] }.reduce(0, +) / 4
            #expect(abs(placeholderMean - sourceMean) <= 6, "channel \(c): \(placeholderMean) vs \(sourceMean)")
        }
        // The opaque source gives an opaque placeholder, and the average colour is the same DC terms.
        #expect(placeholder.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
        let mean = (0..<3).map { c in Self.quadrantColours.map { Double($0[c]) }.reduce(0, +) / 4 / 255 }
        let average = hash.averageColor
        #expect(abs(average.red - mean[0]) <= 6.0 / 255 && abs(average.green - mean[1]) <= 6.0 / 255
                && abs(average.blue - mean[2]) <= 6.0 / 255, "\(average) vs \(mean)")
        #expect(average.alpha == 1)
    }

    /// A grey ramp is luminance only (P and Q are 0, so the 1.25× colour boost does nothing), constant
    /// down each column, compared column by column: the placeholder's column means against the source
    /// box-averaged to the placeholder's width. Tolerance 24 of 255.
    ///
    /// Why column means and not pixels: a 4-bit coefficient cannot hold 0 (15 × 0.5 = 7.5 rounds to 8,
    /// which decodes as +scale / 15), so every vertical term (cy ≥ 1), zero for this image, comes back as
    /// a small cosine down the columns; at the top and bottom rows they add up to about 47 of 255. Over a
    /// whole column each of them sums to zero (Σ cos(π cy (y + ½) / h) over y is 0), leaving the horizontal
    /// series: a linear ramp cut after cx = 6, which rings most at the two ends, plus the same 4-bit
    /// rounding of the horizontal terms (about 15 of 255 in red), and the 6-bit DC terms of P and Q,
    /// which cannot hold 0 either (round(31.5) = 32 decodes as 32 / 31.5 − 1 ≈ +0.016), so the grey comes
    /// back tinted: r = L + P/3 + Q/2 is 3.4 of 255 higher, b = L − ⅔ P 2.7 lower, and blue, 6 below red
    /// where red is already 15 low, is the worst channel. Measured worst: 21.2, in blue.
    /// The ramp must also still rise: the means of four bands of columns increase.
    @Test("a smooth grey ramp comes back column by column")
    func gradientRoundTrip() throws {
        let w = 96, h = 64
        var source: [UInt8] = []
        for _ in 0..<h {
            for x in 0..<w { source += [UInt8(40 + x * 2), UInt8(40 + x * 2), UInt8(40 + x * 2), 255] }
        }
        let hash = try ThumbHash(rgba: source, width: w, height: h)
        let size = hash.placeholderSize
        // 96 × 64 stores lx = 7, ly = round(7 × 64 / 96) = round(4.67) = 5: ratio 1.4, height round(32 / 1.4) = 23.
        #expect(size == PixelSize(width: 32, height: 23))
        let placeholder = hash.placeholderRGBA()
        var worst = 0.0
        var columns: [Double] = []
        for x in 0..<size.width {
            for c in 0..<3 {
                // Source columns of placeholder column x: 3 each (96 / 32).
                let expected = Double((0..<3).map { Int(source[(x * 3 + $0) * 4 + c]) }.reduce(0, +)) / 3
                let actual = Double((0..<size.height).map { Int(placeholder[($0 * size.width + x) * 4 + c]) }.reduce(0, +))
                    / Double(size.height)
                worst = max(worst, abs(actual - expected))
                if c == 0 { columns.append(actual) }
            }
        }
        #expect(worst <= 24, "worst \(worst)")
        let bands = (0..<4).map { band in columns[band * 8..<(band + 1) * 8].reduce(0, +) / 8 }
        #expect(zip(bands, bands.dropFirst()).allSatisfy { $0 + 24 < $1 }, "\(bands)")
    }

    @Test("transparency survives: a transparent half stays transparent")
    func alphaRoundTrip() throws {
        var source: [UInt8] = []
        for _ in 0..<40 {
            for x in 0..<40 { source += x < 20 ? [0, 0, 0, 0] : [200, 100, 50, 255] }
        }
        let hash = try ThumbHash(image: Self.bitmap(rgba: source, width: 40, height: 40))
        #expect(hash.bytes[2] & 0x80 != 0, "has alpha")
        #expect(abs(hash.averageColor.alpha - 0.5) <= 1.0 / 15)
        let placeholder = hash.placeholderRGBA()
        let size = hash.placeholderSize
        let alpha = { (x: Int, y: Int) in Int(placeholder[(y * size.width + x) * 4 + 3]) }
        #expect(alpha(3, 16) < 40 && alpha(28, 16) > 215)
        // Visible pixels carry the opaque half's colour, not black: compositing over the average keeps
        // the transparent pixels' colour out.
        let right = (y: 16, x: 28)
        let o = (right.y * size.width + right.x) * 4
        #expect(abs(Int(placeholder[o]) - 200) <= 24 && abs(Int(placeholder[o + 1]) - 100) <= 24 && abs(Int(placeholder[o + 2]) - 50) <= 24)
    }

    // MARK: Large images and other styles

    @Test("encodedSize fits the longer side to 100, rounding the shorter half up")
    func encodedSizes() {
        let cases: [(PixelSize, PixelSize)] = [
            (PixelSize(width: 4000, height: 3000), PixelSize(width: 100, height: 75)),
            (PixelSize(width: 1000, height: 3), PixelSize(width: 100, height: 1)),
            (PixelSize(width: 3, height: 1000), PixelSize(width: 1, height: 100)),
            (PixelSize(width: 101, height: 50), PixelSize(width: 100, height: 50)),
            (PixelSize(width: 300, height: 150), PixelSize(width: 100, height: 50)),
            (PixelSize(width: 100, height: 100), PixelSize(width: 100, height: 100)),
            (PixelSize(width: 64, height: 48), PixelSize(width: 64, height: 48)),
        ]
        for (size, expected) in cases { #expect(ThumbHash.encodedSize(for: size) == expected, "\(size)") }
    }

    @Test("a large image is box-averaged first: 2 × 2 blocks hash as the image of their colours")
    func largeImageBoxAverage() throws {
        // 200 × 150 made of 2 × 2 blocks of one colour each (some half transparent), against the
        // 100 × 75 image of those colours: the box average is exact.
        let small = Self.fixture("photo-like 100x75").pixels
        var large = [UInt8](repeating: 0, count: 200 * 150 * 4)
        var smallWithAlpha = small
        for y in 0..<75 {
            for x in 0..<100 {
                let s = (y * 100 + x) * 4
                if (x + y) % 7 == 0 { smallWithAlpha[s + 3] = 0; smallWithAlpha[s] = 0; smallWithAlpha[s + 1] = 0; smallWithAlpha[s + 2] = 0 }
                for dy in 0..<2 {
                    for dx in 0..<2 {
                        let d = ((y * 2 + dy) * 200 + x * 2 + dx) * 4
                        for c in 0..<4 { large[d + c] = smallWithAlpha[s + c] }
                    }
                }
            }
        }
        let largeHash = try ThumbHash(image: Self.bitmap(rgba: large, width: 200, height: 150))
        let smallHash = try ThumbHash(rgba: smallWithAlpha, width: 100, height: 75)
        #expect(largeHash == smallHash)

        // A uniform colour stays that colour through any box average, whatever the box shapes.
        let solid = Array(repeating: [UInt8]([30, 140, 220, 255]), count: 317 * 123).flatMap { $0 }
        let solidSmall = Array(repeating: [UInt8]([30, 140, 220, 255]), count: 100 * 39).flatMap { $0 }
        #expect(try ThumbHash(image: Self.bitmap(rgba: solid, width: 317, height: 123))
                == ThumbHash(rgba: solidSmall, width: 100, height: 39))
    }

    @Test("every pixel style encodes, and an empty or oversized input is a typed error")
    func stylesAndBadInput() throws {
        let source = Self.fixture("photo-like 100x75")
        let bgra = Self.bitmap(rgba: source.pixels, width: 100, height: 75)
        for style in PixelStyle.allCases {
            let converted = try Bitmap(width: 100, height: 75, style: style) { (view) throws(TesseraError) in
                try PixelConversion.convert(bgra, to: view)
            }
            let hash = try ThumbHash(image: converted)
            #expect(try ThumbHash(bytes: hash.bytes) == hash)
            #expect(hash.bytes[2] & 0x80 == 0, "\(style): opaque")
        }
        #expect(throws: TesseraError.self) { try ThumbHash(rgba: [1, 2, 3], width: 1, height: 1) }
        #expect(throws: TesseraError.self) { try ThumbHash(rgba: [UInt8](repeating: 0, count: 101 * 4), width: 101, height: 1) }
        #expect(throws: TesseraError.self) { try ThumbHash(rgba: [], width: 0, height: 0) }
        let empty = Bitmap(width: 0, height: 0, style: .bgra32) { _ in }
        #expect(throws: TesseraError.self) { try ThumbHash(image: empty) }
    }

    // MARK: Hostile hashes

    /// Every query a caller can make of a valid hash, checked for sanity.
    static func exercise(_ hash: ThumbHash) throws {
        let size = hash.placeholderSize
        #expect((5...32).contains(size.width) && (5...32).contains(size.height) && max(size.width, size.height) == 32)
        #expect(hash.placeholderRGBA().count == size.width * size.height * 4)
        #expect(hash.placeholder().layout.size == size)
        let colour = hash.averageColor
        #expect([colour.red, colour.green, colour.blue, colour.alpha].allSatisfy { (0...1).contains($0) })
        #expect(hash.approximateAspectRatio > 0 && hash.approximateAspectRatio.isFinite)
        #expect(try ThumbHash(base64: hash.base64) == hash)
    }

    @Test("short, empty and badly sized hashes are typed errors")
    func badLengths() throws {
        for count in 0..<5 {
            #expect(throws: ThumbHash.Invalid(.tooShort(byteCount: count))) { try ThumbHash(bytes: [UInt8](repeating: 0x07, count: count)) }
        }
        let valid = Self.fixture("photo-like 100x75").hashBytes
        #expect(throws: ThumbHash.Invalid(.wrongLength(expected: valid.count, actual: valid.count - 1))) {
            try ThumbHash(bytes: Array(valid.dropLast()))
        }
        #expect(throws: ThumbHash.Invalid(.wrongLength(expected: valid.count, actual: valid.count + 1))) {
            try ThumbHash(bytes: valid + [0])
        }
        // An alpha hash cut to its 5 fixed bytes lacks the alpha byte too.
        let alpha = Self.fixture("transparent disc 60x90").hashBytes
        #expect(throws: ThumbHash.Invalid(.wrongLength(expected: alpha.count, actual: 5))) { try ThumbHash(bytes: Array(alpha.prefix(5))) }
    }

    @Test("every header: a luminance count outside the format is refused, every other one decodes at its exact length")
    func everyHeader() throws {
        var lengths: [Bool: Set<Int>] = [:]
        for hasAlpha in [false, true] {
            for landscape in [false, true] {
                for count in 0...7 {
                    var bytes: [UInt8] = [0x5A, 0xA5, hasAlpha ? 0xC3 : 0x43, UInt8(count) | 0xA8, landscape ? 0x9F : 0x1F]
                    let limit = hasAlpha ? 5 : 7
                    if count == 0 || count > limit {
                        #expect(throws: ThumbHash.Invalid(.badLuminanceCount(count, allowed: 1...limit))) {
                            try ThumbHash(bytes: bytes + [UInt8](repeating: 0x77, count: 20))
                        }
                        continue
                    }
                    // Find the one length that is accepted.
                    var accepted: [Int] = []
                    while bytes.count <= 40 {
                        if let hash = try? ThumbHash(bytes: bytes) {
                            accepted.append(bytes.count)
                            try Self.exercise(hash)
                        }
                        bytes.append(UInt8(truncatingIfNeeded: bytes.count &* 37))
                    }
                    #expect(accepted.count == 1, "alpha \(hasAlpha) landscape \(landscape) count \(count): \(accepted)")
                    lengths[hasAlpha, default: []].formUnion(accepted)
                }
            }
        }
        #expect(lengths[false]!.min() == 17 && lengths[false]!.max() == 24)
        #expect(lengths[true]!.min() == 23 && lengths[true]!.max() == 25)
    }

    @Test("random bytes of every length 0…64 either decode or throw ThumbHash.Invalid")
    func randomBytes() throws {
        var rng = SeededGenerator(seed: 0x7468_756D_6268_6173)   // seeded: a failure names bytes that can be replayed
        var decoded = 0, refused = 0
        for length in 0...64 {
            for _ in 0..<200 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let hash: ThumbHash
                do { hash = try ThumbHash(bytes: bytes) } catch {
                    refused += 1
                    continue
                }
                try Self.exercise(hash)
                decoded += 1
            }
        }
        #expect(decoded > 100 && refused > 10_000, "decoded \(decoded), refused \(refused)")
    }

    @Test("base64: padding optional, anything else a typed error")
    func base64Text() throws {
        let fixture = Self.fixture("transparent disc 60x90")
        #expect(fixture.thumbHash.hasSuffix("="))
        var unpadded = fixture.thumbHash
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        #expect(try ThumbHash(base64: unpadded).base64 == fixture.thumbHash)
        #expect(try ThumbHash(base64: fixture.thumbHash).bytes == fixture.hashBytes)
        #expect("\(try ThumbHash(base64: fixture.thumbHash))" == fixture.thumbHash)
        for text in ["", "A", "AAAA", "!!!!!!!!", "====", "osuC AwI1", "ösuCAwI1", String(repeating: "A", count: 10_000),
                     fixture.thumbHash.replacingOccurrences(of: "+", with: "-")] {
            #expect(throws: ThumbHash.Invalid.self, "\(text.prefix(20))") { try ThumbHash(base64: text) }
        }
        #expect(throws: ThumbHash.Invalid(.notBase64)) { try ThumbHash(base64: "%%%%") }
        #expect(throws: ThumbHash.Invalid(.tooShort(byteCount: 0))) { try ThumbHash(base64: "") }
    }
}
