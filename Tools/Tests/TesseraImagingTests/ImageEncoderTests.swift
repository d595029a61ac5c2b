import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera

@Suite("ImageEncoder: one entry point for every format Tessera writes")
struct ImageEncoderTests {
    typealias S = CodecTestSupport

    @Test("the formats written are JPEG, PNG, WebP, GIF and AVIF; HEIC is read only")
    func encodableFormats() {
        #expect(ImageFileFormat.encodable == [.jpeg, .png, .webp, .gif, .avif])
        #expect(ImageFileFormat.allCases.filter { !$0.isEncodable } == [.heic])
        #expect(ImageFileFormat.allCases.filter { !$0.supportsTransparency } == [.jpeg])
        #expect(ImageFileFormat.allCases.map(\.mediaType)
                == ["image/jpeg", "image/png", "image/webp", "image/gif", "image/heic", "image/avif"])
    }

    @Test("each encodable format round-trips through ImageDecoder at its size, close to the original",
          arguments: ImageFileFormat.encodable)
    func roundTrip(format: ImageFileFormat) throws {
        let original = try S.bitmap(width: 48, height: 32, style: .bgra32, color: S.gradient)
        let encoder = ImageEncoder(format: format, quality: 95)
        #expect(encoder.format == format)
        let bytes = try encoder.encode(original)
        #expect(bytes.withUnsafeBytes { ImageFileFormat(sniffing: $0) } == format)
        let decoder = ImageDecoder()
        #expect(try decoder.probe(Data(bytes)).format == format)
        let decoded = try decoder.decode(Data(bytes))
        #expect(decoded.width == 48 && decoded.height == 32)
        if format == .png {
            #expect(decoded.hasSamePixels(as: original))
        } else {
            #expect(S.close(decoded, original, maxDelta: 64, meanDelta: 6), "\(format)")
        }
    }

    @Test("the quality reaches the codec: JPEG at 10 is smaller than at 95")
    func qualityReachesTheCodec() throws {
        let image = try S.bitmap(width: 64, height: 64, style: .bgra32, color: S.gradient)
        let low = try ImageEncoder(format: .jpeg, quality: 10).encode(image)
        let high = try ImageEncoder(format: .jpeg, quality: 95).encode(image)
        #expect(low.count < high.count)
        #expect(try ImageEncoder(format: .jpeg).encode(image) == JPEGEncoder().encode(image), "no quality: the codec's default")
    }

    @Test("the WebP effort reaches libwebp: method 4 is the default, 0 and 6 differ, every method decodes, segments and noise shaping count, alpha kept")
    func webpMethodReachesTheCodec() throws {
        let image = try S.bitmap(width: 60, height: 40, style: .bgra32, color: S.gradient)
        let files = try (0...6).map { try ImageEncoder(format: .webp, quality: 95, webpEffort: .init(method: $0)).encode(image) }
        #expect(files[4] == (try ImageEncoder(format: .webp, quality: 95).encode(image)), "4 is the default")
        #expect(files[0] != files[6])
        for file in files {
            let decoded = try ImageDecoder().decode(Data(file))
            #expect(decoded.width == 60 && decoded.height == 40 && S.close(decoded, image, maxDelta: 64, meanDelta: 6))
        }
        // Segments and noise shaping reach libwebp too: the thumbnail effort (method 2, one segment, no noise
        // shaping) is neither method 2 with libwebp's four segments nor with its noise shaping alone.
        let photo = try S.bitmap(width: 96, height: 96, style: .bgra32) { x, y in
            [UInt8((x * 7 + y * 13) % 256), UInt8((x * x + y) % 256), UInt8((x ^ y) & 0xFF), 255]
        }
        let thumbnail = try ImageEncoder(format: .webp, quality: 75, webpEffort: .thumbnail).encode(photo)
        #expect(thumbnail == (try WebPEncoder(quality: 75, effort: .init(method: 2, segments: 1, noiseShaping: 0)).encode(photo)))
        #expect(thumbnail != (try WebPEncoder(quality: 75, effort: .init(method: 2, segments: 4, noiseShaping: 0)).encode(photo)))
        #expect(thumbnail != (try WebPEncoder(quality: 75, effort: .init(method: 2, segments: 1, noiseShaping: 50)).encode(photo)))
        #expect(try ImageDecoder().decode(Data(thumbnail)).width == 96)
        let clear = try S.bitmap(width: 16, height: 16, style: .bgra32) { x, _ in x < 8 ? [0, 0, 0, 0] : [40, 80, 120, 255] }
        let kept = try ImageDecoder().decode(Data(WebPEncoder(quality: 80, method: 2).encode(clear)))
        #expect(kept.pixel(x: 2, y: 2)[3] == 0 && kept.pixel(x: 12, y: 2)[3] == 255)
    }

    @Test("a transparent image as JPEG is flattened onto the background when one is given, else over black")
    func jpegBackground() throws {
        let clear = try S.bitmap(width: 16, height: 16, style: .bgra32) { _, _ in [0, 0, 0, 0] }
        let onWhite = try ImageDecoder().decode(Data(ImageEncoder(format: .jpeg, background: .white).encode(clear)))
        let overBlack = try ImageDecoder().decode(Data(ImageEncoder(format: .jpeg).encode(clear)))
        #expect(S.matches(onWhite.pixel(x: 8, y: 8), [255, 255, 255, 255], tolerance: 2), "\(onWhite.pixel(x: 8, y: 8))")
        #expect(S.matches(overBlack.pixel(x: 8, y: 8), [0, 0, 0, 255], tolerance: 2), "\(overBlack.pixel(x: 8, y: 8))")
        let told = try ImageEncoder(format: .jpeg, background: .white).encode(clear, transparent: true)
        #expect(told == (try ImageEncoder(format: .jpeg, background: .white).encode(clear)), "a caller's answer spares only the scan")
        #expect(clear.hasTransparentPixels)
        #expect(try !S.bitmap(width: 4, height: 4, style: .bgra32, color: S.gradient).hasTransparentPixels)
    }

    @Test("a format that is only read is refused with an encoding error naming it", arguments: [ImageFileFormat.heic])
    func readOnlyFormats(format: ImageFileFormat) throws {
        let image = try S.bitmap(width: 4, height: 4, style: .bgra32, color: S.gradient)
        let reason = S.failure { _ = try ImageEncoder(format: format).encode(image) }
        guard case .encoding(let named, _)? = reason else {
            Issue.record("expected an encoding error, got \(String(describing: reason))")
            return
        }
        #expect(named == format)
    }
}
