import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@_spi(Internal) @testable import TesseraTables
import Tessera
import TesseraTestSupport

/// ThumbHashes kept beside table entries (`ImageFormat.storesThumbHash`): computed from the stored pixels,
/// answered without the pixels, across reopening, refused when tampered with or left by another entry,
/// and through `ImageCache.cachedPlaceholder(for:format:)`.
@Suite("image tables: ThumbHash beside each entry")
struct ImageTableThumbHashTests {
    typealias P = TablePattern

    static func format(_ name: String = "h", width: Int = 64, height: Int = 48, count: Int = 4) -> ImageFormat {
        ImageFormat(name: name, family: "test", style: .bgra32, size: PixelSize(width: width, height: height),
                    maximumCount: count, storesThumbHash: true)
    }

    @Test("the stored hash is the hash of the stored pixels, and it survives reopening")
    func storedAndReopened() throws {
        let dir = TemporaryDirectory()
        let format = Self.format()
        let expected: ThumbHash
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            let image = try P.store(table, P.id(1), P.id(1, kind: 0x50))
            expected = try ThumbHash(image: image)
            #expect(table.thumbHash(for: P.id(1)) == expected)
            #expect(table.thumbHash(for: P.id(1), sourceID: P.id(1, kind: 0x50)) == expected)
            #expect(table.thumbHash(for: P.id(1), sourceID: P.id(2, kind: 0x50)) == nil, "another source is a miss")
            #expect(table.thumbHash(for: P.id(2)) == nil)
        }
        let table = try ImageTable(format: format, directory: dir.url)
        #expect(table.thumbHash(for: P.id(1)) == expected)
        #expect(table.verify().isClean)
    }

    @Test("entries larger than 100 pixels are hashed from their box average")
    func largeEntry() throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: Self.format(width: 300, height: 200), directory: dir.url)
        let image = try P.store(table, P.id(1), P.id(1, kind: 0x50))
        #expect(table.thumbHash(for: P.id(1)) == (try ThumbHash(image: image)))
    }

    @Test("a format without hashes answers nil, and its table is not reused by a format with them")
    func formatFlag() throws {
        let dir = TemporaryDirectory()
        var plain = Self.format()
        plain.storesThumbHash = false
        #expect(plain.bytesPerEntry == 12_288 && Self.format().bytesPerEntry == 16_384,
                "64×48 bgra32 is 12,288 bytes: exactly 3 pages, so the hash needs a fourth")
        do {
            let table = try ImageTable(format: plain, directory: dir.url)
            try P.store(table, P.id(1), P.id(1, kind: 0x50))
            #expect(table.thumbHash(for: P.id(1)) == nil)
        }
        let hashed = try ImageTable(format: Self.format(), directory: dir.url)
        #expect(hashed.image(for: P.id(1)) == nil, "the file was written without hashes: discarded, not misread")
        #expect(hashed.thumbHash(for: P.id(1)) == nil)
        #expect(ImageTable.existingFormats(in: dir.url).first?.storesThumbHash == true)
    }

    @Test("a tampered hash is refused, and a slot reused by another entity never shows the old hash")
    func tamperedAndReused() throws {
        let dir = TemporaryDirectory()
        let format = Self.format(count: 1)
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            try P.store(table, P.id(1), P.id(1, kind: 0x50))
        }
        // Slot 0's hash area follows its pixels: headerBytes + 0 × bytesPerEntry + bytesPerRow × height.
        let file = dir.url.appendingPathComponent(format.fileName)
        let handle = try FileHandle(forUpdating: file)
        try handle.seek(toOffset: UInt64(format.headerBytes + format.layout.byteCount + 3))
        let byte = try #require(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: UInt64(format.headerBytes + format.layout.byteCount + 3))
        try handle.write(contentsOf: [byte ^ 0x5A])
        try handle.close()
        let table = try ImageTable(format: format, directory: dir.url)
        #expect(table.thumbHash(for: P.id(1)) == nil, "a hash whose checksum fails is not answered")
        // The only slot is reused by entity 2: its hash is its own.
        let image = try P.store(table, P.id(2), P.id(2, kind: 0x50))
        #expect(table.thumbHash(for: P.id(1)) == nil)
        #expect(table.thumbHash(for: P.id(2)) == (try ThumbHash(image: image)))
    }

    @Test("ImageCache fills keep the hash; cachedPlaceholder answers it for the entity's current source")
    func cachePlaceholder() async throws {
        let dir = try temporaryDirectory("cache-placeholder")
        let photo = dir.appendingPathComponent("photo.png")
        try Data(try Quadrants.png()).write(to: photo)
        let format = ImageFormat(name: "cells", family: "grid", style: .bgra32, size: PixelSize(width: 40, height: 40),
                                 maximumCount: 8, storesThumbHash: true)
        let cache = try ImageCache(formats: [format], directory: dir.appendingPathComponent("tables"), provider: FileSourceImageProvider())
        let user = User("ann", url: photo)
        #expect(cache.cachedPlaceholder(for: user, format: format) == nil)
        let image = try await cache.image(for: user, format: format)
        let hash = try #require(cache.cachedPlaceholder(for: user, format: format))
        #expect(hash == (try ThumbHash(image: image)))
        // The placeholder's colours follow the picture: red at the top left, white at the bottom right.
        let small = hash.placeholder()
        let topLeft = small.pixel(x: 0, y: 0), bottomRight = small.pixel(x: small.width - 1, y: small.height - 1)
        #expect(topLeft[2] > topLeft[0] + 60 && topLeft[2] > topLeft[1] + 60, "\(topLeft)")
        #expect(bottomRight.prefix(3).allSatisfy { $0 > 150 }, "\(bottomRight)")
        #expect(cache.cachedPlaceholder(for: User("ann", url: dir.appendingPathComponent("other.png")), format: format) == nil,
                "another source image is not answered with this one's hash")
    }
}
