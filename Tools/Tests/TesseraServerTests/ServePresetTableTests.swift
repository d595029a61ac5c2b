import Foundation
import Testing
@_spi(Internal) import Tessera
@testable @_spi(Testing) import TesseraServer
import TesseraTestSupport

/// What a preset's table slot holds survives restarts and never leaks another image's pixels: presets of
/// opposite shapes, `fill` with `fit`, both request orders, a restart in between, and slot records that
/// were tampered with.
@Suite("tessera serve, preset tables across restarts")
struct ServePresetTableTests {
    /// Six sources of different shapes and colours (a wrong crop shows as another image's colours).
    static let photos: [(name: String, width: Int, height: Int)] = [
        ("wide.jpg", 480, 240), ("tall.jpg", 240, 480), ("landscape.jpg", 400, 300),
        ("portrait.jpg", 300, 400), ("square.jpg", 320, 320), ("panorama.jpg", 900, 200),
    ]

    /// A fixture whose root holds ``photos``, each a distinct pattern.
    static func fixture() throws -> ServeFixture {
        let fixture = try ServeFixture()
        for (index, photo) in photos.enumerated() {
            try Data(try JPEGEncoder(quality: 92).encode(try pattern(width: photo.width, height: photo.height, seed: index)))
                .write(to: fixture.root.appendingPathComponent(photo.name))
        }
        return fixture
    }

