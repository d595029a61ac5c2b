import CTesseraCodecs
import ToolsTurboJPEG
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// JPEG under ``DecodingPolicy/lenient`` decodes what browsers show: libjpeg's warnings give
/// ``DecodeIntegrity/damaged`` pixels, files that end early give ``DecodeIntegrity/truncated`` ones
/// with the missing rows grey, at every DCT scale and through TurboJPEG, the DC-only decoder and the
/// libjpeg shim. ``DecodingPolicy/strict`` still refuses them. The files are made from the committed
/// fixture `baseline.jpg`, enlarged with seeded noise so that every row differs from the fill grey.
@Suite("JPEG lenient decoding: damage and truncation")
struct CodecJPEGLenientTests {
    typealias S = CodecTestSupport

    static let width = 320, height = 240

    /// `baseline.jpg` decoded, enlarged to 320 x 240 and given seeded noise and a gradient.
    static let source: Bitmap = {
        let fixture = try! S.decode(try! S.fixture("baseline.jpg"), with: JPEGDecoder()).bitmap
        var generator = SeededGenerator(seed: 11)
        let noise = (0..<(width * height)).map { _ in Int(generator.next() % 48) - 24 }
        return try! S.bitmap(width: width, height: height, style: .bgra32) { x, y in
            let p = fixture.pixel(x: x * fixture.width / width, y: y * fixture.height / height)
            let n = noise[y * width + x]
            func c(_ v: UInt8, _ shift: Int) -> UInt8 { UInt8(max(0, min(255, Int(v) + n + shift))) }
            return [c(p[0], x / 10 - 16), c(p[1], y / 8 - 15), c(p[2], 0), 255]
        }
    }()

    /// A baseline 4:2:0 JPEG of ``source`` (TurboJPEG through ``JPEGEncoder``).
    static let baseline: [UInt8] = try! JPEGEncoder(quality: 90).encode(source)

