import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Bad input gives typed errors")
struct CodecBadInputTests {
    typealias S = CodecTestSupport

    /// Probe and decode (full size, BGRA); the error reason, or `nil` if it all worked.
    static func outcome(_ bytes: [UInt8], _ decoder: any ImageDecoding) -> TesseraError.Reason? {
        S.failure { _ = try S.decode(bytes, with: decoder) }
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    @Test("empty input", arguments: ImageFileFormat.allCases)
    func empty(format: ImageFileFormat) {
        #expect(Self.outcome([], S.decoder(for: format)) == .decoding(.empty))
    }

    @Test("input over the byte limit", arguments: CodecTestSupport.fixtures)
    func tooLarge(fixture: (name: String, format: ImageFileFormat)) throws {
        let bytes = try S.fixture(fixture.name)
        let limits = DecodingLimits(maximumInputBytes: 50)
        #expect(Self.outcome(bytes, S.decoder(for: fixture.format, limits: limits))
                == .decoding(.inputTooLarge(bytes: bytes.count, limit: 50)))
    }

    @Test("truncated files under the strict policy", arguments: CodecTestSupport.fixtures)
    func truncated(fixture: (name: String, format: ImageFileFormat)) throws {
        let bytes = try S.fixture(fixture.name)
        for length in [bytes.count / 2, bytes.count * 3 / 4, 20] {
            let reason = Self.outcome(Array(bytes.prefix(length)), S.decoder(for: fixture.format, limits: .strict))
            #expect(reason == .decoding(.truncated(fixture.format)), "\(fixture.name) cut at \(length): \(String(describing: reason))")
        }
    }

    /// Probe and decode (full size, BGRA) under the default, lenient policy: the integrity, or the error reason.
    static func lenientOutcome(_ bytes: [UInt8], _ decoder: any ImageDecoding) -> Result<DecodeIntegrity, TesseraError> {
        do {
            return .success(try bytes.withUnsafeBytes { (raw) throws(TesseraError) -> DecodeIntegrity in
                let info = try decoder.probe(raw)
                var integrity = DecodeIntegrity.intact
                _ = try Bitmap(width: info.width, height: info.height, style: .bgra32) { (view: MutableBitmapView) throws(TesseraError) in
                    integrity = try decoder.decode(raw, info: info, into: view)
                }
                return integrity
            })
        } catch let error as TesseraError {
            return .failure(error)
        } catch {
            Issue.record("not a TesseraError: \(error)")
            return .success(.intact)
        }
    }

    @Test("truncated files under the lenient policy: a partial image or a typed error", arguments: CodecTestSupport.fixtures)
    func truncatedLenient(fixture: (name: String, format: ImageFileFormat)) throws {
        let bytes = try S.fixture(fixture.name)
        for length in [bytes.count / 2, bytes.count * 3 / 4, bytes.count - 1, 20] {
            switch Self.lenientOutcome(Array(bytes.prefix(length)), S.decoder(for: fixture.format)) {
            case .success(let integrity):
                // A still GIF needs only its first frame: without the trailer it is whole.
                let whole = fixture.format == .gif && length == bytes.count - 1
                #expect(integrity.isPartial || whole, "\(fixture.name) cut at \(length): \(integrity)")
            case .failure(let error):
                switch error.reason {
                case .decoding(.truncated(let format)), .decoding(.codec(let format, _)):
                    #expect(format == fixture.format, "\(fixture.name) cut at \(length)")
                default: Issue.record("\(fixture.name) cut at \(length): \(error)")
                }
            }
        }
        // 20 bytes hold no pixel data at all: refused under either policy.
        #expect(Self.outcome(Array(bytes.prefix(20)), S.decoder(for: fixture.format)) == .decoding(.truncated(fixture.format)))
    }

    @Test("PNG declaring 100000×100000 with a valid CRC")
    func pngBomb() {
        let ihdr = Self.be32(100_000) + Self.be32(100_000) + [8, 6, 0, 0, 0]
        let file = Self.pngSignature + Self.pngChunk("IHDR", ihdr) + Self.pngChunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
            + Self.pngChunk("IEND", [])
        #expect(Self.outcome(file, PNGDecoder()) == .decoding(.tooManyPixels(width: 100_000, height: 100_000, limit: 64_000_000)))
    }

