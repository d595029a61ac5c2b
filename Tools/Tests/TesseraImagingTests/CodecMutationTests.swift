import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// Truncations and bit flips of every fixture, fed to every decoder: the only acceptable outcomes
/// are a thrown ``TesseraError`` or a valid image. A crash fails the whole test process.
@Suite("Mutated input never crashes a decoder")
struct CodecMutationTests {
    typealias S = CodecTestSupport
    /// Small limits keep hostile sizes cheap while still exercising the decode paths.
    static let limits = DecodingLimits(maximumPixelCount: 1_000_000, maximumInputBytes: 1 << 20)
    static let decoders: [any ImageDecoding] = ImageFileFormat.allCases.map { S.decoder(for: $0, limits: limits) }

    struct Tally {
        var decoded = 0, failed = 0, foreignErrors = 0, badSizes = 0
    }

    /// Probes and decodes `bytes` with every decoder, at full size and (alternately) downscaled,
    /// into a style each decoder supports directly.
    static func run(_ bytes: [UInt8], variant: Int, tally: inout Tally) {
        for decoder in decoders {
            do {
                try bytes.withUnsafeBytes { raw in
                    let info = try decoder.probe(raw)
                    let target = variant % 2 == 0 ? nil : PixelSize(width: max(1, info.width / 3), height: max(1, info.height / 3))
                    let size = decoder.decodedSize(for: info, atLeast: target)
                    let style: PixelStyle = variant % 3 == 0 && decoder.supportsDirectDecode(to: .bgr32) ? .bgr32 : .bgra32
                    let bitmap = try Bitmap(width: size.width, height: size.height, style: style) { (view: MutableBitmapView) throws(TesseraError) in
                        try decoder.decode(raw, info: info, into: view)
                    }
                    if bitmap.layout.size != size || size.width > info.width || size.height > info.height { tally.badSizes += 1 }
                }
                tally.decoded += 1
            } catch is TesseraError {
                tally.failed += 1
            } catch {
                tally.foreignErrors += 1
            }
        }
    }

    @Test("every prefix on a coarse grid", arguments: CodecTestSupport.fixtures)
    func truncations(fixture: (name: String, format: ImageFileFormat)) throws {
        let bytes = try S.fixture(fixture.name)
        var tally = Tally()
        let step = max(1, bytes.count / 96)
        for (k, length) in stride(from: 0, to: bytes.count, by: step).enumerated() {
            Self.run(Array(bytes.prefix(length)), variant: k, tally: &tally)
            // Under the strict policy the matching decoder must reject anything shorter than half the
            // file; under the lenient one it may decode it, but never as intact.
            if length < bytes.count / 2 {
                let cut = Array(bytes.prefix(length))
                let reason = S.failure { _ = try S.decode(cut, with: S.decoder(for: fixture.format, limits: .strict)) }
                #expect(reason != nil, "\(fixture.name) cut at \(length) decoded under the strict policy")
                if case .success(let integrity) = CodecBadInputTests.lenientOutcome(cut, S.decoder(for: fixture.format)) {
                    #expect(integrity.isPartial, "\(fixture.name) cut at \(length) decoded as intact")
                }
            }
        }
        Self.run(bytes, variant: 0, tally: &tally)
        #expect(tally.foreignErrors == 0)
        #expect(tally.badSizes == 0)
        #expect(tally.decoded >= 1, "the intact file must decode")
        #expect(tally.failed > 0)
    }

    @Test("a thousand seeded bit flips and byte overwrites", arguments: CodecTestSupport.fixtures)
    func flips(fixture: (name: String, format: ImageFileFormat)) throws {
        let bytes = try S.fixture(fixture.name)
        var rng = SeededGenerator(seed: UInt64(truncatingIfNeeded: fixture.name.utf8.reduce(5381) { $0 &* 33 &+ Int($1) }))
        var tally = Tally()
        for variant in 0..<1000 {
            var copy = bytes
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = Int.random(in: 0..<copy.count, using: &rng)
                if variant % 4 == 3 {
                    copy[at] = [0x00, 0xFF, 0x7F, 0x80][Int.random(in: 0..<4, using: &rng)]   // boundary values
                } else {
                    copy[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
                }
            }
            Self.run(copy, variant: variant, tally: &tally)
        }
        #expect(tally.foreignErrors == 0)
        #expect(tally.badSizes == 0)
        #expect(tally.decoded + tally.failed == 1000 * Self.decoders.count)
        #expect(tally.failed >= 1000 * (Self.decoders.count - 1), "foreign decoders must reject every variant")
    }
}
