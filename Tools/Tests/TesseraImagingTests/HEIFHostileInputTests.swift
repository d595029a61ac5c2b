import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import Tessera
import TesseraTestSupport

/// Hostile HEIC and AVIF: files made by `heif-enc` at test time or the committed fixtures, with
/// their boxes patched (`ispe` sizes, the `iinf` item count, a thumbnail's declared size). Each
/// must end in a typed error before pixel memory is allocated, or decode within limits.
/// (Truncations and bit flips of the fixtures run in `CodecMutationTests` and `CodecBadInputTests`.)
@Suite("Hostile HEIC and AVIF input")
struct HEIFHostileInputTests {
    typealias H = HEIFTestSupport
    typealias S = CodecTestSupport

    /// The reason the façade's probe + thumbnail gives, or `nil` when it worked.
    static func outcome(_ bytes: [UInt8], limits: DecodingLimits = .default) -> TesseraError.Reason? {
        S.failure { _ = try ImageDecoder(limits: limits).thumbnail(Data(bytes), size: PixelSize(width: 20, height: 20)) }
    }

    @Test("an ispe declaring 20000×20000 is refused by the pixel limit", arguments: ["lossy.heic", "lossy.avif"])
    func declaredTooLarge(name: String) throws {
        var bytes = try S.fixture(name)
        let boxes = H.boxes("ispe", in: bytes)
        try #require(!boxes.isEmpty)
        for offset in boxes { H.setISPE(at: offset, to: PixelSize(width: 20_000, height: 20_000), in: &bytes) }
        #expect(Self.outcome(bytes) == .decoding(.tooManyPixels(width: 20_000, height: 20_000, limit: 64_000_000)))
    }

    @Test("an ispe declaring 100000×100000 is refused by libheif's side limit", arguments: ["lossy.heic", "lossy.avif"])
    func declaredHuge(name: String) throws {
        var bytes = try S.fixture(name)
        for offset in H.boxes("ispe", in: bytes) { H.setISPE(at: offset, to: PixelSize(width: 100_000, height: 100_000), in: &bytes) }
        let format: ImageFileFormat = name.hasSuffix("heic") ? .heic : .avif
        guard case .decoding(.codec(format, let message))? = Self.outcome(bytes) else {
            Issue.record("\(name): \(String(describing: Self.outcome(bytes)))")
            return
        }
        #expect(message.lowercased().contains("limit"), "\(message)")
    }

    @Test("a grid whose canvas (24950×12337) is far larger than its declared 32×32 is refused before libheif draws it")
    func gridCanvasLargerThanDeclared() throws {
        let bytes = try S.fixture("grid-canvas-bomb.heic")
        // The container itself reads as a 32×32 HEIC: only the grid descriptor in `idat` names the canvas.
        #expect(try ImageDecoder().probe(Data(bytes)).storedSize == PixelSize(width: 32, height: 32))
        guard case .decoding(.codec(.heic, let message))? = Self.outcome(bytes) else {
            Issue.record("\(String(describing: Self.outcome(bytes)))")
            return
        }
        // libheif's security limit (set to the declared size for the decode) names the canvas it refused.
        #expect(message.contains("24950x12337") && message.lowercased().contains("limit"), "\(message)")
    }

