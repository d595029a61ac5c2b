import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import Tessera
@testable import TesseraCLI
import TesseraTestSupport

/// `tessera probe --json`'s `thumbHash`: what ``ProbeCommand/thumbHash(of:info:decoder:)`` computes, and the
/// key in the command's JSON (the debug binary next to the tests).
@Suite("probe ThumbHash")
struct ProbeThumbHashTests {
    /// A PNG of the fixture's 100 × 75 photo-like scene scaled by `scale` (nearest neighbour), and its
    /// straight RGBA at 100 × 75.
    static func photoPNG(scale: Int = 1) throws -> (png: Data, rgba: [UInt8]) {
        let fixture = ThumbHashFixtures.fixture("photo-like 100x75")
        let small = fixture.pixels
        let w = 100 * scale, h = 75 * scale
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let s = ((y / scale) * 100 + x / scale) * 4, d = (y * w + x) * 4
                for c in 0..<4 { rgba[d + c] = small[s + c] }
            }
        }
        let bitmap = ThumbHashFixtures.bitmap(rgba: rgba, width: w, height: h)
        return (Data(try PNGEncoder().encode(bitmap)), small)
    }

    @Test("an image of at most 100 × 100 is hashed from its exact pixels")
    func smallImageExact() throws {
        let (png, rgba) = try Self.photoPNG()
        let decoder = ImageDecoder()
        let hash = try ProbeCommand.thumbHash(of: png, info: try decoder.probe(png), decoder: decoder)
        // PNG is lossless and 100 × 75 needs no scaling, so these are the fixture's pixels and its known answer.
        #expect(hash == (try ThumbHash(rgba: rgba, width: 100, height: 75)))
        #expect(hash.base64 == ThumbHashFixtures.fixture("photo-like 100x75").thumbHash)
    }

    @Test("a larger image is decoded small first and still hashes like its small self")
    func largeImageDecodedSmall() throws {
        let (png, _) = try Self.photoPNG(scale: 4)
        let decoder = ImageDecoder()
        let info = try decoder.probe(png)
        #expect(info.width == 400 && info.height == 300)
        let hash = try ProbeCommand.thumbHash(of: png, info: info, decoder: decoder)
        // The decode at 100 × 75 that the command hashes.
        let small = try decoder.thumbnail(png, size: PixelSize(width: 100, height: 75), mode: .stretch)
        #expect(hash == (try ThumbHash(image: small)))
        // Shrinking 4 × 4 blocks of one colour back to 100 × 75 with a box filter gives the original
        // pixels back, or within a rounding step: the placeholder is the original's.
        let exact = try ThumbHash(base64: ThumbHashFixtures.fixture("photo-like 100x75").thumbHash)
        #expect(hash.placeholderSize == exact.placeholderSize)
        let worst = zip(hash.placeholderRGBA(), exact.placeholderRGBA()).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 8, "worst \(worst)")
    }

    struct ProbeRow: Decodable { var file: String; var format: String?; var integrity: String?; var thumbHash: String?; var error: String? }

    @Test("probe --json has thumbHash for every decodable file and keeps its other keys")
    func commandJSON() throws {
        let dir = try temporaryDirectory()
        let (png, _) = try Self.photoPNG(scale: 3)
        let photo = dir.appendingPathComponent("photo.png")
        try png.write(to: photo)
        // A transparent image: the hash carries alpha.
        let disc = ThumbHashFixtures.fixture("transparent disc 60x90")
        let discBitmap = ThumbHashFixtures.bitmap(rgba: disc.pixels, width: disc.width, height: disc.height)
        let discPath = dir.appendingPathComponent("disc.png")
        try Data(try PNGEncoder().encode(discBitmap)).write(to: discPath)
        let broken = dir.appendingPathComponent("broken.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0]).write(to: broken)

        let run = try CommandRun.tessera(["probe", "--json", photo.path, discPath.path, broken.path])
        #expect(run.status == 1, "the broken file still fails the run: \(run)")
        let rows = try run.json([ProbeRow].self)
        try #require(rows.count == 3)
        let decoder = ImageDecoder()
        let expected = try ProbeCommand.thumbHash(of: png, info: try decoder.probe(png), decoder: decoder)
        #expect(rows[0].thumbHash == expected.base64 && rows[0].format == "png" && rows[0].integrity == "intact")
        let discHash = try ThumbHash(base64: try #require(rows[1].thumbHash))
        #expect(discHash.bytes[2] & 0x80 != 0, "has alpha")
        #expect(discHash.base64 == ThumbHashFixtures.fixture("transparent disc 60x90").thumbHash, "60 × 90 is hashed from its exact pixels")
        #expect(rows[2].thumbHash == nil && rows[2].error != nil)
        // The raw JSON: the new key beside the old ones, absent (not null) for the broken file; base64's "/"
        // is written as it is (no "\/" escapes).
        #expect(run.output.contains("\"thumbHash\" : \"\(expected.base64)\""))
        #expect(run.output.components(separatedBy: "\"thumbHash\"").count == 3)

        // Text mode prints no hash and decodes nothing more than before.
        let text = try CommandRun.tessera(["probe", photo.path])
        #expect(text.status == 0 && !text.output.contains(expected.base64), "\(text)")
        // --decode with --json: the same hash (the small decode, not the full one).
        let decoded = try CommandRun.tessera(["probe", "--json", "--decode", photo.path])
        #expect(try decoded.json([ProbeRow].self).first?.thumbHash == expected.base64)
    }
}
