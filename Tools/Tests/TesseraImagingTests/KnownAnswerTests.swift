import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// Values that must never change silently: entity ids derived with `UUID(hashing:)`, the pixel checksum
/// stored in every table entry, and the table file format itself. A change to any of them turns every
/// user's existing cache into misses (or damage), so each is pinned to known answers here.
@Suite("known answers")
struct KnownAnswerTests {
    @Test("UUID(hashing:) gives the same ids on every machine and in every version", arguments: [
        ("", "C3817C01-6BA4-8F30-9FE5-293C33A4160F"),
        ("a", "5F29C2AA-DD9B-8527-AD5D-DEA525AF4E7F"),
        ("https://example.com/avatars/42.jpg", "C04E298C-7192-8D33-BB6F-E57446B47652"),
        ("ümlaut ✓", "B5543F16-D47A-8635-ADE2-7ABC7CDD4E64"),
    ])
    func uuidHashing(input: String, expected: String) {
        #expect(UUID(hashing: input).uuidString == expected)
    }

    @Test("the pixel checksum of known bytes")
    func pixelChecksum() {
        let counts = [8, 64, 4096]
        let sums = counts.map { count in
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 64)
            defer { bytes.deallocate() }
            for i in 0..<count { bytes.storeBytes(of: UInt8(truncatingIfNeeded: i &* 31 &+ 7), toByteOffset: i, as: UInt8.self) }
            return PixelChecksum.hash(bytes, count: count)
        }
        #expect(sums == [0xe197_d435_6e1f_1ec5, 0xbc20_c5ea_ff4d_96db, 0xdf2f_8093_f2cd_06a8])
    }

    /// `Tests/Fixtures/table-v1/known.tesseratable`: format `known: 8x8 bgra32 ×4`, two entries with the
    /// ids below, pixels `fixturePixel(entry, x, y)`, written once with `ImageTable.store` by table format version 1
    /// (the file header's version). It is opened from a copy: opening may write the file.
    static let format = ImageFormat(name: "known", style: .bgra32, size: PixelSize(width: 8, height: 8), maximumCount: 4)
    static let entries = [(UUID(hashing: "known-entity-1"), UUID(hashing: "known-source-1")),
                          (UUID(hashing: "known-entity-2"), UUID(hashing: "known-source-2"))]

    static func fixturePixel(_ entry: Int, _ x: Int, _ y: Int) -> [UInt8] {
        [UInt8(x * 30), UInt8(y * 30), UInt8(entry * 100 + 20), 255]
    }

    @Test("a table file written by an earlier version opens, verifies clean and returns its pixels")
    func checkedInTable() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/table-v1/known.tesseratable")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("known-table-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: source, to: directory.appendingPathComponent(Self.format.fileName))
        let table = try ImageTable(format: Self.format, directory: directory)
        #expect(table.verify().isClean)
        for (index, (entity, sourceID)) in Self.entries.enumerated() {
            let image = try #require(table.image(for: entity, sourceID: sourceID), "entry \(index) is a hit")
            for (x, y) in [(0, 0), (7, 0), (3, 5), (7, 7)] {
                #expect(image.pixel(x: x, y: y) == Self.fixturePixel(index, x, y))
            }
        }
    }
}
