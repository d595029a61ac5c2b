import CTesseraCodecs
import ToolsTurboJPEG
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// The 1/4-scale decoder for baseline JPEGs (2x2 and 4x4 inverse DCTs) against TurboJPEG's decode at 1/4.
@Suite("JPEG decoding at 1/4")
struct CodecJPEGQuarterTests {
    typealias S = CodecTestSupport

    /// BGRA (or gray) at 1/4 through TurboJPEG (with the flags `JPEGDecoder` uses) and through
    /// `tessera_jpeg_decode_quarter` (nil when it declined).
    static func bothDecodes(_ file: [UInt8], gray: Bool = false) throws -> (reference: [UInt8], ours: [UInt8]?, width: Int, height: Int) {
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var w: Int32 = 0, h: Int32 = 0, sub: Int32 = 0, cs: Int32 = 0
        #expect(tjDecompressHeader3(handle, file, UInt(file.count), &w, &h, &sub, &cs) == 0)
        let ow = Int(w + 3) / 4, oh = Int(h + 3) / 4, channels = gray ? 1 : 4
        var reference = [UInt8](repeating: 0, count: ow * oh * channels)
        #expect(tjDecompress2(handle, file, UInt(file.count), &reference, Int32(ow), Int32(ow * channels), Int32(oh),
                              (gray ? TJPF_GRAY : TJPF_BGRA).rawValue, TJFLAG_LIMITSCANS) == 0)
        var ours = [UInt8](repeating: 0x5A, count: ow * oh * channels)
        let status = tessera_jpeg_decode_quarter(file, file.count, Int32(gray ? TESSERA_JPEG_GRAY : TESSERA_JPEG_BGRA), &ours,
                                                 ow * channels, Int32(ow), Int32(oh))
        return (reference, Int(status) == TESSERA_JPEG_OK ? ours : nil, ow, oh)
    }

    @Test("4:2:0 at qualities 50 to 100, sizes that end inside a block: TurboJPEG's pixels, in colour and in gray",
          arguments: [50, 90, 100])
    func colourExact(quality: Int) throws {
        for (width, height) in [(203, 117), (640, 480), (9, 7)] {
            let file = try JPEGEncoder(quality: quality).encode(try CodecJPEGDCTests.photoLike(width: width, height: height))
            for gray in [false, true] {
                let (reference, ours, w, h) = try Self.bothDecodes(file, gray: gray)
                #expect(w == (width + 3) / 4 && h == (height + 3) / 4)
                let decoded = try #require(ours, "a baseline 4:2:0 file is taken")
                #expect(decoded == reference, "\(width)x\(height) q\(quality), gray output: \(gray)")
            }
        }
    }

    @Test("4:4:4, 4:2:0 and gray files with restart markers: TurboJPEG's pixels",
          .enabled(if: CodecLibjpegTests.cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: [["-sample", "1x1,1x1,1x1"], ["-sample", "1x1,1x1,1x1", "-restart", "1"], ["-restart", "2"],
                      ["-restart", "3B"], ["-grayscale", "-restart", "1"]])
    func cjpegVariants(arguments: [String]) throws {
        let file = try CodecLibjpegTests.encode(arguments, image: try CodecJPEGDCTests.photoLike(width: 203, height: 117))
        for gray in [false, true] {
            let (reference, ours, _, _) = try Self.bothDecodes(file, gray: gray)
            let decoded = try #require(ours, "the 1/4 decoder should take \(arguments)")
            #expect(decoded == reference, "\(arguments), gray output: \(gray)")
        }
    }

    @Test("4:2:2, whose chroma libjpeg upsamples across at 1/4, at widths where its upsampling meets the edges: TurboJPEG's pixels",
          .enabled(if: CodecLibjpegTests.cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: [9, 16, 17, 24, 203])
    func horizontalChromaUpsampling(width: Int) throws {
        for restart in [[], ["-restart", "1"]] {
            let file = try CodecLibjpegTests.encode(["-sample", "2x1,1x1,1x1"] + restart,
                                                    image: try CodecJPEGDCTests.photoLike(width: width, height: 37))
            for gray in [false, true] {
                let (reference, ours, _, _) = try Self.bothDecodes(file, gray: gray)
                let decoded = try #require(ours, "the 1/4 decoder should take 4:2:2")
                #expect(decoded == reference, "width \(width) \(restart), gray output: \(gray)")
            }
        }
    }

    @Test("Progressive files are declined, and JPEGDecoder then gives TurboJPEG's pixels",
          .enabled(if: CodecLibjpegTests.cjpeg != nil, "cjpeg (Debian libjpeg-turbo-progs) is not installed; scripts/setup installs it"),
          arguments: [["-progressive"], ["-progressive", "-sample", "1x1,1x1,1x1"], ["-progressive", "-sample", "2x1,1x1,1x1"]])
    func declinedKinds(arguments: [String]) throws {
        let file = try CodecLibjpegTests.encode(arguments, image: try CodecJPEGDCTests.photoLike(width: 160, height: 96))
        let (reference, ours, w, h) = try Self.bothDecodes(file)
        #expect(ours == nil, "\(arguments) is left to TurboJPEG")
        let (_, decoded) = try S.decode(file, with: JPEGDecoder(), atLeast: PixelSize(width: w, height: h))
        #expect(decoded.layout.size == PixelSize(width: w, height: h))
        var pixels: [UInt8] = []
        for y in 0..<h { for x in 0..<w { pixels += decoded.pixel(x: x, y: y) } }
        #expect(pixels == reference)
    }

    @Test("Damaged and truncated files and a wrong output size are declined; the façade reports the damage as before")
    func declinesDamage() throws {
        let file = try JPEGEncoder(quality: 90).encode(try CodecJPEGDCTests.photoLike(width: 160, height: 96))
        var out = [UInt8](repeating: 0, count: 40 * 24 * 4)
        #expect(Int(tessera_jpeg_decode_quarter(file, file.count, Int32(TESSERA_JPEG_BGRA), &out, 160, 40, 24)) == TESSERA_JPEG_OK)
        #expect(Int(tessera_jpeg_decode_quarter(file, file.count, Int32(TESSERA_JPEG_BGRA), &out, 160, 39, 24)) == TESSERA_JPEG_UNSUPPORTED)
        let cut = Array(file.prefix(file.count * 2 / 3))
        #expect(Int(tessera_jpeg_decode_quarter(cut, cut.count, Int32(TESSERA_JPEG_BGRA), &out, 160, 40, 24)) == TESSERA_JPEG_UNSUPPORTED)
        let reason = S.failure { _ = try S.decode(cut, with: JPEGDecoder(limits: .strict), atLeast: PixelSize(width: 40, height: 24)) }
        #expect(reason == .decoding(.truncated(.jpeg)))
        let noEOI = Array(file.dropLast(2))
        #expect(Int(tessera_jpeg_decode_quarter(noEOI, noEOI.count, Int32(TESSERA_JPEG_BGRA), &out, 160, 40, 24)) == TESSERA_JPEG_UNSUPPORTED)
        let sos = try #require((2..<(file.count - 1)).first { file[$0] == 0xFF && file[$0 + 1] == 0xDA })
        let extraneous = Array(file[..<sos]) + [0x00, 0x01] + Array(file[sos...])
        #expect(Int(tessera_jpeg_decode_quarter(extraneous, extraneous.count, Int32(TESSERA_JPEG_BGRA), &out, 160, 40, 24)) == TESSERA_JPEG_UNSUPPORTED)
        let damaged = try ImageDecoder().decode(Data(extraneous), minimumSize: PixelSize(width: 40, height: 24))
        #expect(damaged.integrity == .damaged)
    }

    @Test("A thumbnail that needs 1/4 scale is the one drawn from TurboJPEG's decode at 1/4")
    func facadeThumbnail() throws {
        let file = try JPEGEncoder(quality: 85).encode(try CodecJPEGDCTests.photoLike(width: 640, height: 480))
        let (reference, ours, w, h) = try Self.bothDecodes(file)
        #expect(ours == reference && w == 160 && h == 120)
        // 100x100 aspect fill: 1/8 (80x60) is too small, 1/4 (160x120) the smallest scale that covers it.
        let thumb = try ImageDecoder().thumbnail(Data(file), size: PixelSize(width: 100, height: 100))
        let source = Bitmap(width: w, height: h, style: .bgra32) { view in
            for y in 0..<h { reference.withUnsafeBytes { view.row(y).copyMemory(from: $0.baseAddress! + y * w * 4, byteCount: w * 4) } }
        }
        let expected = try Bitmap(width: 100, height: 100, style: .bgra32) { (view: MutableBitmapView) throws(TesseraError) in
            view.prepareForDrawing()
            let context = try DrawingContext(target: view)
            try context.draw(source, in: context.bounds, mode: .aspectFill)
            context.flush()
        }
        var a: [UInt8] = [], b: [UInt8] = []
        for y in 0..<100 { for x in 0..<100 { a += thumb.pixel(x: x, y: y); b += expected.pixel(x: x, y: y) } }
        #expect(a == b)
    }
}
