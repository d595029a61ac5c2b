import CTesseraCodecs
import ToolsTurboJPEG
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// The DC-only decoder for baseline and progressive JPEGs at 1/8 scale against TurboJPEG's full decode at 1/8.
@Suite("JPEG DC-only decoding at 1/8")
struct CodecJPEGDCTests {
    typealias S = CodecTestSupport

    /// A photo-like opaque image: gradients, stripes and noise in every channel.
    static func photoLike(width: Int, height: Int) throws -> Bitmap {
        var generator = SeededGenerator(seed: 7)
        let noise = (0..<(width * height)).map { _ in Int(generator.next() % 40) }
        return try S.bitmap(width: width, height: height, style: .bgra32) { x, y in
            let n = noise[y * width + x]
            return [UInt8((x * 255 / width + n) % 256), UInt8((y * 255 / height + ((x / 16) % 2) * 60) % 256),
                    UInt8(((x + y) * 255 / (width + height) + n / 2) % 256), 255]
        }
    }

    /// BGRA (or gray) at 1/8 through TurboJPEG and through the DC-only decoder (nil when it declined).
    static func bothDecodes(_ file: [UInt8], gray: Bool = false) throws -> (reference: [UInt8], ours: [UInt8]?, width: Int, height: Int) {
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var w: Int32 = 0, h: Int32 = 0, sub: Int32 = 0, cs: Int32 = 0
        #expect(tjDecompressHeader3(handle, file, UInt(file.count), &w, &h, &sub, &cs) == 0)
        let ow = Int(w + 7) / 8, oh = Int(h + 7) / 8, channels = gray ? 1 : 4
        var reference = [UInt8](repeating: 0, count: ow * oh * channels)
        #expect(tjDecompress2(handle, file, UInt(file.count), &reference, Int32(ow), Int32(ow * channels), Int32(oh),
                              (gray ? TJPF_GRAY : TJPF_BGRA).rawValue, 0) == 0)
        var ours = [UInt8](repeating: 0, count: ow * oh * channels)
        let status = tessera_jpeg_decode_dc(file, file.count, Int32(gray ? TESSERA_JPEG_GRAY : TESSERA_JPEG_BGRA), &ours,
                                            ow * channels, Int32(ow), Int32(oh))
        return (reference, Int(status) == TESSERA_JPEG_OK ? ours : nil, ow, oh)
    }

    @Test("Gray output of colour files and gray files: TurboJPEG's pixels")
    func lumaExact() throws {
        let image = try Self.photoLike(width: 203, height: 117)
        for quality in [50, 90] {
            let file = try JPEGEncoder(quality: quality).encode(image)
            let (reference, ours, _, _) = try Self.bothDecodes(file, gray: true)
            let decoded = try #require(ours, "the DC decoder should take a baseline file")
            #expect(decoded == reference, "quality \(quality)")
        }
        let grayFile = try S.fixture("gray.jpg")
        let (reference, ours, _, _) = try Self.bothDecodes(grayFile)
        if let ours { #expect(ours == reference) }
    }

    @Test("Colour (4:2:0) at 1/8: TurboJPEG's pixels, and the façade's thumbnail is the one drawn from them")
    func colourExact() throws {
        let image = try Self.photoLike(width: 640, height: 480)
        let file = try JPEGEncoder(quality: 85).encode(image)
        let (reference, ours, w, h) = try Self.bothDecodes(file)
        let decoded = try #require(ours)
        #expect(w == 80 && h == 60)
        #expect(decoded == reference)
        // What the table stores: a 40x40 aspect-fill thumbnail through the façade, against one drawn
        // from TurboJPEG's own 1/8 decode.
        let thumb = try ImageDecoder().thumbnail(Data(file), size: PixelSize(width: 40, height: 40))
        let source = Bitmap(width: w, height: h, style: .bgra32) { view in
            for y in 0..<h { reference.withUnsafeBytes { view.row(y).copyMemory(from: $0.baseAddress! + y * w * 4, byteCount: w * 4) } }
        }
        let expected = try Bitmap(width: 40, height: 40, style: .bgra32) { (view: MutableBitmapView) throws(TesseraError) in
            view.prepareForDrawing()
            let context = try DrawingContext(target: view)
            try context.draw(source, in: context.bounds, mode: .fill)
            context.flush()
        }
        var a: [UInt8] = [], b: [UInt8] = []
        for y in 0..<40 { for x in 0..<40 { a += thumb.pixel(x: x, y: y); b += expected.pixel(x: x, y: y) } }
        #expect(a == b)
    }

    @Test("Restart markers, 4:4:4, 4:2:2, 4:2:0 and gray files: the same pixels as TurboJPEG",
          .enabled(if: CodecLibjpegTests.cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: [["-sample", "1x1,1x1,1x1"], ["-sample", "1x1,1x1,1x1", "-restart", "1"], ["-sample", "2x1,1x1,1x1", "-restart", "3B"],
                      ["-restart", "2"], ["-grayscale", "-restart", "1"]])
    func cjpegVariants(arguments: [String]) throws {
        let file = try CodecLibjpegTests.encode(arguments)
        let gray = arguments.contains("-grayscale")
        let (reference, ours, _, _) = try Self.bothDecodes(file)
        let decoded = try #require(ours, "the DC decoder should take \(arguments)")
        #expect(decoded == reference, "\(arguments) (gray: \(gray))")
    }

    /// Writes a cjpeg scan script (`-scans FILE`) and returns its path.
    static func scanScript(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-scans-\(UUID().uuidString).txt")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("Progressive 4:4:4, 4:2:2 and gray at 1/8 from the DC scans alone: TurboJPEG's pixels, with restart markers, DC successive approximation and one-component DC scans",
          .enabled(if: CodecLibjpegTests.cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: [["-sample", "1x1,1x1,1x1"], ["-sample", "2x1,1x1,1x1", "-restart", "1"], ["-grayscale"],
                      ["-sample", "2x1,1x1,1x1", "-scans", "0 1 2: 0 0 0 2; 0: 1 63 0 0; 0 1 2: 0 0 2 1; 1: 1 63 0 0; 2: 1 63 0 0; 0 1 2: 0 0 1 0;"],
                      ["-sample", "2x1,1x1,1x1", "-restart", "2", "-scans", "0: 0 0 0 1; 1: 0 0 0 0; 2: 0 0 0 0; 0: 1 63 0 0; 1: 1 63 0 0; 2: 1 63 0 0; 0: 0 0 1 0;"],
                      ["-grayscale", "-scans", "0: 0 0 0 1; 0: 1 9 0 0; 0: 10 63 0 0; 0: 0 0 1 0;"]])
    func progressiveDCExact(arguments: [String]) throws {
        var arguments = arguments
        if let index = arguments.firstIndex(of: "-scans") { arguments[index + 1] = try Self.scanScript(arguments[index + 1]) }
        defer { if let index = arguments.firstIndex(of: "-scans") { try? FileManager.default.removeItem(atPath: arguments[index + 1]) } }
        let file = try CodecLibjpegTests.encode(["-progressive"] + arguments, image: try Self.photoLike(width: 203, height: 117))
        #expect(file.withUnsafeBytes { JPEGDecoder.isProgressive($0) })
        for gray in [false, true] {
            let (reference, ours, w, h) = try Self.bothDecodes(file, gray: gray)
            #expect(w == 26 && h == 15)
            let decoded = try #require(ours, "the DC decoder should take \(arguments)")
            #expect(decoded == reference, "\(arguments), gray output: \(gray)")
        }
    }

    @Test("Progressive files it cannot take are declined: 4:2:0 (chroma keeps a 2x2 inverse DCT), cut inside a DC scan, no EOI")
    func progressiveDeclines() throws {
        let image = try Self.photoLike(width: 160, height: 96)
        var out = [UInt8](repeating: 0, count: 20 * 12 * 4)
        if CodecLibjpegTests.cjpeg != nil {
            let subsampled = try CodecLibjpegTests.encode(["-progressive", "-sample", "2x2,1x1,1x1"], image: image)
            #expect(Int(tessera_jpeg_decode_dc(subsampled, subsampled.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 20, 12)) == TESSERA_JPEG_UNSUPPORTED)
            let file = try CodecLibjpegTests.encode(["-progressive", "-sample", "1x1,1x1,1x1"], image: image)
            #expect(Int(tessera_jpeg_decode_dc(file, file.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 20, 12)) == TESSERA_JPEG_OK)
            // The first scan is the DC scan: cut in its middle.
            let sos = try #require((2..<(file.count - 1)).first { file[$0] == 0xFF && file[$0 + 1] == 0xDA })
            let next = try #require((sos + 2..<(file.count - 1)).first { file[$0] == 0xFF && file[$0 + 1] != 0 && !(0xD0...0xD7).contains(file[$0 + 1]) })
            let cut = Array(file.prefix((sos + next) / 2))
            #expect(Int(tessera_jpeg_decode_dc(cut, cut.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 20, 12)) == TESSERA_JPEG_UNSUPPORTED)
            let noEOI = Array(file.dropLast(2))
            #expect(Int(tessera_jpeg_decode_dc(noEOI, noEOI.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 20, 12)) == TESSERA_JPEG_UNSUPPORTED)
        }
    }

    @Test("Damaged and truncated files are declined: strict reports them as before, lenient decodes them through the fallback")
    func declinesDamage() throws {
        let file = try JPEGEncoder(quality: 90).encode(try Self.photoLike(width: 160, height: 96))
        // Cut inside the scan.
        let cut = Array(file.prefix(file.count * 2 / 3))
        var out = [UInt8](repeating: 0, count: 20 * 12 * 4)
        #expect(Int(tessera_jpeg_decode_dc(cut, cut.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 20, 12)) == TESSERA_JPEG_UNSUPPORTED)
        let reason = S.failure { _ = try S.decode(cut, with: JPEGDecoder(limits: .strict), atLeast: PixelSize(width: 20, height: 12)) }
        #expect(reason == .decoding(.truncated(.jpeg)))
        // Lenient: the rows that arrived (TurboJPEG's at 1/8 for the whole file), grey below.
        let thumb = try ImageDecoder().decode(Data(cut), minimumSize: PixelSize(width: 20, height: 12))
        #expect(thumb.integrity == .truncated)
        #expect(thumb.layout.size == PixelSize(width: 20, height: 12))
        let (_, whole) = try S.decode(file, with: JPEGDecoder(), atLeast: PixelSize(width: 20, height: 12))
        #expect((0..<20).allSatisfy { thumb.pixel(x: $0, y: 0) == whole.pixel(x: $0, y: 0) })
        #expect((0..<20).allSatisfy { thumb.pixel(x: $0, y: 11) == [0x80, 0x80, 0x80, 255] })
        // Extraneous bytes before the SOS marker: declined here, damaged (not an error) through the façade.
        let sos = try #require((2..<(file.count - 1)).first { file[$0] == 0xFF && file[$0 + 1] == 0xDA })
        let extraneous = Array(file[..<sos]) + [0x00, 0x01] + Array(file[sos...])
        #expect(Int(tessera_jpeg_decode_dc(extraneous, extraneous.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 20, 12)) == TESSERA_JPEG_UNSUPPORTED)
        let damaged = try ImageDecoder().decode(Data(extraneous), minimumSize: PixelSize(width: 20, height: 12))
        #expect(damaged.integrity == .damaged)
        #expect(S.close(damaged, whole, maxDelta: 0, meanDelta: 0))
        // No EOI after the scan.
        let noEOI = Array(file.dropLast(2))
        #expect(Int(tessera_jpeg_decode_dc(noEOI, noEOI.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 20, 12)) == TESSERA_JPEG_UNSUPPORTED)
        // A wrong output size.
        #expect(Int(tessera_jpeg_decode_dc(file, file.count, Int32(TESSERA_JPEG_BGRA), &out, 80, 19, 12)) == TESSERA_JPEG_UNSUPPORTED)
    }
}
