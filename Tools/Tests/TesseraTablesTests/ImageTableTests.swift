import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@_spi(Internal) @testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Image table basics")
struct ImageTableTests {
    typealias P = TablePattern

    @Test("format sizes: 100×100 bgra32 ×500")
    func formatArithmetic() {
        let f = P.format(width: 100, height: 100, count: 500)
        #expect(f.bytesPerRow == 448)
        #expect(f.bytesPerEntry == 45_056)
        #expect(f.headerBytes == 36_864)
        #expect(f.maximumBytesOnDisk == 22_564_864)
        #expect(f.layout == BitmapLayout(width: 100, height: 100, style: .bgra32))
        #expect(P.format(width: 32, height: 32).bytesPerEntry == 4096)
    }

    @Test("invalid formats are typed errors")
    func invalidFormat() {
        let dir = TemporaryDirectory()
        for bad in [P.format("a/b"), P.format(".."), P.format("x", count: 0), P.format("x", width: 0)] {
            let failure = P.storageFailure { _ = try ImageTable(format: bad, directory: dir.url) }
            guard case .invalidFormat = failure else { Issue.record("\(bad) gave \(String(describing: failure))"); continue }
        }
    }

    @Test("entries persist across close and reopen, byte for byte")
    func persistence() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 10)
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            for k in 0..<6 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
        }
        let table = try ImageTable(format: format, directory: dir.url)
        #expect(Set(table.entityIDs) == Set((0..<6).map { P.id($0) }))
        for k in 0..<6 {
            let image = try #require(table.image(for: P.id(k), sourceID: P.id(k, kind: 0x50)))
            #expect(P.isExact(image))
            #expect(image.sourceID == P.id(k, kind: 0x50))
            #expect(image.baseAddress.load(as: UInt8.self) == image.pixel(x: 0, y: 0)[0])
        }
        #expect(table.image(for: P.id(99)) == nil)
        #expect(table.verify().isClean)
    }

    @Test("least recently used entries are replaced first, also after reopening")
    func lruOrder() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 4)
        let s = P.id(0, kind: 0x50)
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            for k in 0..<4 { try P.store(table, P.id(k), s) }       // 0 1 2 3
            #expect(table.image(for: P.id(0)) != nil)                 // touch 0, then 1
            #expect(table.image(for: P.id(1)) != nil)
            #expect(table.recencyOrder == [P.id(1), P.id(0), P.id(3), P.id(2)])
            try P.store(table, P.id(4), s)                            // evicts 2
            #expect(!table.contains(entityID: P.id(2)))
            #expect(table.contains(entityID: P.id(3)))
        }
        let table = try ImageTable(format: format, directory: dir.url)   // recency persisted
        try P.store(table, P.id(5), s)                                    // evicts 3
        #expect(Set(table.entityIDs) == Set([0, 1, 4, 5].map { P.id($0) }))
        try P.store(table, P.id(6), s)                                    // evicts 0
        #expect(Set(table.entityIDs) == Set([1, 4, 5, 6].map { P.id($0) }))
    }

    @Test("live entries are never overwritten; a full live table throws allEntriesInUse")
    func liveEntries() throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: P.format(count: 3), directory: dir.url)
        var held: [TableImage] = []
        for k in 0..<3 { held.append(try P.store(table, P.id(k), P.id(k, kind: 0x50))) }
        let snapshots = held.map { image in image.withUnsafeBytes { Array($0) } }
        let failure = P.storageFailure { try P.store(table, P.id(10), P.id(10, kind: 0x50)) }
        #expect(failure == .allEntriesInUse(format: "t"))
        // A hit on a held entry adds a second reference to the same slot.
        let again = try #require(table.image(for: P.id(1)))
        #expect(again.slot == held[1].slot)
        held.remove(at: 0)
        try P.store(table, P.id(10), P.id(10, kind: 0x50))   // replaces entity 0, the only unreferenced one
        #expect(!table.contains(entityID: P.id(0)))
        for (image, bytes) in zip(held, snapshots.dropFirst()) {
            #expect(image.withUnsafeBytes { Array($0) } == bytes)
            #expect(P.isExact(image))
        }
        // Deleting or replacing a held entry leaves its pixels alone too; a delete says whether there was an entry.
        #expect(table.delete(entityID: P.id(1)))
        #expect(!table.delete(entityID: P.id(1)), "deleted already")
        try P.store(table, P.id(2), P.id(77, kind: 0x50))
        #expect(held[0].withUnsafeBytes { Array($0) } == snapshots[1])
        #expect(held[1].withUnsafeBytes { Array($0) } == snapshots[2])
        #expect(table.usage.entryCount <= 3)
        _ = again
    }

    @Test("the count limit is never exceeded")
    func countLimit() throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: P.format(count: 8), directory: dir.url)
        for k in 0..<50 {
            try P.store(table, P.id(k), P.id(k, kind: 0x50))
            #expect(table.usage.entryCount <= 8)
        }
        let usage = table.usage
        #expect(usage.entryCount == 8)
        #expect(usage.slotsInFile <= 8)
        #expect(usage.fileSize <= P.format(count: 8).maximumBytesOnDisk)
        #expect(Set(table.entityIDs) == Set((42..<50).map { P.id($0) }))
    }

    @Test("a changed source id is a miss and frees the stale entry")
    func sourceChange() throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: P.format(), directory: dir.url)
        let (e, s1, s2) = (P.id(1), P.id(1, kind: 0x51), P.id(1, kind: 0x52))
        try P.store(table, e, s1)
        #expect(table.contains(entityID: e, sourceID: s1))
        #expect(!table.contains(entityID: e, sourceID: s2))
        #expect(table.image(for: e, sourceID: s2) == nil)
        #expect(table.image(for: e, sourceID: s1) == nil, "the stale entry was dropped")
        try P.store(table, e, s2)
        #expect(try #require(table.image(for: e, sourceID: s2)).sourceID == s2)
    }

    @Test("delete, reset and usage numbers")
    func deleteResetUsage() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 20)
        let table = try ImageTable(format: format, directory: dir.url)
        var usage = table.usage
        #expect(usage.entryCount == 0)
        #expect(usage.fileSize == format.headerBytes)
        #expect(usage.capacity == 20 && usage.bytesPerEntry == 4096 && usage.bytesPerRow == 128)
        for k in 0..<5 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
        usage = table.usage
        #expect(usage.entryCount == 5)
        #expect(usage.fileSize == format.headerBytes + usage.slotsInFile * 4096)
        #expect(usage.bytesOnDisk >= 5 * 4096)
        table.delete(entityID: P.id(2))
        #expect(table.image(for: P.id(2)) == nil)
        #expect(table.usage.entryCount == 4)
        try P.store(table, P.id(9), P.id(9, kind: 0x50))
        #expect(try #require(table.image(for: P.id(9))).slot == 2, "the freed slot is reused first")
        try table.reset()
        #expect(table.entityIDs.isEmpty)
        #expect(table.usage.fileSize == format.headerBytes)
        #expect(table.image(for: P.id(0)) == nil)
        try P.store(table, P.id(0), P.id(0, kind: 0x50))
        #expect(P.isExact(try #require(table.image(for: P.id(0)))))
    }

    @Test("a throwing draw leaves no entry and frees the slot")
    func throwingDraw() throws {
        struct Boom: Error {}
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: P.format(count: 1), directory: dir.url)
        #expect(throws: Boom.self) { try table.store(entityID: P.id(1), sourceID: P.id(1)) { _ in throw Boom() } }
        #expect(!table.contains(entityID: P.id(1)))
        try P.store(table, P.id(2), P.id(2, kind: 0x50))   // the only slot is free again
        #expect(table.contains(entityID: P.id(2)))
    }

    @Test("draw gets zeroed pixels in a reused slot too, and the file holds exactly what it left")
    func drawStartsZeroed() throws {
        let dir = TemporaryDirectory()
        let format = P.format(width: 20, height: 3, count: 1)   // 80 bytes of pixels a row, padded to 128
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            try table.store(entityID: P.id(1), sourceID: P.id(1)) { view in
                memset(view.baseAddress, 0xAB, view.layout.byteCount)   // every byte, the padding too
            }
            var sawOnlyZeros = false
            try table.store(entityID: P.id(2), sourceID: P.id(2)) { view in   // the only slot, evicted and reused
                let bytes = UnsafeRawBufferPointer(start: view.baseAddress, count: view.layout.byteCount)
                sawOnlyZeros = bytes.allSatisfy { $0 == 0 }
                view.row(1).storeBytes(of: 0x1122_3344, as: UInt32.self)   // one pixel of the middle row
            }
            #expect(sawOnlyZeros)
        }
        // Reopened, so the bytes come from the file.
        let table = try ImageTable(format: format, directory: dir.url)
        let image = try #require(table.image(for: P.id(2), sourceID: P.id(2)))
        image.withUnsafeBytes { bytes in
            let rowBytes = image.layout.bytesPerRow
            for (i, byte) in bytes.enumerated() {
                let expected: UInt8 = i >= rowBytes && i < rowBytes + 4 ? [0x44, 0x33, 0x22, 0x11][i - rowBytes] : 0
                if byte != expected { Issue.record("byte \(i) is \(byte), not \(expected)"); return }
            }
        }
        #expect(table.image(for: P.id(1)) == nil)
    }

    @Test("default directory follows XDG_CACHE_HOME or ~/.cache")
    func defaultDirectory() {
        let url = ImageTable.defaultDirectory(appName: "demo")
        #expect(url.path.hasSuffix("/demo/ImageTables"))
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            #expect(url.path.hasPrefix(xdg))
        } else {
            #expect(url.path.contains("/.cache/demo/"))
        }
    }
}