    @Test("a grid that names itself as its tile is refused before libheif recurses into it (the process crashed)")
    func gridDerivedFromItself() throws {
        var bytes = try S.fixture("grid-canvas-bomb.heic")
        // Its iref: `dimg` from item 2 (the grid), one reference, to item 1 (the tile). Make it item 2,
        // and the grid's canvas (in `idat`: version, flags, rows - 1, columns - 1, 16-bit width and
        // height) 32×32, so that libheif's size limit lets it recurse, as the fuzzer's file did.
        let iref = try #require(H.boxes("iref", in: bytes).first)
        let dimg = iref + 12
        #expect(String(decoding: bytes[dimg + 4..<dimg + 8], as: UTF8.self) == "dimg")
        #expect(Array(bytes[dimg + 8..<dimg + 14]) == [0, 2, 0, 1, 0, 1])
        bytes[dimg + 13] = 2
        let idat = try #require(H.boxes("idat", in: bytes).first)
        #expect(Array(bytes[idat + 8..<idat + 16]) == [0, 0, 0, 0, 0x61, 0x76, 0x30, 0x31])   // 24950×12337
        bytes[idat + 12..<idat + 16] = [0, 32, 0, 32]
        #expect(bytes.withUnsafeBytes { HEIFBoxes.hasReferenceCycle(in: $0) })
        guard case .decoding(.codec(.heic, let message))? = Self.outcome(bytes) else {
            Issue.record("\(String(describing: Self.outcome(bytes)))")
            return
        }
        #expect(message.contains("cycle"), "\(message)")
        let original = try S.fixture("grid-canvas-bomb.heic")
        #expect(!original.withUnsafeBytes { HEIFBoxes.hasReferenceCycle(in: $0) })
    }

