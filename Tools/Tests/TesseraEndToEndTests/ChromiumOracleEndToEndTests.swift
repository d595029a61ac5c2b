import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraTestSupport

/// Tessera decodes what Chromium shows: damaged, cut and unusual files made in the test from the real
/// photographs, decoded by the release `tessera` binary (`thumbnail` at the image's own size, PNG out,
/// so the decode is direct and lossless) and drawn by headless Chromium into a canvas at natural size
/// (``ChromiumOracle``), compared pixel by pixel (premultiplied RGBA, alpha included).
///
/// The fixtures (803×601 crops of the smallest photograph, so that edge blocks are partial): baseline
/// and progressive JPEG; junk bytes before SOS and before DHT, a JFIF APP0 claiming version 2, junk in
/// an entropy-coded segment between two restart markers (jpegtran -restart 1), a junk
/// APP9, an Exif APP1 of junk, a JFIF APP0 cut short; baseline JPEG cut at 90, 60, 30 and 7 % of its
/// bytes; progressive JPEG cut halfway through a scan; RGBA, RGB and Adam7 PNG, each cut halfway
/// through its IDAT data; lossy WebP cut at 60 %; lossy and lossless WebP with an EXIF orientation 6
/// chunk (both show the stored orientation); an RGB PNG with gAMA 1/1.8; a GIF without colour tables.
///
/// Tolerances, from what was measured (Debian's chromium 156; each run prints its `chromium-oracle:` lines):
/// - JPEG, PNG, WebP and GIF, clean, damaged or cut: **exact** (max 0). Both decode JPEG with
///   libjpeg-turbo (ISLOW IDCT, fancy upsampling), PNG with libpng-compatible unfiltering (alpha
///   compared premultiplied, as both keep it), WebP with libwebp; every one of these measured 0.
/// - A progressive JPEG cut inside a scan: **max 32, PSNR ≥ 40 dB** (measured max 27, 43.8 dB). Every
///   row is drawn from the scans that arrived and the differences cover every row; the likely cause
///   (not verified) is how each libjpeg-turbo (Chromium's own copy, Debian's 2.1.5 for Tessera)
///   estimates coefficients that have not arrived (block smoothing) and treats the cut scan; complete
///   progressive files decode identically. Both are as far from the whole file (Tessera 41.7 dB,
///   Chromium 41.3 dB); Tessera may not be more than 1 dB further.
/// - PNG gAMA: **max 10, PSNR ≥ 36 dB** (measured max 9, 36.8 dB). Likely (not verified) libpng's
///   conversion taking sRGB as a 2.2 power against skcms's exact sRGB curve in Chromium. Tessera must also be at least
///   6 dB nearer to Chromium than the pixels without gAMA are (max 19, 28.9 dB).
/// - Where a cut file ends: a PNG's last row is Chromium's exactly. A baseline JPEG may show up to 2
///   rows more than Chromium: neither draws the iMCU row the data ended in, and Chromium also holds back
///   the last 2 rows that arrived (their h2v2 upsampling needs the next iMCU row's chroma). Every row
///   Tessera decodes from a cut file but those last 2 must be the whole file's row (as Chromium draws
///   the whole file). The rows after it are the fill: grey 0x80 opaque, or transparent for formats with alpha.
///
/// Known, chosen differences: a WebP cut short fails to load in Chromium, while Tessera draws the rows
/// that arrived (compared with Chromium's drawing of the whole file); a JPEG with fewer than 10 % of
/// its rows (cut at 7 %: Chromium draws 30 of 601) is refused by Tessera under either policy.
@Suite("Chromium as the oracle: damaged and cut files, release binary", .serialized, .chromiumOracle,
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ChromiumOracleEndToEndTests {
    /// The largest channel difference and the lowest PSNR accepted over the compared rows.
    struct Tolerance: Sendable {
        var maximum: Int
        var psnr: Double
        static let exact = Tolerance(maximum: 0, psnr: .infinity)
    }

    /// What Tessera must make of a fixture (under the default, lenient policy).
    enum Outcome: Sendable, Equatable {
        /// Decoded whole, ``DecodeIntegrity/intact``.
        case intact
        /// Decoded whole after damage the codec recovered from, ``DecodeIntegrity/damaged``.
        case damaged
        /// Cut short: the rows that arrived, then `fill` down to the bottom, ``DecodeIntegrity/truncated``;
        /// Tessera's last decoded row at most `slack` rows past Chromium's, never before it, and every
        /// decoded row but the last `context` (whose upsampling needed rows that never came) the whole file's row.
        case truncated(Fill, slack: Int, context: Int)
        /// Cut short in a later pass (progressive JPEG, Adam7 PNG): every row drawn at a lower quality,
        /// ``DecodeIntegrity/truncated``, as Chromium draws it.
        case truncatedEveryRow
        /// Cut short where Chromium shows nothing (the image fails to load) and Tessera, by policy,
        /// draws the rows that arrived, then `fill`: compared with Chromium's drawing of the whole file.
        case chromiumShowsNothing(Fill)
        /// Chromium draws the few rows that arrived; Tessera refuses fewer than
        /// ``DecodingLimits/minimumDecodedFraction`` of the rows by policy (a known, chosen difference).
        case refusedByTessera
    }

    enum Fill: Sendable, Equatable {
        /// ``DecodeIntegrity/fillGray``, opaque (formats without alpha).
        case gray
        /// Transparent (formats with alpha).
        case transparent
    }

    typealias Bytes = @Sendable (ScratchDirectory) async throws -> [UInt8]

    /// One fixture: how to make its bytes and what must come of them.
    struct Fixture: Sendable, CustomTestStringConvertible {
        var name: String
        var fileExtension: String
        var mimeType: String
        var outcome: Outcome
        var tolerance: Tolerance
        /// Whether `--decoding strict` refuses the file.
        var strictRefuses: Bool
        var make: Bytes
        /// The file the fixture was made from (whole, unmodified), which Chromium draws as a second reference.
        var source: Bytes?
        /// Whether ``source`` is the fixture without a chunk that changes its pixels (gAMA): Tessera must
        /// then be nearer to Chromium than the unchanged pixels are.
        var sourceLacksAChunk = false

        var testDescription: String { name }
    }

    static let jpegTolerance = Tolerance.exact
    static let webpTolerance = Tolerance.exact
    static let pngTolerance = Tolerance.exact
    static let progressiveCutTolerance = Tolerance(maximum: 32, psnr: 40)
    static let gammaTolerance = Tolerance(maximum: 10, psnr: 36)
    /// Rows at the edge of a cut baseline JPEG that Chromium holds back: h2v2 fancy upsampling needs the
    /// next iMCU row's chroma for the last two rows of the rows that arrived.
    static let jpegContext = 2
    /// How many more rows than Chromium a cut baseline JPEG may show: those 2.
    static let jpegSlack = 2

    /// The first `fraction` of `source`'s bytes.
    static func cut(_ source: @escaping Bytes, at fraction: Double) -> Bytes {
        { scratch in
            let bytes = try await source(scratch)
            return Array(bytes.prefix(Int(Double(bytes.count) * fraction)))
        }
    }

    /// `source` cut halfway through its IDAT data.
    static func cutMidIDAT(_ source: @escaping Bytes) -> Bytes {
        { scratch in
            let bytes = try await source(scratch)
            return Array(bytes.prefix(try OracleFixtures.midIDATOffset(bytes)))
        }
    }

    static let baseline: Bytes = { try OracleFixtures.read(try await OracleFixtures.baselineJPEG($0)) }
    static let progressive: Bytes = { try OracleFixtures.read(try await OracleFixtures.progressiveJPEG($0)) }
    static let rgbaPNG: Bytes = { try OracleFixtures.read(try await OracleFixtures.png($0, alpha: true)) }
    static let rgbPNG: Bytes = { try OracleFixtures.read(try await OracleFixtures.png($0, alpha: false)) }
    static let adam7PNG: Bytes = { try OracleFixtures.read(try await OracleFixtures.png($0, alpha: false, interlaced: true)) }
    static let lossyWebP: Bytes = { try OracleFixtures.read(try await OracleFixtures.webp($0, lossless: false)) }

    static let fixtures: [Fixture] = [
        // Clean files: what the damaged ones are measured against.
        Fixture(name: "baseline JPEG", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .intact, tolerance: jpegTolerance,
                strictRefuses: false, make: baseline),
        Fixture(name: "progressive JPEG", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .intact, tolerance: jpegTolerance,
                strictRefuses: false, make: progressive),
        Fixture(name: "RGBA PNG", fileExtension: "png", mimeType: "image/png", outcome: .intact, tolerance: pngTolerance,
                strictRefuses: false, make: rgbaPNG),
        Fixture(name: "interlaced RGB PNG", fileExtension: "png", mimeType: "image/png", outcome: .intact, tolerance: pngTolerance,
                strictRefuses: false, make: adam7PNG),
        Fixture(name: "lossy WebP", fileExtension: "webp", mimeType: "image/webp", outcome: .intact, tolerance: webpTolerance,
                strictRefuses: false, make: lossyWebP),

        // libjpeg warnings: damaged, decoded by libjpeg-turbo as Chromium's copy decodes them. Strict
        // lets through the bytes before a marker only (libjpeg skips them without touching a pixel).
        Fixture(name: "JPEG with junk bytes before SOS", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .damaged,
                tolerance: jpegTolerance, strictRefuses: false) { scratch in
            try OracleFixtures.inserting(OracleFixtures.junk(5), beforeFirst: 0xDA, in: try await baseline(scratch))
        },
        Fixture(name: "JPEG with junk bytes before DHT", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .damaged,
                tolerance: jpegTolerance, strictRefuses: false) { scratch in
            try OracleFixtures.inserting(OracleFixtures.junk(3, seed: 99), beforeFirst: 0xC4, in: try await baseline(scratch))
        },
        Fixture(name: "JPEG whose JFIF APP0 says version 2", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .damaged,
                tolerance: jpegTolerance, strictRefuses: true) { scratch in
            // libjpeg warns "unknown JFIF revision number 2.01" (JWRN_JFIF_MAJOR) and decodes on.
            var bytes = try await baseline(scratch)
            try #require(bytes[2] == 0xFF && bytes[3] == 0xE0 && Array(bytes[6..<11]) == Array("JFIF\0".utf8), "a JFIF APP0 first")
            bytes[11] = 2
            return bytes
        },
        Fixture(name: "JPEG with a corrupt restart segment", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .damaged,
                tolerance: jpegTolerance, strictRefuses: true, make: { scratch in
            // libjpeg warns (corrupt data, a marker where data should be) and resynchronises at the next RST.
            let bytes = try OracleFixtures.read(try await OracleFixtures.restartJPEG(scratch))
            let corrupt = try OracleFixtures.corruptingMiddleRestartSegment(bytes)
            print("chromium-oracle: 24 junk bytes at byte \(corrupt.offset) of \(bytes.count), between two restart markers")
            return corrupt.bytes
        }, source: { try OracleFixtures.read(try await OracleFixtures.restartJPEG($0)) }),
        // Junk that libjpeg does not even warn about: intact for both.
        Fixture(name: "JPEG with a junk APP9 segment", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .intact,
                tolerance: jpegTolerance, strictRefuses: false) { scratch in
            try OracleFixtures.inserting(OracleFixtures.segment(0xE9, OracleFixtures.junk(200)), beforeFirst: 0xDB, in: try await baseline(scratch))
        },
        Fixture(name: "JPEG with an Exif APP1 of junk", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .intact,
                tolerance: jpegTolerance, strictRefuses: false) { scratch in
            try OracleFixtures.inserting(OracleFixtures.segment(0xE1, Array("Exif\0\0".utf8) + OracleFixtures.junk(120, seed: 5)),
                                         beforeFirst: 0xDB, in: try await baseline(scratch))
        },
        Fixture(name: "JPEG with a JFIF APP0 cut short", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .intact,
                tolerance: jpegTolerance, strictRefuses: false) { scratch in
            // "JFIF\0" without version, density or thumbnail: libjpeg only traces a short APP0.
            try OracleFixtures.inserting(OracleFixtures.segment(0xE0, Array("JFIF\0".utf8)), beforeFirst: 0xDB, in: try await baseline(scratch))
        },

        // Cut short.
        Fixture(name: "baseline JPEG cut at 90 %", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .truncated(.gray, slack: jpegSlack, context: jpegContext),
                tolerance: jpegTolerance, strictRefuses: true, make: cut(baseline, at: 0.9), source: baseline),
        Fixture(name: "baseline JPEG cut at 60 %", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .truncated(.gray, slack: jpegSlack, context: jpegContext),
                tolerance: jpegTolerance, strictRefuses: true, make: cut(baseline, at: 0.6), source: baseline),
        Fixture(name: "baseline JPEG cut at 30 %", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .truncated(.gray, slack: jpegSlack, context: jpegContext),
                tolerance: jpegTolerance, strictRefuses: true, make: cut(baseline, at: 0.3), source: baseline),
        Fixture(name: "baseline JPEG cut at 7 %", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .refusedByTessera,
                tolerance: jpegTolerance, strictRefuses: true, make: cut(baseline, at: 0.07), source: baseline),
        Fixture(name: "progressive JPEG cut mid-scan", fileExtension: "jpg", mimeType: "image/jpeg", outcome: .truncatedEveryRow,
                tolerance: progressiveCutTolerance, strictRefuses: true, make: { scratch in
            let bytes = try await progressive(scratch)
            let cut = try OracleFixtures.midScanOffset(bytes, fraction: 0.5)
            print("chromium-oracle: progressive JPEG cut at byte \(cut.offset) of \(bytes.count), inside scan \(cut.scan) of \(cut.scans)")
            return Array(bytes.prefix(cut.offset))
        }, source: progressive),
        Fixture(name: "RGBA PNG cut mid-IDAT", fileExtension: "png", mimeType: "image/png", outcome: .truncated(.transparent, slack: 0, context: 0),
                tolerance: pngTolerance, strictRefuses: true, make: cutMidIDAT(rgbaPNG), source: rgbaPNG),
        Fixture(name: "RGB PNG cut mid-IDAT", fileExtension: "png", mimeType: "image/png", outcome: .truncated(.gray, slack: 0, context: 0),
                tolerance: pngTolerance, strictRefuses: true, make: cutMidIDAT(rgbPNG), source: rgbPNG),
        Fixture(name: "interlaced RGB PNG cut mid-IDAT", fileExtension: "png", mimeType: "image/png", outcome: .truncatedEveryRow,
                tolerance: pngTolerance, strictRefuses: true, make: cutMidIDAT(adam7PNG), source: adam7PNG),
        Fixture(name: "lossy WebP cut at 60 %", fileExtension: "webp", mimeType: "image/webp", outcome: .chromiumShowsNothing(.gray),
                tolerance: webpTolerance, strictRefuses: true, make: cut(lossyWebP, at: 0.6), source: lossyWebP),

        // Metadata both ignore or both apply.
        Fixture(name: "lossy WebP with EXIF orientation 6", fileExtension: "webp", mimeType: "image/webp", outcome: .intact,
                tolerance: webpTolerance, strictRefuses: false) { scratch in
            try OracleFixtures.read(try await OracleFixtures.webpWithOrientation(try await OracleFixtures.webp(scratch, lossless: false),
                                                                                 orientation: 6, scratch: scratch))
        },
        Fixture(name: "lossless WebP with EXIF orientation 6", fileExtension: "webp", mimeType: "image/webp", outcome: .intact,
                tolerance: .exact, strictRefuses: false) { scratch in
            try OracleFixtures.read(try await OracleFixtures.webpWithOrientation(try await OracleFixtures.webp(scratch, lossless: true),
                                                                                 orientation: 6, scratch: scratch))
        },
        Fixture(name: "RGB PNG with gAMA 1/1.8", fileExtension: "png", mimeType: "image/png", outcome: .intact,
                tolerance: gammaTolerance, strictRefuses: false, make: { scratch in
            OracleFixtures.pngInsertingChunk("gAMA", OracleFixtures.bigEndian(55_556), removing: ["gAMA", "sRGB", "iCCP", "cHRM"],
                                             in: try await rgbPNG(scratch))
        }, source: rgbPNG, sourceLacksAChunk: true),
        Fixture(name: "GIF without colour tables", fileExtension: "gif", mimeType: "image/gif", outcome: .damaged,
                tolerance: .exact, strictRefuses: true) { _ in OracleFixtures.gifWithoutColourTable() },
    ]

    /// `probe --json`'s row for one file.
    struct ProbeRow: Decodable {
        var width: Int?
        var height: Int?
        var orientation: Int?
        var displayWidth: Int?
        var displayHeight: Int?
        var integrity: String?
        var error: String?
    }

    @Test(arguments: fixtures)
    func tesseraDecodesWhatChromiumShows(_ fixture: Fixture) async throws {
        let scratch = try ScratchDirectory("oracle")
        let bytes = try await fixture.make(scratch)
        let file = scratch.path("fixture.\(fixture.fileExtension)")
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let oracle = try ChromiumOracle.require()
        let rendering = try await oracle.render(Data(bytes), mimeType: fixture.mimeType)
        let chromium = OraclePixels(width: rendering.width, height: rendering.height, unpremultipliedRGBA: rendering.rgba)
        let chromiumRows = rendering.loaded ? chromium.height - chromium.transparentTrailingRows : 0
        var whole: OraclePixels?
        if let source = fixture.source {
            let drawn = try await oracle.render(Data(try await source(scratch)), mimeType: fixture.mimeType)
            try #require(drawn.loaded, "Chromium shows the whole file")
            whole = OraclePixels(width: drawn.width, height: drawn.height, unpremultipliedRGBA: drawn.rgba)
        }

        let probeRun = try await ReleaseCLI.run(["probe", "--json", file])
        let probe = try? probeRun.json([ProbeRow].self).first
        let width = probe?.displayWidth ?? whole?.width ?? rendering.width, height = probe?.displayHeight ?? whole?.height ?? rendering.height
        let out = scratch.path("out")
        let thumbnail = try await ReleaseCLI.run(["thumbnail", file, "--size", "\(max(width, 1))x\(max(height, 1))", "--mode", "fit",
                                                  "--format", "png", "--out", out])
        // `probe --decode` decodes the pixels too and reports the decode's integrity (or its refusal).
        let decodeRun = try await ReleaseCLI.run(["probe", "--json", "--decode", file])
        let decoded = try #require(try decodeRun.json([ProbeRow].self).first, "\(decodeRun)")
        var report = "chromium-oracle: \(fixture.name) (\(bytes.count) bytes): chromium "
            + (rendering.loaded ? "drew \(rendering.width)x\(rendering.height), \(chromiumRows) rows" : "showed nothing") + "; tessera "
            + (thumbnail.status == 0 ? "decoded" : "refused: \(thumbnail.errors.trimmingCharacters(in: .whitespacesAndNewlines))")
            + ", integrity \(decoded.integrity ?? "none: \(decoded.error ?? "")")"
        defer { print(report) }

        if fixture.outcome == .refusedByTessera {
            // Chromium draws the few rows that arrived (fewer than the policy's 10 %); Tessera refuses.
            #expect(rendering.loaded)
            #expect(chromiumRows > 0 && Double(chromiumRows) < 0.1 * Double(rendering.height), "\(chromiumRows) rows of \(rendering.height)")
            #expect(thumbnail.status != 0, "\(thumbnail)")
            #expect(thumbnail.errors.localizedCaseInsensitiveContains("truncated"), "\(thumbnail)")
            #expect(decoded.integrity == nil && decoded.error?.localizedCaseInsensitiveContains("truncated") == true, "\(decodeRun)")
            return
        }

        #expect(probe?.error == nil && probe?.width != nil, "\(probeRun)")
        try #require(thumbnail.status == 0, "\(thumbnail)")
        let tessera = OraclePixels(try PixelComparison.decodeFile(out + "/fixture.png"))
        let reference: OraclePixels
        if case .chromiumShowsNothing = fixture.outcome {
            #expect(!rendering.loaded, "Chromium shows this file now: compare with what it draws instead")
            reference = try #require(whole)
        } else {
            try #require(rendering.loaded, "Chromium shows the image; chromium said: \(oracle.log)")
            reference = chromium
        }
        #expect(width == reference.width && height == reference.height,
                "Tessera's display size \(width)x\(height), Chromium's \(reference.width)x\(reference.height)")
        try #require(tessera.width == reference.width && tessera.height == reference.height)

        var compared = 0..<reference.height
        switch fixture.outcome {
        case .truncated(let fill, _, _), .chromiumShowsNothing(let fill):
            let filled = fill == .gray ? tessera.grayTrailingRows : tessera.transparentTrailingRows
            let tesseraRows = tessera.height - filled
            report += ", \(tesseraRows) rows then \(filled) \(fill) rows"
            #expect(filled > 0 && tesseraRows > 0, "Tessera draws the rows that arrived and fills the others with \(fill)")
            compared = 0..<tesseraRows
            if case .truncated(_, let slack, _) = fixture.outcome {
                #expect(tesseraRows >= chromiumRows && tesseraRows - chromiumRows <= slack,
                        "Tessera decoded \(tesseraRows) rows, Chromium \(chromiumRows) (at most \(slack) more)")
                compared = 0..<min(tesseraRows, chromiumRows)
            }
        case .truncatedEveryRow:
            #expect(tessera.grayTrailingRows == 0 && tessera.transparentTrailingRows == 0, "no filled rows")
            #expect(chromiumRows == reference.height, "Chromium drew \(chromiumRows) of \(reference.height) rows")
        case .intact, .damaged:
            #expect(chromiumRows == reference.height, "Chromium drew \(chromiumRows) of \(reference.height) rows")
        case .refusedByTessera:
            break
        }
        let difference = OraclePixels.difference(tessera, reference, rows: compared)
        report += "; rows \(compared.lowerBound)..<\(compared.upperBound): \(difference)"
        #expect(difference.maximum <= fixture.tolerance.maximum && difference.psnr >= fixture.tolerance.psnr,
                "\(difference) against max \(fixture.tolerance.maximum), PSNR \(fixture.tolerance.psnr) dB")
        if let whole, rendering.loaded {
            // The second reference, Chromium's drawing of the whole file: every row Tessera decoded from
            // a cut file is the whole file's row (but for the rows at the edge whose upsampling needs
            // rows that never came), and a partial pass is no further from the whole than Chromium's.
            let filled = max(tessera.grayTrailingRows, tessera.transparentTrailingRows)
            var checked = 0..<(tessera.height - filled)
            if case .truncated(_, _, let context) = fixture.outcome { checked = 0..<max(0, checked.upperBound - context) }
            let againstWhole = OraclePixels.difference(tessera, whole, rows: checked)
            let chromiumAgainstWhole = OraclePixels.difference(chromium, whole, rows: 0..<chromiumRows)
            report += "; against the whole file: tessera rows \(checked.lowerBound)..<\(checked.upperBound) \(againstWhole), "
                + "chromium rows 0..<\(chromiumRows) \(chromiumAgainstWhole)"
            switch fixture.outcome {
            case .truncated:
                #expect(againstWhole.maximum <= fixture.tolerance.maximum && againstWhole.psnr >= fixture.tolerance.psnr,
                        "Tessera's decoded rows against the whole file: \(againstWhole)")
            case .truncatedEveryRow:
                #expect(againstWhole.psnr >= chromiumAgainstWhole.psnr - 1,
                        "Tessera \(againstWhole), Chromium \(chromiumAgainstWhole) from the whole file")
            default:
                if fixture.sourceLacksAChunk {
                    // The chunk moves Chromium's pixels; Tessera follows it most of the way.
                    #expect(difference.psnr >= chromiumAgainstWhole.psnr + 6,
                            "Tessera \(difference) from Chromium; the file without the chunk \(chromiumAgainstWhole)")
                }
            }
        }

        // The decode's integrity, as `probe --decode` reports it.
        let integrity = try #require(decoded.integrity.flatMap(DecodeIntegrity.init(rawValue:)), "\(decodeRun)")
        switch fixture.outcome {
        case .intact: #expect(integrity == .intact)
        case .damaged: #expect(integrity == .damaged)
        case .truncated, .truncatedEveryRow, .chromiumShowsNothing: #expect(integrity == .truncated)
        case .refusedByTessera: break
        }
        if let reported = probe?.integrity {
            // A header probe can tell a cut file at most, never damage inside the data.
            #expect(reported == "intact" || reported == integrity.rawValue, "probe says \(reported)")
        }

        // Strict refuses what lenient mends, except the bytes before a marker that libjpeg skips silently.
        let strict = try await ReleaseCLI.run(["thumbnail", file, "--size", "\(width)x\(height)", "--mode", "fit", "--format", "png",
                                               "--out", scratch.path("strict"), "--decoding", "strict"])
        #expect((strict.status != 0) == fixture.strictRefuses, "\(strict)")
    }
}