    /// A progressive 4:2:0 JPEG of ``source`` (TurboJPEG with `TJFLAG_PROGRESSIVE`: a DC scan of all
    /// components first, then AC scans, each with its own Huffman tables).
    static let progressive: [UInt8] = {
        let handle = tjInitCompress()!
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = source.withUnsafeBytes { raw in
            tjCompress2(handle, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(source.layout.bytesPerRow),
                        Int32(height), TJPF_BGRA.rawValue, &output, &size, Int32(TJSAMP_420.rawValue), 90, Int32(TJFLAG_PROGRESSIVE))
        }
        precondition(status == 0 && output != nil)
        defer { tjFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }()

    /// A decode with `limits` through ``JPEGDecoder``: probe, the scaled size covering `target`, decode.
    static func decode(_ bytes: [UInt8], limits: DecodingLimits = .default, style: PixelStyle = .bgra32,
                       atLeast target: PixelSize? = nil) throws -> (info: ImageInfo, integrity: DecodeIntegrity, bitmap: Bitmap) {
        let result = try CodecLenientTests.decode(bytes, JPEGDecoder(limits: limits), style: style, atLeast: target)
        return (result.info, result.integrity, result.bitmap)
    }

    /// Whether row `y` is the fill grey in every pixel (B = G = R = 128, A = 255; 128 for gray8).
    static func isGrey(_ bitmap: Bitmap, row y: Int) -> Bool {
        let grey = DecodeIntegrity.fillGray
        let expected: [UInt8] = bitmap.style == .gray8 ? [grey] : [grey, grey, grey, 255]
        return (0..<bitmap.width).allSatisfy { bitmap.pixel(x: $0, y: y) == expected }
    }

    /// The first row from which every row is the fill grey (`height` when the last row is not grey).
    static func greyFrom(_ bitmap: Bitmap) -> Int {
        var y = bitmap.height
        while y > 0, isGrey(bitmap, row: y - 1) { y -= 1 }
        return y
    }

    /// The largest channel difference between rows `rows` of two bitmaps of the same size and style.
    static func maxDelta(_ a: Bitmap, _ b: Bitmap, rows: Range<Int>) -> Int {
        var worst = 0
        for y in rows { for x in 0..<a.width { for (p, q) in zip(a.pixel(x: x, y: y), b.pixel(x: x, y: y)) { worst = max(worst, abs(Int(p) - Int(q))) } } }
        return worst
    }

    /// The mean channel difference between two bitmaps of the same size and style.
    static func meanDelta(_ a: Bitmap, _ b: Bitmap) -> Double {
        var total = 0, count = 0
        for y in 0..<a.height { for x in 0..<a.width { for (p, q) in zip(a.pixel(x: x, y: y), b.pixel(x: x, y: y)) { total += abs(Int(p) - Int(q)); count += 1 } } }
        return Double(total) / Double(count)
    }

    /// Offsets of the markers of `file` up to its first scan, then of every marker after (SOS, DHT, EOI …).
    static func markers(_ file: [UInt8]) -> [(offset: Int, marker: UInt8)] {
        var found: [(Int, UInt8)] = []
        var i = 2
        while i + 1 < file.count {
            if file[i] == 0xFF, file[i + 1] != 0x00, file[i + 1] != 0xFF, !(0xD0...0xD7).contains(file[i + 1]) {
                found.append((i, file[i + 1]))
                if file[i + 1] == 0xD9 { break }
                let length = Int(file[i + 2]) << 8 | Int(file[i + 3])
                i += 2 + length   // entropy-coded data follows SOS; the search below walks it byte by byte
                continue
            }
            i += 1
        }
        return found
    }

    /// `file` with `bytes` inserted at `offset`.
    static func inserting(_ bytes: [UInt8], at offset: Int, into file: [UInt8]) -> [UInt8] {
        Array(file[..<offset]) + bytes + Array(file[offset...])
    }

    /// The four DCT scales as decode targets: 1/1, 1/2, 1/4, 1/8 of 320 x 240.
    static let scales: [PixelSize?] = [nil, PixelSize(width: 160, height: 120), PixelSize(width: 80, height: 60),
                                       PixelSize(width: 40, height: 30)]

    // MARK: Damage

    @Test("Bytes before a marker: decoded as libjpeg-turbo decodes them, damaged, under both policies and at every scale",
          arguments: scales)
    func extraneousBytes(target: PixelSize?) throws {
        let sos = try #require(Self.markers(Self.baseline).first { $0.marker == 0xDA }).offset
        let damaged = Self.inserting([0x12, 0x34, 0x56], at: sos, into: Self.baseline)
        let clean = try Self.decode(Self.baseline, atLeast: target)
        #expect(clean.integrity == .intact)
        for limits in [DecodingLimits.default, .strict] {
            let result = try Self.decode(damaged, limits: limits, atLeast: target)
            #expect(result.integrity == .damaged, "\(limits.policy)")
            #expect(result.info.integrity == .intact)
            #expect(Self.maxDelta(result.bitmap, clean.bitmap, rows: 0..<clean.bitmap.height) == 0, "\(limits.policy) \(String(describing: target))")
        }
        // The façade carries the integrity with the pixels.
        let bitmap = try ImageDecoder().decode(Data(damaged))
        #expect(bitmap.integrity == .damaged)
    }

    @Test("A junk FF 00 region between header segments decodes to the clean pixels, damaged")
    func junkHeaderRegion() throws {
        let dqt = try #require(Self.markers(Self.baseline).first { $0.marker == 0xDB }).offset
        let damaged = Self.inserting([0xFF, 0x00, 0xFF, 0x00, 0x41, 0x42], at: dqt, into: Self.baseline)
        let clean = try Self.decode(Self.baseline)
        let result = try Self.decode(damaged)
        #expect(result.integrity == .damaged)
        #expect(Self.maxDelta(result.bitmap, clean.bitmap, rows: 0..<Self.height) == 0)
    }

    @Test("A JFIF segment of an unknown version: a libjpeg warning, damaged under lenient, a codec error under strict")
    func badJFIFVersion() throws {
        var damaged = Self.baseline
        let app0 = try #require(Self.markers(damaged).first { $0.marker == 0xE0 }).offset
        #expect(Array(damaged[(app0 + 4)..<(app0 + 9)]) == Array("JFIF\0".utf8))
        damaged[app0 + 9] = 3   // major version 3
        let clean = try Self.decode(Self.baseline)
        for target in Self.scales {
            let result = try Self.decode(damaged, atLeast: target)
            #expect(result.integrity == .damaged, "\(String(describing: target))")
            let reference = try Self.decode(Self.baseline, atLeast: target)
            #expect(Self.maxDelta(result.bitmap, reference.bitmap, rows: 0..<reference.bitmap.height) == 0)
        }
        let reason = S.failure { _ = try Self.decode(damaged, limits: .strict) }
        guard case .decoding(.codec(.jpeg, let message)) = reason else {
            Issue.record("strict should fail with the codec's warning, got \(String(describing: reason))")
            return
        }
        #expect(message.contains("JFIF"))
        #expect(clean.integrity == .intact)
    }

    @Test("A cut APP14 Adobe segment and a junk APP5 segment holding FF D9: the clean pixels under both policies")
    func badAppSegments() throws {
        let clean = try Self.decode(Self.baseline)
        let afterSOI = 2
        let shortAdobe: [UInt8] = [0xFF, 0xEE, 0x00, 0x0A] + Array("Adobe".utf8) + [0x00, 0x64, 0x00]   // 8 of its 12 bytes
        var junk: [UInt8] = [0xFF, 0xE5, 0x00, 0x22]
        var generator = SeededGenerator(seed: 5)
        junk += (0..<28).map { _ in UInt8(truncatingIfNeeded: generator.next()) } + [0xFF, 0xD9, 0xFF, 0x00]
        for (name, segment) in [("APP14", shortAdobe), ("APP5", junk)] {
            let file = Self.inserting(segment, at: afterSOI, into: Self.baseline)
            for limits in [DecodingLimits.default, .strict] {
                let result = try Self.decode(file, limits: limits)
                #expect(result.info.integrity == .intact, "\(name)")
                #expect(result.integrity != .truncated, "\(name)")
                #expect(Self.maxDelta(result.bitmap, clean.bitmap, rows: 0..<Self.height) == 0, "\(name) \(limits.policy)")
            }
        }
    }

    @Test("A corrupt entropy segment that restart markers recover from: damaged, the other segments intact",
          .enabled(if: CodecLibjpegTests.cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: scales)
    func corruptRestartSegment(target: PixelSize?) throws {
        let file = try CodecLibjpegTests.encode(["-restart", "1"], image: Self.source)   // one restart interval per MCU row
        let restarts = (0..<(file.count - 1)).filter { file[$0] == 0xFF && (0xD0...0xD7).contains(file[$0 + 1]) }
        #expect(restarts.count == Self.height / 16 - 1)
        // Entropy bytes overwritten in the middle of the fourth interval (MCU rows of 16 pixels: rows
        // 48..<64): libjpeg decodes garbage, then skips what is left of the interval before RST3
        // ("extraneous bytes", its only warning here, which strict lets through as before).
        let start = restarts[2] + 2, end = restarts[3]
        var corrupt = file
        for k in (start + (end - start) / 4)..<(start + (end - start) / 2) where corrupt[k] != 0xFF && corrupt[k] != 0x00 {
            corrupt[k] = corrupt[k] ^ 0x5A == 0xFF ? 0x11 : corrupt[k] ^ 0x5A
        }
        // The sixth restart marker renumbered: libjpeg warns ("found marker … instead of RST5"), drops
        // the marker and goes on with the same pixels; strict refuses the warning.
        var renumbered = file
        renumbered[restarts[5] + 1] = 0xD0 + (renumbered[restarts[5] + 1] - 0xD0 + 3) % 8

        let clean = try Self.decode(file, atLeast: target)
        let mcu = 16 * clean.bitmap.height / Self.height
        let result = try Self.decode(corrupt, atLeast: target)
        #expect(result.integrity == .damaged)
        #expect(result.info.integrity == .intact)
        #expect(Self.greyFrom(result.bitmap) == result.bitmap.height)
        // Rows of the intervals before and after the damaged one are libjpeg's clean rows (one scaled
        // MCU row of margin on each side: chroma upsampling reads across rows).
        #expect(Self.maxDelta(result.bitmap, clean.bitmap, rows: 0..<(3 * mcu - 1)) <= 2)
        #expect(Self.maxDelta(result.bitmap, clean.bitmap, rows: (5 * mcu + 1)..<result.bitmap.height) <= 2)
        #expect(Self.maxDelta(result.bitmap, clean.bitmap, rows: (3 * mcu)..<(4 * mcu)) > 2, "the damage should show")
        let resynced = try Self.decode(renumbered, atLeast: target)
        #expect(resynced.integrity == .damaged)
        #expect(Self.maxDelta(resynced.bitmap, clean.bitmap, rows: 0..<clean.bitmap.height) == 0)
        let strict = try Self.decode(corrupt, limits: .strict, atLeast: target)
        #expect(strict.integrity == .damaged)
        let lenient = try Self.decode(corrupt, atLeast: target)
        #expect(Self.maxDelta(strict.bitmap, lenient.bitmap, rows: 0..<strict.bitmap.height) == 0)
        let reason = S.failure { _ = try Self.decode(renumbered, limits: .strict, atLeast: target) }
        guard case .decoding(.codec(.jpeg, let message)) = reason else {
            Issue.record("strict should refuse the resync, got \(String(describing: reason))")
            return
        }
        #expect(message.contains("RST"))
    }

    // MARK: Truncation

    /// Checks a lenient decode of a cut baseline file against the full decode at the same size.
    static func expectTruncatedRows(_ cut: [UInt8], fraction: Double, target: PixelSize?, style: PixelStyle = .bgra32,
                                    full file: [UInt8] = baseline, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let full = try decode(file, style: style, atLeast: target)
        let result = try decode(cut, style: style, atLeast: target)
        let label = "\(fraction) \(String(describing: target)) \(style)"
        #expect(result.info.integrity == .truncated, "\(label)", sourceLocation: sourceLocation)
        #expect(result.integrity == .truncated, "\(label)", sourceLocation: sourceLocation)
        let h = result.bitmap.height
        let grey = greyFrom(result.bitmap)
        #expect(grey < h, "the rows that got no data should be grey: \(label)", sourceLocation: sourceLocation)
        #expect(grey > 0, "\(label)", sourceLocation: sourceLocation)
        // The rows arrive at about the rate of the bytes (the noise is even over the image).
        #expect(abs(Double(grey) / Double(h) - fraction) < 0.2, "\(grey) of \(h) rows for \(label)", sourceLocation: sourceLocation)
        // Above the MCU row where the data ended (16 rows, scaled), the pixels are the full decode's.
        let margin = max(2, 32 * h / height)
        #expect(maxDelta(result.bitmap, full.bitmap, rows: 0..<max(0, grey - margin)) <= 2, "\(label)", sourceLocation: sourceLocation)
        #expect(grey - margin > h / 20, "\(label)", sourceLocation: sourceLocation)
    }

    @Test("Baseline cut at 30, 60 and 90 %: the rows that arrived, grey below, truncated; strict throws truncated",
          arguments: [0.3, 0.6, 0.9], scales)
    func baselineCut(fraction: Double, target: PixelSize?) throws {
        let cut = Array(Self.baseline.prefix(Int(Double(Self.baseline.count) * fraction)))
        try Self.expectTruncatedRows(cut, fraction: fraction, target: target)
        if target == nil { try Self.expectTruncatedRows(cut, fraction: fraction, target: target, style: .gray8) }
        let reason = S.failure { _ = try Self.decode(cut, limits: .strict, atLeast: target) }
        #expect(reason == .decoding(.truncated(.jpeg)))
        let bitmap = try ImageDecoder().decode(Data(cut), minimumSize: target)
        #expect(bitmap.integrity == .truncated)
    }

    @Test("Baseline at 1/8: the DC-only decoder declines the cut file and the fallback gives the same rows as libjpeg")
    func baselineCutThroughDCPath() throws {
        let cut = Array(Self.baseline.prefix(Self.baseline.count / 2))
        var out = [UInt8](repeating: 0, count: 40 * 30 * 4)
        #expect(Int(tessera_jpeg_decode_dc(cut, cut.count, Int32(TESSERA_JPEG_BGRA), &out, 160, 40, 30)) == TESSERA_JPEG_UNSUPPORTED)
        #expect(Int(tessera_jpeg_decode_dc(Self.baseline, Self.baseline.count, Int32(TESSERA_JPEG_BGRA), &out, 160, 40, 30)) == TESSERA_JPEG_OK)
        try Self.expectTruncatedRows(cut, fraction: 0.5, target: PixelSize(width: 40, height: 30))
        // The shim on its own reports the rows it decoded from data, in rows of the 1/8 image.
        var report = tessera_jpeg_report()
        var text = [CChar](repeating: 0, count: Int(TESSERA_JPEG_MESSAGE_LENGTH))
        let status = tessera_jpeg_decode(cut, cut.count, 1, 8, Int32(TESSERA_JPEG_BGRA), &out, 160, 40, 30, 1, &report, &text)
        #expect(Int(status) == TESSERA_JPEG_WARNING)
        #expect(report.truncated == 1)
        #expect(report.decoded_rows > 8 && report.decoded_rows < 22, "\(report.decoded_rows) of 30")
        #expect(report.decoded_rows % 2 == 0, "whole iMCU rows of 2 rows at 1/8 for 4:2:0")
    }

    @Test("Fewer than 10 % of the rows: truncated under both policies, at every scale", arguments: scales)
    func tooLittle(target: PixelSize?) throws {
        let sos = try #require(Self.markers(Self.baseline).first { $0.marker == 0xDA }).offset
        // About 20 of 240 rows: the first 16-row iMCU row whole, the second cut (not counted): 6.7 %.
        let cut = Array(Self.baseline.prefix(sos + 14 + (Self.baseline.count - sos) / 12))
        for limits in [DecodingLimits.default, .strict] {
            let reason = S.failure { _ = try Self.decode(cut, limits: limits, atLeast: target) }
            #expect(reason == .decoding(.truncated(.jpeg)), "\(limits.policy) \(String(describing: target))")
        }
        // A lower threshold lets the same rows through.
        let result = try Self.decode(cut, limits: DecodingLimits(minimumDecodedFraction: 0.01), atLeast: target)
        #expect(result.integrity == .truncated)
        #expect(Self.greyFrom(result.bitmap) < result.bitmap.height / 10 + 2 * 16 * result.bitmap.height / Self.height)
    }

    @Test("Progressive cut in a later scan: every row, at lower quality, truncated; strict throws", arguments: scales)
    func progressiveCutLate(target: PixelSize?) throws {
        let cut = Array(Self.progressive.prefix(Self.progressive.count * 6 / 10))
        let full = try Self.decode(Self.progressive, atLeast: target)
        let result = try Self.decode(cut, atLeast: target)
        #expect(result.info.integrity == .truncated)
        #expect(result.integrity == .truncated)
        #expect(Self.greyFrom(result.bitmap) == result.bitmap.height, "every row has its DC coefficients")
        #expect(Self.meanDelta(result.bitmap, full.bitmap) < 12, "close to the full decode")
        let reason = S.failure { _ = try Self.decode(cut, limits: .strict, atLeast: target) }
        #expect(reason == .decoding(.truncated(.jpeg)))
    }

    @Test("Progressive cut inside its first (DC) scan: only the rows that scan reached, grey below", arguments: scales)
    func progressiveCutInFirstScan(target: PixelSize?) throws {
        let markers = Self.markers(Self.progressive)
        let first = try #require(markers.firstIndex { $0.marker == 0xDA })
        let start = markers[first].offset, end = markers[first + 1].offset
        let cut = Array(Self.progressive.prefix(start + (end - start) * 6 / 10))
        let full = try Self.decode(Self.progressive, atLeast: target)
        let result = try Self.decode(cut, atLeast: target)
        #expect(result.integrity == .truncated)
        let h = result.bitmap.height, grey = Self.greyFrom(result.bitmap)
        #expect(grey > h / 4 && grey < h * 9 / 10, "\(grey) of \(h)")
        // The rows above hold the DC coefficients only: blocky, but the picture.
        let top = max(1, grey - 32 * h / Self.height)
        var total = 0, count = 0
        for y in 0..<top { for x in 0..<result.bitmap.width { for (p, q) in zip(result.bitmap.pixel(x: x, y: y), full.bitmap.pixel(x: x, y: y)) { total += abs(Int(p) - Int(q)); count += 1 } } }
        #expect(Double(total) / Double(count) < 30)
    }

    @Test("Progressive cut inside a Huffman table between scans: the scans before it count")
    func progressiveCutInTable() throws {
        let markers = Self.markers(Self.progressive)
        let firstScan = try #require(markers.firstIndex { $0.marker == 0xDA })
        let table = try #require(markers[(firstScan + 1)...].first { $0.marker == 0xC4 })
        let cut = Array(Self.progressive.prefix(table.offset + 9))
        for target in Self.scales {
            let result = try Self.decode(cut, atLeast: target)
            #expect(result.integrity == .truncated)
            #expect(Self.greyFrom(result.bitmap) == result.bitmap.height)
            let reason = S.failure { _ = try Self.decode(cut, limits: .strict, atLeast: target) }
            #expect(reason == .decoding(.truncated(.jpeg)))
        }
    }

    @Test("A file that lacks only its EOI: every row, truncated")
    func missingEOI() throws {
        let cut = Array(Self.baseline.dropLast(2))
        let full = try Self.decode(Self.baseline)
        let result = try Self.decode(cut)
        #expect(result.info.integrity == .truncated)
        #expect(result.integrity == .truncated)
        #expect(Self.maxDelta(result.bitmap, full.bitmap, rows: 0..<Self.height) == 0)
        // Bytes after the EOI are not a truncation.
        let padded = Self.baseline + [0, 0, 0, 0x12]
        let paddedResult = try Self.decode(padded)
        #expect(paddedResult.info.integrity == .intact)
        #expect(Self.maxDelta(paddedResult.bitmap, full.bitmap, rows: 0..<Self.height) == 0)
    }

    @Test("Gray and CMYK fixtures cut short: grey rows in every output style")
    func grayAndCMYKFixtures() throws {
        // The 32 x 32 fixtures, enlarged the same way and re-encoded, gray through JPEGEncoder and CMYK
        // through TurboJPEG's CMYK encoder.
        let gray = try JPEGEncoder(quality: 90).encode(try Bitmap(width: Self.width, height: Self.height, style: .gray8) { (view: MutableBitmapView) throws(TesseraError) in
            try PixelConversion.convert(Self.source, to: view)
        })
        let cutGray = Array(gray.prefix(gray.count / 2))
        try Self.expectTruncatedRows(cutGray, fraction: 0.5, target: nil, style: .gray8, full: gray)
        try Self.expectTruncatedRows(cutGray, fraction: 0.5, target: nil, style: .bgra32, full: gray)

        let cmyk = try S.fixture("cmyk.jpg")
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var pixels = [UInt8](repeating: 0, count: 32 * 32 * 4)
        #expect(tjDecompress2(handle, cmyk, UInt(cmyk.count), &pixels, 32, 128, 32, TJPF_CMYK.rawValue, 0) == 0)
        var large = [UInt8](repeating: 0, count: Self.width * Self.height * 4)
        var generator = SeededGenerator(seed: 3)
        for y in 0..<Self.height {
            for x in 0..<Self.width {
                let n = Int(generator.next() % 40) - 20
                for k in 0..<4 { large[(y * Self.width + x) * 4 + k] = UInt8(max(0, min(255, Int(pixels[((y * 32 / Self.height) * 32 + x * 32 / Self.width) * 4 + k]) + n))) }
            }
        }
        let compressor = try #require(tjInitCompress())
        defer { tjDestroy(compressor) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        #expect(tjCompress2(compressor, large, Int32(Self.width), Int32(Self.width * 4), Int32(Self.height), TJPF_CMYK.rawValue,
                            &output, &size, Int32(TJSAMP_444.rawValue), 90, 0) == 0)
        let cmykFile = Array(UnsafeBufferPointer(start: output, count: Int(size)))
        tjFree(output)
        let cutCMYK = Array(cmykFile.prefix(cmykFile.count * 6 / 10))
        for style in [PixelStyle.bgra32, .bgr32, .gray8] {
            try Self.expectTruncatedRows(cutCMYK, fraction: 0.6, target: nil, style: style, full: cmykFile)
        }
        try Self.expectTruncatedRows(cutCMYK, fraction: 0.6, target: PixelSize(width: 40, height: 30), full: cmykFile)
    }

    @Test("Unnamed subsampling (4:1:0) through the libjpeg shim: cut files give grey rows at every scale",
          .enabled(if: CodecLibjpegTests.cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: [false, true])
    func unnamedSubsamplingCut(progressive: Bool) throws {
        let file = try CodecLibjpegTests.encode(["-sample", "4x2,1x1,1x1"] + (progressive ? ["-progressive"] : []), image: Self.source)
        #expect(!CodecLibjpegTests.turboJPEGReadsHeader(file))
        if progressive {
            let cut = Array(file.prefix(file.count * 7 / 10))
            for target in Self.scales {
                let result = try Self.decode(cut, atLeast: target)
                #expect(result.integrity == .truncated)
                #expect(Self.greyFrom(result.bitmap) == result.bitmap.height)
            }
            return
        }
        let cut = Array(file.prefix(file.count * 6 / 10))
        for target in Self.scales { try Self.expectTruncatedRows(cut, fraction: 0.6, target: target, full: file) }
    }
}
