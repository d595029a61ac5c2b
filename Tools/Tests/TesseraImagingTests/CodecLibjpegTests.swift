import ToolsTurboJPEG
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// JPEGs that TurboJPEG's API cannot read (subsamplings it cannot name) decode through libjpeg's
/// own API, and progressive files decoded at 1/8 scale without their unneeded AC scans keep the
/// exact pixels TurboJPEG gives. The fixtures are made by `cjpeg` (Debian's libjpeg-turbo-progs,
/// installed by scripts/setup) from a PPM the test writes.
@Suite("JPEG through libjpeg's API")
struct CodecLibjpegTests {
    typealias S = CodecTestSupport

    static let cjpeg: URL? = ["/usr/bin/cjpeg", "/usr/local/bin/cjpeg"].map { URL(fileURLWithPath: $0) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// 256 x 192: four flat quadrants (red, green, blue, white) inside a smooth frame.
    static let width = 256, height = 192
    static func source(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let quadrant = (y >= height / 2 ? 2 : 0) + (x >= width / 2 ? 1 : 0)
        return [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)][quadrant]
    }

    /// Encodes the source with `cjpeg arguments`.
    static func encode(_ arguments: [String]) throws -> [UInt8] {
        var ppm = Array("P6\n\(width) \(height)\n255\n".utf8)
        for y in 0..<height { for x in 0..<width { let c = source(x, y); ppm += [c.r, c.g, c.b] } }
        return try encode(ppm: ppm, arguments)
    }

    /// Encodes an opaque ``PixelStyle/bgra32`` `image` with `cjpeg arguments`.
    static func encode(_ arguments: [String], image: Bitmap) throws -> [UInt8] {
        var ppm = Array("P6\n\(image.width) \(image.height)\n255\n".utf8)
        for y in 0..<image.height { for x in 0..<image.width { let p = image.pixel(x: x, y: y); ppm += [p[2], p[1], p[0]] } }
        return try encode(ppm: ppm, arguments)
    }

    /// Runs `cjpeg arguments` on the PPM bytes `ppm`.
    static func encode(ppm: [UInt8], _ arguments: [String]) throws -> [UInt8] {
        let cjpeg = try #require(Self.cjpeg)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-cjpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.ppm"), output = directory.appendingPathComponent("out.jpg")
        try Data(ppm).write(to: input)
        let run = try ProgramRun.run(cjpeg, arguments + ["-quality", "95", "-outfile", output.path, input.path])
        #expect(run.status == 0, "\(run)")
        return Array(try Data(contentsOf: output))
    }