    /// Stripes and a gradient whose colours depend on `seed`.
    static func pattern(width: Int, height: Int, seed: Int) throws -> Bitmap {
        Bitmap(width: width, height: height, style: .bgra32) { view in
            for y in 0..<height {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let stripe = (x / 24 + y / 24 + seed) % 2 == 0
                    row[x * 4] = UInt8((seed * 47 + x * 200 / width) % 256)
                    row[x * 4 + 1] = stripe ? UInt8((seed * 91) % 256) : UInt8(255 - (seed * 91) % 256)
                    row[x * 4 + 2] = UInt8((seed * 23 + y * 200 / height) % 256)
                    row[x * 4 + 3] = 255
                }
            }
        }
    }

    /// The size a source of `width`×`height` has in `preset`, computed here, independently of the server.
    static func expectedSize(_ width: Int, _ height: Int, in preset: ServerConfiguration.Preset) -> PixelSize {
        let box = (width: preset.processing.width!, height: preset.processing.height!)
        guard preset.processing.mode == .fit else { return PixelSize(width: box.width, height: box.height) }
        let scale = min(Double(box.width) / Double(width), Double(box.height) / Double(height))
        return PixelSize(width: max(1, Int((Double(width) * scale).rounded())), height: max(1, Int((Double(height) * scale).rounded())))
    }

    /// Asks for every photo in each preset of `order` and checks each answer's size against arithmetic
    /// done here and its pixels against a fresh render of its source by the library (the same recipe, no
    /// table; another image's pixels in a slot measure 9–16 dB); returns the answers' `X-Tessera-Cache` values.
    @discardableResult
    static func checkAll(port: Int, fixture: ServeFixture, presets: [ServerConfiguration.Preset], order: [String]) async throws -> [String] {
        var outcomes: [String] = []
        for name in order {
            let preset = try #require(presets.first { $0.name == name })
            for photo in photos {
                let response = try await RawHTTP.get(port: port, "/v1/\(name)/\(photo.name)?fmt=png")
                #expect(response.status == 200, "\(name)/\(photo.name)")
                let size = expectedSize(photo.width, photo.height, in: preset)
                let answer = try ImageDecoder().decode(Data(response.body))
                #expect(answer.layout.size == size, "\(name)/\(photo.name): \(answer.layout.size), expected \(size)")
                guard answer.layout.size == size else { continue }
                let source = try Data(contentsOf: fixture.root.appendingPathComponent(photo.name))
                let reference = try ImageDecoder().render(source, processing: preset.processing)
                let psnr = psnr(answer, reference)
                #expect(psnr > 40, "\(name)/\(photo.name): \(psnr) dB against a fresh render")
                outcomes.append(response.headers["x-tessera-cache"] ?? "")
            }
        }
        return outcomes
    }

    static let opposite: [ServerConfiguration.Preset] = [.init(name: "a", width: 300, height: 100, mode: .fit),
                                                         .init(name: "b", width: 100, height: 300, mode: .fit)]
    static let fillAndFit: [ServerConfiguration.Preset] = [.init(name: "f", width: 120, height: 120, mode: .fill),
                                                           .init(name: "t", width: 300, height: 100, mode: .fit)]

    @Test("two presets, both orders, a restart in between",
          arguments: [(opposite, ["a", "b"]), (opposite, ["b", "a"]), (fillAndFit, ["f", "t"]), (fillAndFit, ["t", "f"])])
    func presetsAnswerTheSameAfterARestart(presets: [ServerConfiguration.Preset], order: [String]) async throws {
        let fixture = try Self.fixture()
        let configuration = fixture.configuration { $0.presets = presets }
        try await fixture.withServer(configuration) { port, _ in
            let outcomes = try await Self.checkAll(port: port, fixture: fixture, presets: presets, order: order)
            #expect(outcomes.allSatisfy { $0 == "produced" })
        }
        // The same tables, the other order: every answer comes from a table and is still right.
        try await fixture.withServer(configuration) { port, server in
            let outcomes = try await Self.checkAll(port: port, fixture: fixture, presets: presets, order: order.reversed())
            #expect(outcomes.count == Self.photos.count * presets.count)
            #expect(outcomes.allSatisfy { $0 == "table" })
            #expect(server.service.statistics.decodes == 0)
        }
    }

    /// A slot record that does not verify (signed for another size, or a size beyond the slot) is a miss:
    /// the entry is rebuilt from its source and the answer is right.
    @Test(arguments: ["digest", "bounds"])
    func aTamperedSlotRecordIsRebuiltNotServed(tampering: String) async throws {
        let fixture = try Self.fixture()
        let configuration = fixture.configuration { $0.presets = Self.opposite }
        let preset = Self.opposite[0]
        let photo = Self.photos[3]   // portrait 300×400: 75×100 in a 300×100 box
        try await fixture.withServer(configuration) { port, _ in
            let first = try await RawHTTP.get(port: port, "/v1/a/\(photo.name)")
            #expect(first.status == 200)
        }
        // With the server gone, overwrite the entry through the table's own store (so its checksum and
        // commit word are valid), with garbage pixels and a lying record.
        do {
            let table = try PresetTable(preset, capacity: configuration.tableCapacity, directory: fixture.tables, observability: .default)
            let file = PresetTable.Source(try RootDirectory(fixture.root.path, recheckSeconds: 0).file(photo.name))
            let sourceID = table.sourceID(of: file)
            try table.table.store(entityID: PresetTable.entityID(of: file), sourceID: sourceID) { slot in
                for index in 0..<slot.bytes.count { slot.bytes[index] = UInt8(truncatingIfNeeded: index * 31) }
                let record = tampering == "digest"
                    ? SlotRecord(content: PixelSize(width: 300, height: 100))   // signed below for the true size
                    : SlotRecord(content: PixelSize(width: 300, height: 101))   // one row past the box, validly signed
                record.write(to: slot.row(table.slot.height), sourceID: sourceID, box: table.slot,
                             digestSize: tampering == "digest" ? PixelSize(width: 75, height: 100) : nil)
            }
        }
        try await fixture.withServer(configuration) { port, server in
            let response = try await RawHTTP.get(port: port, "/v1/a/\(photo.name)?fmt=png")
            #expect(response.status == 200)
            #expect(response.headers["x-tessera-cache"] == "produced")
            #expect(server.service.statistics.decodes == 1)
            let answer = try ImageDecoder().decode(Data(response.body))
            #expect(answer.layout.size == PixelSize(width: 75, height: 100))
            let source = try Data(contentsOf: fixture.root.appendingPathComponent(photo.name))
            let reference = try ImageDecoder().render(source, processing: preset.processing)
            #expect(psnr(answer, reference) > 40)
        }
    }

    @Test func slotRecordsVerifyOnlyForTheirEntryAndInsideTheirBox() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-slot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let preset = ServerConfiguration.Preset(name: "p", width: 64, height: 32, mode: .fit)
        let table = try PresetTable(preset, capacity: 4, directory: directory, observability: .default)
        let source = UUID(hashing: "source"), other = UUID(hashing: "other")
        func entry(_ record: SlotRecord, signedFor sourceID: UUID) throws -> TableImage {
            try table.table.store(entityID: UUID(hashing: "e"), sourceID: source) { slot in
                record.write(to: slot.row(table.slot.height), sourceID: sourceID, box: table.slot)
            }
        }
        let good = try entry(SlotRecord(content: PixelSize(width: 40, height: 32)), signedFor: source)
        #expect(SlotRecord.validate(good, slot: table.slot) == SlotRecord(content: PixelSize(width: 40, height: 32)))
        // The same record read as a slot of another size does not verify.
        #expect(SlotRecord.validate(good, slot: PixelSize(width: 64, height: 31)) == nil)
        #expect(try SlotRecord.validate(entry(SlotRecord(content: PixelSize(width: 40, height: 32)), signedFor: other),
                                        slot: table.slot) == nil)
        #expect(try SlotRecord.validate(entry(SlotRecord(content: PixelSize(width: 65, height: 32)), signedFor: source),
                                        slot: table.slot) == nil)
        #expect(try SlotRecord.validate(entry(SlotRecord(content: PixelSize(width: 0, height: 32)), signedFor: source),
                                        slot: table.slot) == nil)
    }

    @Test("a slot record keeps its decode's integrity, and an integrity byte changed on disk does not verify")
    func slotRecordsKeepTheirIntegrity() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-slot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let preset = ServerConfiguration.Preset(name: "p", width: 64, height: 32, mode: .fill)
        let table = try PresetTable(preset, capacity: 4, directory: directory, observability: .default)
        let source = UUID(hashing: "source")
        for integrity in [DecodeIntegrity.intact, .damaged, .truncated] {
            let record = SlotRecord(content: table.slot, integrity: integrity)
            let stored = try table.table.store(entityID: UUID(hashing: "e-\(integrity)"), sourceID: source) { slot in
                record.write(to: slot.row(table.slot.height), sourceID: source, box: table.slot)
            }
            #expect(SlotRecord.validate(stored, slot: table.slot)?.integrity == integrity)
            // The same record with another integrity byte (a truncated entry passed off as intact, say).
            for other in [DecodeIntegrity.intact, .damaged, .truncated] where other != integrity {
                let forged = try table.table.store(entityID: UUID(hashing: "f-\(integrity)-\(other)"), sourceID: source) { slot in
                    record.write(to: slot.row(table.slot.height), sourceID: source, box: table.slot)
                    slot.row(table.slot.height).storeBytes(of: SlotRecord.code(of: other), toByteOffset: 32, as: UInt8.self)
                }
                #expect(SlotRecord.validate(forged, slot: table.slot) == nil, "\(integrity) relabelled \(other)")
            }
        }
    }
}