    @Test("GIF screen of 65535×65535")
    func gifBomb() {
        let file: [UInt8] = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0x3B]
        #expect(Self.outcome(file, GIFDecoder()) == .decoding(.tooManyPixels(width: 65535, height: 65535, limit: 64_000_000)))
    }

    @Test("GIF frame far larger than its small screen")
    func gifFrameBomb() {
        var file: [UInt8] = Array("GIF89a".utf8) + [10, 0, 10, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]   // 2-colour global map
        file += [0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 2, 2, 0x4C, 0x01, 0, 0x3B]
        #expect(Self.outcome(file, GIFDecoder()) == .decoding(.tooManyPixels(width: 65535, height: 65535, limit: 64_000_000)))
    }

    @Test("JPEG SOF declaring 65500×65500")
    func jpegBomb() throws {
        var file = try JPEGEncoder().encode(try S.bitmap(width: 16, height: 16, style: .bgr32, color: S.gradient))
        let sof = try #require((2..<file.count - 1).first { file[$0] == 0xFF && file[$0 + 1] == 0xC0 })
        file[sof + 5] = 0xFF; file[sof + 6] = 0xDC; file[sof + 7] = 0xFF; file[sof + 8] = 0xDC   // 65500
        #expect(Self.outcome(file, JPEGDecoder()) == .decoding(.tooManyPixels(width: 65500, height: 65500, limit: 64_000_000)))
    }

    @Test("WebP lossless header declaring 16384×16384")
    func webpBomb() throws {
        var file = try S.fixture("lossless.webp")
        #expect(Array(file[12..<16]) == Array("VP8L".utf8) && file[20] == 0x2F)
        file[21] = 0xFF; file[22] = 0xFF; file[23] = 0xFF; file[24] |= 0x0F
        #expect(Self.outcome(file, WebPDecoder()) == .decoding(.tooManyPixels(width: 16384, height: 16384, limit: 64_000_000)))
    }

    @Test("smaller limits are honoured")
    func customLimit() throws {
        let limits = DecodingLimits(maximumPixelCount: 100)
        for fixture in S.fixtures {
            let reason = Self.outcome(try S.fixture(fixture.name), S.decoder(for: fixture.format, limits: limits))
            #expect(reason == .decoding(.tooManyPixels(width: 32, height: 32, limit: 100)), "\(fixture.name)")
        }
    }

    static func isCodecError(_ reason: TesseraError.Reason?, _ format: ImageFileFormat) -> Bool {
        if case .decoding(.codec(let f, let message))? = reason { return f == format && !message.isEmpty }
        return false
    }

    @Test("invalid data gives the codec's own error")
    func invalidData() throws {
        // PNG: IHDR with a wrong CRC.
        var png = try S.fixture("palette.png")
        png[29] ^= 0xFF
        #expect(Self.isCodecError(Self.outcome(png, PNGDecoder()), .png))
        // JPEG: 7-bit sample precision in the SOF.
        var jpeg = try S.fixture("baseline.jpg")
        let sof = try #require((2..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg[sof + 4] = 7
        #expect(Self.isCodecError(Self.outcome(jpeg, JPEGDecoder()), .jpeg))
        // WebP: a RIFF container whose chunk is unknown.
        var webp = try S.fixture("lossy.webp")
        webp.replaceSubrange(12..<16, with: Array("XXXX".utf8))
        #expect(Self.isCodecError(Self.outcome(webp, WebPDecoder()), .webp))
        // GIF: an unknown record type after the screen descriptor.
        let gif: [UInt8] = Array("GIF89a".utf8) + [4, 0, 4, 0, 0, 0, 0, 0x99, 0, 0, 0]
        #expect(Self.isCodecError(Self.outcome(gif, GIFDecoder()), .gif))
        // Each decoder fed another format's file.
        #expect(Self.isCodecError(Self.outcome(try S.fixture("palette.png"), JPEGDecoder()), .jpeg))
        #expect(Self.isCodecError(Self.outcome(try S.fixture("baseline.jpg"), PNGDecoder()), .png))
        #expect(Self.isCodecError(Self.outcome(try S.fixture("baseline.jpg"), WebPDecoder()), .webp))
        #expect(Self.isCodecError(Self.outcome(try S.fixture("baseline.jpg"), GIFDecoder()), .gif))
    }
}