    /// Whether TurboJPEG's own header call accepts `file`.
    static func turboJPEGReadsHeader(_ file: [UInt8]) -> Bool {
        guard let handle = tjInitDecompress() else { return false }
        defer { tjDestroy(handle) }
        var w: Int32 = 0, h: Int32 = 0, sub: Int32 = 0, cs: Int32 = 0
        return file.withUnsafeBufferPointer { tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &w, &h, &sub, &cs) } == 0
    }

    @Test("4:1:0, 4:1:1 and 4:4:0, baseline and progressive, decode at full and reduced sizes",
          .enabled(if: cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: ["4x2,1x1,1x1", "4x1,1x1,1x1", "1x2,1x1,1x1"], [false, true])
    func unnamedSubsampling(sampling: String, progressive: Bool) throws {
        let file = try Self.encode(["-sample", sampling] + (progressive ? ["-progressive"] : []))
        if sampling == "4x2,1x1,1x1" {
            // TurboJPEG 2.1 names 4:1:1 and 4:4:0 but not 4:1:0: this one must go through libjpeg's API.
            let readByTurboJPEG = Self.turboJPEGReadsHeader(file)
            #expect(!readByTurboJPEG, "TurboJPEG's API should not know 4:1:0; the fallback would be untested")
        }
        let decoder = JPEGDecoder()
        let info = try file.withUnsafeBytes { try decoder.probe($0) }
        #expect(info.width == Self.width && info.height == Self.height)
        for (target, expected) in [(PixelSize?.none, PixelSize(width: 256, height: 192)),
                                   (PixelSize(width: 128, height: 96), PixelSize(width: 128, height: 96)),
                                   (PixelSize(width: 32, height: 24), PixelSize(width: 32, height: 24))] {
            for style in [PixelStyle.bgra32, .gray8] {
                let (_, bitmap) = try S.decode(file, with: decoder, style: style, atLeast: target)
                #expect(bitmap.layout.size == expected)
                let w = expected.width, h = expected.height
                for (x, y) in [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)] {
                    let c = Self.source(x * Self.width / w, y * Self.height / h)
                    let pixel = bitmap.pixel(x: x, y: y)
                    if style == .bgra32 {
                        #expect(S.matches(pixel, [c.b, c.g, c.r, 255], tolerance: 12), "\(sampling) \(expected) (\(x), \(y)): \(pixel)")
                    } else {
                        let luma = (299 * Int(c.r) + 587 * Int(c.g) + 114 * Int(c.b)) / 1000
                        #expect(abs(Int(pixel[0]) - luma) <= 6, "\(sampling) gray (\(x), \(y)): \(pixel) vs \(luma)")
                    }
                }
            }
        }
        // The façade gets there too: a 50 x 50 thumbnail of the four quadrants.
        let thumb = try ImageDecoder().thumbnail(Data(file), size: PixelSize(width: 50, height: 50), mode: .stretch)
        #expect(S.matches(thumb.pixel(x: 12, y: 12), [0, 0, 255, 255], tolerance: 12))
        #expect(S.matches(thumb.pixel(x: 37, y: 37), [255, 255, 255, 255], tolerance: 12))
    }

    @Test("A truncated 4:1:0 file: strict reports it as truncated, lenient decodes the rows that arrived",
          .enabled(if: cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: [false, true])
    func truncatedUnnamedSubsampling(progressive: Bool) throws {
        let file = try Self.encode(["-sample", "4x2,1x1,1x1"] + (progressive ? ["-progressive"] : []))
        let cut = Array(file.prefix(file.count * 2 / 3))
        let reason = S.failure { _ = try S.decode(cut, with: JPEGDecoder(limits: .strict)) }
        #expect(reason == .decoding(.truncated(.jpeg)))
        let bitmap = try ImageDecoder().decode(Data(cut))
        #expect(bitmap.integrity == .truncated)
        // The top-left quadrant (red) arrived in either case.
        #expect(S.matches(bitmap.pixel(x: Self.width / 4, y: Self.height / 4), [0, 0, 255, 255], tolerance: 12))
    }

    @Test("Progressive files at 1/8 scale: same pixels as TurboJPEG's full decode at 1/8",
          .enabled(if: cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: ["2x2,1x1,1x1", "2x1,1x1,1x1", "1x1,1x1,1x1"])
    func progressiveEighth(sampling: String) throws {
        let file = try Self.encode(["-sample", sampling, "-progressive"])
        #expect(file.withUnsafeBytes { JPEGDecoder.isProgressive($0) })
        let w = Self.width / 8, h = Self.height / 8
        let (_, ours) = try S.decode(file, with: JPEGDecoder(), atLeast: PixelSize(width: w, height: h))
        #expect(ours.layout.size == PixelSize(width: w, height: h))
        // TurboJPEG decodes every scan.
        var reference = [UInt8](repeating: 0, count: w * h * 4)
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        let status = file.withUnsafeBufferPointer { jpeg in
            tjDecompress2(handle, jpeg.baseAddress, UInt(jpeg.count), &reference, Int32(w), Int32(w * 4), Int32(h), TJPF_BGRA.rawValue, 0)
        }
        #expect(status == 0)
        var differing = 0
        for y in 0..<h { for x in 0..<w where ours.pixel(x: x, y: y) != Array(reference[(y * w + x) * 4..<(y * w + x) * 4 + 4]) { differing += 1 } }
        #expect(differing == 0)
    }

    @Test("A progressive file cut inside an AC scan at 1/8 scale: truncated under strict, every row under lenient",
          .enabled(if: cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"))
    func truncatedProgressiveEighth() throws {
        let file = try Self.encode(["-progressive"])
        let cut = Array(file.prefix(file.count - 40))
        let target = PixelSize(width: 32, height: 24)
        let reason = S.failure { _ = try S.decode(cut, with: JPEGDecoder(limits: .strict), atLeast: target) }
        #expect(reason == .decoding(.truncated(.jpeg)))
        // Every DC scan came before the cut: the 1/8 image is whole, and equals the full file's.
        let (_, full) = try S.decode(file, with: JPEGDecoder(), atLeast: target)
        var integrity = DecodeIntegrity.intact
        let decoder = JPEGDecoder()
        let bitmap = try cut.withUnsafeBytes { raw in
            let info = try decoder.probe(raw)
            #expect(info.integrity == .truncated)
            return try Bitmap(width: 32, height: 24, style: .bgra32) { (view: MutableBitmapView) throws(TesseraError) in
                integrity = try decoder.decode(raw, info: info, into: view)
            }
        }
        #expect(integrity == .truncated)
        #expect(S.close(bitmap, full, maxDelta: 0, meanDelta: 0))
    }
}
