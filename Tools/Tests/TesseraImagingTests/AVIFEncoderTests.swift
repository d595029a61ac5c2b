import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import Tessera
import TesseraTestSupport

/// AVIF encoding (libheif + libaom) round-tripped through our own decoder: size, alpha and PSNR
/// against the source. The thresholds sit a few dB under what libaom 3.6 gives here (see each test).
@Suite("AVIF encoder round trips")
struct AVIFEncoderTests {
    typealias H = HEIFTestSupport
    typealias S = CodecTestSupport

    static func roundTrip(_ image: Bitmap, encoder: AVIFEncoder) throws -> (bytes: [UInt8], info: ImageInfo, decoded: Bitmap) {
        let bytes = try encoder.encode(image)
        #expect(bytes.withUnsafeBytes { ImageFileFormat(sniffing: $0) } == .avif)
        let (info, decoded) = try S.decode(bytes, with: HEIFDecoder(format: .avif))
        return (bytes, info, decoded)
    }

    @Test("a photograph at quality 60 and 90, the default speed: same size, PSNR at least 30 and 36 dB, higher quality is larger")
    func photo() throws {
        let source = try H.photo(width: 480)
        let low = try Self.roundTrip(source, encoder: AVIFEncoder(quality: 60))
        let high = try Self.roundTrip(source, encoder: AVIFEncoder(quality: 90))
        for result in [low, high] {
            #expect(result.info.storedSize == source.layout.size)
            #expect(result.info.hasAlpha == false)
        }
        let (lowPSNR, highPSNR) = (psnr(low.decoded, source), psnr(high.decoded, source))
        #expect(lowPSNR >= 30, "q60: \(lowPSNR) dB, \(low.bytes.count) bytes")
        #expect(highPSNR >= 36, "q90: \(highPSNR) dB, \(high.bytes.count) bytes")
        #expect(highPSNR > lowPSNR)
        #expect(high.bytes.count > low.bytes.count)
    }

    @Test("odd sizes and every pixel style encode", arguments: PixelStyle.allCases)
    func styles(style: PixelStyle) throws {
        let source = try S.bitmap(width: 45, height: 17, style: style, color: S.gradient)
        let result = try Self.roundTrip(source, encoder: AVIFEncoder(quality: 90, speed: 9))
        #expect(result.info.storedSize == PixelSize(width: 45, height: 17))
        let reference = try S.decodeAny(try PNGEncoder().encode(source), with: PNGDecoder(), style: .bgra32)
        let psnr = psnr(result.decoded, reference)
        #expect(psnr >= 30, "\(style): \(psnr) dB")
    }

    @Test("transparency survives: an alpha item only when some pixel is not opaque")
    func alpha() throws {
        let source = try S.bitmap(width: 32, height: 32, style: .bgra32) { x, _ in
            x < 16 ? [0, 0, 200, 255] : [0, 64, 0, 64]   // opaque red | quarter-opaque green (premultiplied)
        }
        let result = try Self.roundTrip(source, encoder: AVIFEncoder(quality: 90))
        #expect(result.info.hasAlpha)
        #expect(S.matches(result.decoded.pixel(x: 4, y: 4), [0, 0, 200, 255], tolerance: 8))
        #expect(S.matches(result.decoded.pixel(x: 28, y: 4), [0, 64, 0, 64], tolerance: 8))
        let opaque = try Self.roundTrip(try S.bitmap(width: 32, height: 32, style: .bgra32, color: S.gradient), encoder: AVIFEncoder())
        #expect(opaque.info.hasAlpha == false)
    }
}
