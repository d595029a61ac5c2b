import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
import Tessera
import TesseraTestSupport

/// The policy's arithmetic and what the image tables do with a decode that was not intact.
@Suite("Decoding policy: limits, integrity, image tables")
struct DecodingPolicyTests {
    @Test("a truncation is accepted from the minimum fraction of rows up, under lenient only")
    func truncationThreshold() throws {
        let lenient = DecodingLimits()
        #expect(lenient.policy == .lenient)
        #expect(throws: TesseraError.self) { try lenient.acceptTruncation(decodedRows: 99, of: 1000, format: .png) }
        #expect(try lenient.acceptTruncation(decodedRows: 100, of: 1000, format: .png) == .truncated)
        #expect(throws: TesseraError.self) { try lenient.acceptTruncation(decodedRows: 0, of: 5, format: .jpeg) }
        // 10 % of 5 rows rounds up to one row.
        #expect(try lenient.acceptTruncation(decodedRows: 1, of: 5, format: .jpeg) == .truncated)
        let strict = DecodingLimits.strict
        for rows in [1, 500, 999] {
            let reason = CodecTestSupport.failure { _ = try strict.acceptTruncation(decodedRows: rows, of: 1000, format: .webp) }
            #expect(reason == .decoding(.truncated(.webp)), "\(rows) rows")
        }
        var half = DecodingLimits()
        half.minimumDecodedFraction = 0.5
        #expect(throws: TesseraError.self) { try half.acceptTruncation(decodedRows: 499, of: 1000, format: .png) }
        #expect(try half.acceptTruncation(decodedRows: 500, of: 1000, format: .png) == .truncated)
    }

    @Test("damage is accepted under lenient and is the codec's error under strict")
    func damage() throws {
        #expect(try DecodingLimits().acceptDamage("Corrupt JPEG data", format: .jpeg) == .damaged)
        let reason = CodecTestSupport.failure { _ = try DecodingLimits.strict.acceptDamage("Corrupt JPEG data", format: .jpeg) }
        #expect(reason == .decoding(.codec(.jpeg, message: "Corrupt JPEG data")))
    }

    @Test("integrity is ordered by severity and combines to the worse")
    func integrityOrder() {
        #expect(DecodeIntegrity.intact < .damaged && DecodeIntegrity.damaged < .truncated)
        #expect(DecodeIntegrity.intact.combined(with: .damaged) == .damaged)
        #expect(DecodeIntegrity.truncated.combined(with: .damaged) == .truncated)
        #expect(!DecodeIntegrity.intact.isPartial && DecodeIntegrity.damaged.isPartial && DecodeIntegrity.truncated.isPartial)
    }

    /// A provider whose every source is a bitmap decoded from a file that ended early.
    struct TruncatedSourceProvider: SourceImageProviding {
        let loads = Counter()
        func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
            loads.increment()
            var bitmap = try Bitmap.drawing(size: PixelSize(width: 80, height: 80)) { $0.fill(with: Color(red: 0, green: 0, blue: 1)) }
            bitmap.integrity = .truncated
            return .decoded(bitmap)
        }
        func cancelSourceImage(at url: URL) {}
        func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { false }
    }

    @Test("a truncated source reaches its requester; only a format that stores truncated images keeps it")
    func tablesKeepTruncatedImagesOnlyWhenTheFormatSaysSo() async throws {
        let dropping = ImageFormat(name: "dropping", style: .bgra32, size: PixelSize(width: 32, height: 32), maximumCount: 8)
        let keeping = ImageFormat(name: "keeping", style: .bgra32, size: PixelSize(width: 32, height: 32), maximumCount: 8,
                                  storesTruncatedImages: true)
        #expect(!dropping.storesTruncatedImages)
        let provider = TruncatedSourceProvider()
        let cache = try ImageCache(formats: [dropping, keeping], directory: try temporaryDirectory(), provider: provider)
        let user = User("ann", url: URL(fileURLWithPath: "/nonexistent/ann.png"))
        for format in [dropping, keeping] {
            let image = try await cache.image(for: user, format: format)
            #expect(image.pixel(x: 16, y: 16) == [255, 0, 0, 255], "\(format.name): the requester sees the pixels")
        }
        #expect(provider.loads.count == 2)
        #expect(!cache.imageExists(for: user, format: dropping))
        #expect(cache.imageExists(for: user, format: keeping))
        _ = try await cache.image(for: user, format: keeping)
        #expect(provider.loads.count == 2, "a kept entry is a hit")
        _ = try await cache.image(for: user, format: dropping)
        #expect(provider.loads.count == 3, "a dropped entry loads its source again")
    }

    @Test("a format decoded without storesTruncatedImages (written before it existed) reads as false")
    func formatDecodingDefaults() throws {
        let format = ImageFormat(name: "x", style: .gray8, size: PixelSize(width: 8, height: 8), maximumCount: 2, storesTruncatedImages: true)
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(format)) as? [String: Any])
        #expect(object["storesTruncatedImages"] as? Bool == true)
        #expect(try JSONDecoder().decode(ImageFormat.self, from: JSONEncoder().encode(format)) == format)
        object["storesTruncatedImages"] = nil
        let older = try JSONDecoder().decode(ImageFormat.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(!older.storesTruncatedImages && older.name == "x" && older.size == format.size)
    }
}