    /// A `meta` box holding only an `iref` (of `version`) with one reference box per entry of `references`.
    static func metaWithReferences(version: UInt8, _ references: [(type: String, from: UInt32, to: [UInt32])]) -> [UInt8] {
        func be(_ value: UInt32, _ bytes: Int) -> [UInt8] { (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
        let idBytes = version == 0 ? 2 : 4
        var children: [UInt8] = []
        for reference in references {
            let body = be(reference.from, idBytes) + be(UInt32(reference.to.count), 2) + reference.to.flatMap { be($0, idBytes) }
            children += be(UInt32(8 + body.count), 4) + Array(reference.type.utf8) + body
        }
        let iref = be(UInt32(12 + children.count), 4) + Array("iref".utf8) + [version, 0, 0, 0] + children
        return be(UInt32(12 + iref.count), 4) + Array("meta".utf8) + [0, 0, 0, 0] + iref
    }

    @Test("reference cycles of any length and type are found; a grid with tiles, a thumbnail and an alpha plane is not one",
          arguments: [UInt8(0), 1])
    func referenceCycles(version: UInt8) {
        func cyclic(_ references: [(type: String, from: UInt32, to: [UInt32])]) -> Bool {
            Self.metaWithReferences(version: version, references).withUnsafeBytes { HEIFBoxes.hasReferenceCycle(in: $0) }
        }
        #expect(cyclic([("dimg", 1, [1])]))
        #expect(cyclic([("dimg", 1, [2, 3]), ("dimg", 3, [4]), ("auxl", 4, [1])]))
        #expect(cyclic([("thmb", 5, [1]), ("dimg", 1, [2]), ("dimg", 2, [6]), ("dimg", 6, [2])]))
        // Grid 1 over tiles 2-5, thumbnail 6 of it, alpha grid 7 over tiles 8-9 and auxiliary to 1.
        #expect(!cyclic([("dimg", 1, [2, 3, 4, 5]), ("thmb", 6, [1]), ("dimg", 7, [8, 9]), ("auxl", 7, [1]), ("dimg", 10, [2, 2])]))
        #expect(!cyclic([]))
    }

    @Test("an iinf declaring 5000 items is refused before libheif parses it")
    func itemCountDeclared() throws {
        var bytes = try S.fixture("lossy.heic")
        let iinf = try #require(H.boxes("iinf", in: bytes).first)
        // Version 0: a 16-bit entry count after the version and flags.
        let version = bytes[iinf + 8]
        let countOffset = iinf + 12
        if version == 0 {
            bytes[countOffset] = 0x13; bytes[countOffset + 1] = 0x88   // 5000
        } else {
            bytes[countOffset..<countOffset + 4] = [0, 0, 0x13, 0x88]
        }
        #expect(Self.outcome(bytes) == .decoding(.tooManyItems(count: 5000, limit: 1024)))
    }

    @Test("a real file of 20 images is refused by an item limit of 16 and decodes under the default")
    func itemCountReal() throws {
        let directory = try H.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tile = try S.bitmap(width: 16, height: 16, style: .bgr32, color: S.gradient)
        let png = directory.appendingPathComponent("tile.png")
        try Data(try PNGEncoder().encode(tile)).write(to: png)
        let file = try H.heifEnc(["-A", "-p", "speed=9", "-q", "50"] + Array(repeating: png.path, count: 20),
                                 output: directory.appendingPathComponent("many.avif"))
        let count = try #require(file.withUnsafeBytes { HEIFBoxes.itemCount(in: $0) })
        #expect(count >= 20)
        #expect(Self.outcome(file, limits: DecodingLimits(maximumItemCount: 16)) == .decoding(.tooManyItems(count: count, limit: 16)))
        #expect(Self.outcome(file) == nil)
    }

    /// A 64×64 HEIC with a 16×16 thumbnail item whose `ispe` box is patched to claim `size`.
    static func heicWithThumbnail(claiming size: PixelSize) throws -> [UInt8] {
        let directory = try H.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try S.bitmap(width: 64, height: 64, style: .bgr32, color: S.gradient)
        var bytes = try H.encode(source, as: .heic, extra: ["-t", "16"], in: directory)
        let thumbnailBox = try #require(H.boxes("ispe", in: bytes).first { H.ispe(at: $0, in: bytes) == PixelSize(width: 16, height: 16) })
        H.setISPE(at: thumbnailBox, to: size, in: &bytes)
        return bytes
    }

    @Test("a thumbnail item that claims a larger size than it decodes to is a typed error")
    func lyingThumbnail() throws {
        let bytes = try Self.heicWithThumbnail(claiming: PixelSize(width: 48, height: 48))
        let info = try ImageDecoder().probe(Data(bytes))
        #expect(info.thumbnailSizes == [PixelSize(width: 48, height: 48)])
        guard case .decoding(.codec(.heic, let message))? = Self.outcome(bytes) else {
            Issue.record("lying thumbnail: \(String(describing: Self.outcome(bytes)))")
            return
        }
        #expect(message.contains("48x48"), "\(message)")
    }

    @Test("a thumbnail item claiming more than the image is ignored: the image itself is decoded")
    func oversizedThumbnail() throws {
        let bytes = try Self.heicWithThumbnail(claiming: PixelSize(width: 30_000, height: 30_000))
        #expect(try ImageDecoder().probe(Data(bytes)).thumbnailSizes == [])
        #expect(Self.outcome(bytes) == nil)
    }

    @Test("the box reader: clipped boxes mean truncation, malformed sizes end the walk")
    func boxReader() {
        let ftyp: [UInt8] = [0, 0, 0, 16] + Array("ftypavif".utf8) + [0, 0, 0, 0]
        let meta: [UInt8] = [0, 0, 0, 40] + Array("meta".utf8) + [0, 0, 0, 0]
        #expect(ftyp.withUnsafeBytes { HEIFBoxes.isTruncated($0) } == false)
        #expect((ftyp + meta).withUnsafeBytes { HEIFBoxes.isTruncated($0) })        // meta declares 40 bytes, has 12
        #expect((ftyp + [0, 0, 0]).withUnsafeBytes { HEIFBoxes.isTruncated($0) })   // a cut header
        #expect((ftyp + [0, 0, 0, 4] + Array("free".utf8)).withUnsafeBytes { HEIFBoxes.isTruncated($0) } == false)
        let large: [UInt8] = [0, 0, 0, 1] + Array("mdat".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect((ftyp + large).withUnsafeBytes { HEIFBoxes.isTruncated($0) })
        #expect(meta.withUnsafeBytes { HEIFBoxes.itemCount(in: $0) } == nil)
    }
}
