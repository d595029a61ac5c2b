import Foundation
import Testing
@testable import TesseraImaging
@_spi(Internal) @testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Image table robustness")
struct ImageTableRobustnessTests {
    typealias P = TablePattern

    @Test("compaction shrinks the file and keeps every remaining entry exact")
    func compaction() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 600)
        let table = try ImageTable(format: format, directory: dir.url)
        for k in 0..<600 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
        #expect(table.usage.fileSize == format.maximumBytesOnDisk)
        for k in 0..<550 where k % 11 != 0 { table.delete(entityID: P.id(k)) }
        var pinned = Optional(try #require(table.image(for: P.id(590))))   // a live image must not move
        let pinnedSlot = pinned!.slot
        let before = pinned!.withUnsafeBytes { Array($0) }
        let survivors = (0..<600).filter { $0 >= 550 || $0 % 11 == 0 }
        try table.compact()
        #expect(table.usage.entryCount == survivors.count)
        #expect(table.usage.fileSize == format.headerBytes + (pinnedSlot + 1) * format.bytesPerEntry, "the live slot bounds it")
        #expect(pinnedSlot == 590 && pinned!.withUnsafeBytes { Array($0) } == before)
        pinned = nil
        try table.compact()
        let usage = table.usage
        #expect(usage.entryCount == survivors.count)
        #expect(usage.fileSize == format.headerBytes + survivors.count * format.bytesPerEntry)
        #expect(usage.slotsInFile == survivors.count)
        for k in survivors {
            let image = try #require(table.image(for: P.id(k)))
            #expect(P.isExact(image))
            #expect(image.sourceID == P.id(k, kind: 0x50))
            #expect(image.slot < survivors.count)
        }
        try P.store(table, P.id(1000), P.id(1000, kind: 0x50))   // grows again after compaction
        #expect(P.isExact(try #require(table.image(for: P.id(1000)))))
        #expect(table.verify().isClean)
    }

    @Test("compaction result survives reopening")
    func compactionReopen() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 64)
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            for k in 0..<64 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
            for k in 0..<60 { table.delete(entityID: P.id(k)) }
            try table.compact()
            #expect(table.usage.fileSize == format.headerBytes + 4 * format.bytesPerEntry)
        }
        let table = try ImageTable(format: format, directory: dir.url)
        #expect(Set(table.entityIDs) == Set((60..<64).map { P.id($0) }))
        for k in 60..<64 { #expect(P.isExact(try #require(table.image(for: P.id(k))))) }
        #expect(table.verify().isClean)
    }

    @Test("a flipped pixel byte on disk is a miss, and verify names the entry")
    func corruptedPixels() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 8)
        var slot = 0
        var path = ""
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            for k in 0..<5 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
            slot = try #require(table.image(for: P.id(3))).slot
            path = table.path
        }
        let fd = open(path, O_RDWR)
        #expect(fd >= 0)
        let offset = off_t(format.headerBytes + slot * format.bytesPerEntry + 1000)
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, offset) == 1)
        byte ^= 0x10
        #expect(pwrite(fd, &byte, 1, offset) == 1)
        close(fd)

        let table = try ImageTable(format: format, directory: dir.url)
        let report = table.verify()
        #expect(report.damaged.map(\.entityID) == [P.id(3)])
        #expect(report.damaged.first?.slot == slot)
        #expect(report.checkedEntries == 5)
        #expect(table.image(for: P.id(3)) == nil)
        #expect(!table.contains(entityID: P.id(3)), "the damaged entry is dropped")
        for k in [0, 1, 2, 4] { #expect(P.isExact(try #require(table.image(for: P.id(k))))) }
    }

    @Test("a damaged slot header is never served")
    func corruptedHeader() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 8)
        var path = ""
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            for k in 0..<3 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
            path = table.path
        }
        let fd = open(path, O_RDWR)
        var byte: UInt8 = 0
        let offset = off_t(ImageFormat.pageSize + 1 * ImageFormat.slotHeaderSize + 30)   // slot 1's source id
        #expect(pread(fd, &byte, 1, offset) == 1)
        byte ^= 1
        #expect(pwrite(fd, &byte, 1, offset) == 1)
        close(fd)
        let table = try ImageTable(format: format, directory: dir.url)
        #expect(table.image(for: P.id(1)) == nil)
        #expect(table.verify().damaged.map(\.slot) == [1])
        #expect(table.image(for: P.id(0)) != nil && table.image(for: P.id(2)) != nil)
    }

    @Test("a changed format discards the old entries")
    func changedFormat() throws {
        let dir = TemporaryDirectory()
        do {
            let table = try ImageTable(format: P.format("same", count: 8), directory: dir.url)
            for k in 0..<4 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
        }
        for changed in [P.format("same", width: 16, height: 16, count: 8), P.format("same", count: 9),
                        P.format("same", count: 9, style: .bgr32)] {
            let table = try ImageTable(format: changed, directory: dir.url)
            #expect(table.entityIDs.isEmpty)
            #expect(table.image(for: P.id(1)) == nil)
            #expect(table.usage.fileSize == changed.headerBytes)
        }
    }

    @Test("external truncation gives misses, never a crash, and the table recovers")
    func externalTruncation() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 10)
        let table = try ImageTable(format: format, directory: dir.url, fileCheckInterval: .zero)
        for k in 0..<10 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
        #expect(truncate(table.path, off_t(format.headerBytes + 4 * format.bytesPerEntry)) == 0)
        for k in 0..<4 { #expect(P.isExact(try #require(table.image(for: P.id(k))))) }
        for k in 4..<10 { #expect(table.image(for: P.id(k)) == nil) }
        #expect(!table.verify().isClean)
        #expect(truncate(table.path, 100) == 0)                        // even the file header
        for k in 0..<10 { #expect(table.image(for: P.id(k)) == nil) }
        try P.store(table, P.id(20), P.id(20, kind: 0x50))           // re-extends and repairs
        #expect(P.isExact(try #require(table.image(for: P.id(20)))))
        for k in 0..<10 { #expect(table.image(for: P.id(k)) == nil) }
    }

    @Test("truncation inside the check interval: reading a handed-out image does not crash, the table abandons the mapping and recovers")
    func truncationUnderLiveImages() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 10)
        let table = try ImageTable(format: format, directory: dir.url, fileCheckInterval: .seconds(3600))
        for k in 0..<10 { try P.store(table, P.id(k), P.id(k, kind: 0x50)) }
        let held = try #require(table.image(for: P.id(7)))
        #expect(truncate(table.path, off_t(format.headerBytes)) == 0)   // every slot's pixels vanish
        // Without the SIGBUS guard this read would kill the test process.
        let bytes = held.withUnsafeBytes { Array($0) }
        #expect(bytes.allSatisfy { $0 == 0 }, "the vanished page reads as zeros")
        for k in 0..<10 { #expect(table.image(for: P.id(k)) == nil, "a faulted mapping serves nothing") }
        try P.store(table, P.id(30), P.id(30, kind: 0x50))              // remaps the same (locked) file
        #expect(P.isExact(try #require(table.image(for: P.id(30)))))
        #expect(table.verify().isClean)
    }

    @Test("unlinking the file while open: misses, held images stay readable, next store recreates")
    func unlinkWhileOpen() throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: P.format(count: 4), directory: dir.url, fileCheckInterval: .zero)
        let held = try P.store(table, P.id(1), P.id(1, kind: 0x50))
        try P.store(table, P.id(2), P.id(2, kind: 0x50))
        #expect(unlink(table.path) == 0)
        #expect(table.image(for: P.id(2)) == nil)
        #expect(P.isExact(held))
        try P.store(table, P.id(3), P.id(3, kind: 0x50))
        #expect(FileManager.default.fileExists(atPath: table.path))
        #expect(P.isExact(try #require(table.image(for: P.id(3)))))
        #expect(table.image(for: P.id(2)) == nil)
        #expect(P.isExact(held))
        #expect(unlink(table.path) == 0)
        try table.reopen()
        #expect(FileManager.default.fileExists(atPath: table.path))
        #expect(table.entityIDs.isEmpty)
        try table.reopen()   // not unlinked: a no-op, not a self-inflicted lock error
        #expect(P.isExact(held))
    }

    @Test("two instances on one file share it: a store in one is a hit in the other, deletes and replacements too")
    func twoInstancesShare() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 4)
        let a = try ImageTable(format: format, directory: dir.url)
        let b = try ImageTable(format: format, directory: dir.url)
        try P.store(a, P.id(1), P.id(1, kind: 0x51))
        let seen = try #require(b.image(for: P.id(1)))
        #expect(seen.sourceID == P.id(1, kind: 0x51) && P.isExact(seen))
        try P.store(b, P.id(1), P.id(2, kind: 0x51))   // a new version, stored by the other instance
        #expect(a.image(for: P.id(1))?.sourceID == P.id(2, kind: 0x51))
        #expect(P.isExact(seen), "the image held from the first version kept its pixels")
        b.delete(entityID: P.id(1))
        #expect(a.image(for: P.id(1)) == nil)
        #expect(a.verify().isClean && b.verify().isClean)
    }

    @Test("evictions by one instance never touch an image the other holds; a full table of held images refuses the store")
    func evictionRespectsOtherInstancesImages() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 4)
        let a = try ImageTable(format: format, directory: dir.url)
        let b = try ImageTable(format: format, directory: dir.url)
        for k in 0..<4 { try P.store(a, P.id(k), P.id(k, kind: 0x51)) }
        var held = try (0..<4).map { try #require(b.image(for: P.id($0))) }   // every entry held by the other instance
        #expect(P.storageFailure { try P.store(a, P.id(9), P.id(9, kind: 0x51)) } == .allEntriesInUse(format: format.name))
        held.removeLast(2)
        #expect(b.image(for: P.id(0)) != nil)   // any call of the holder releases the pins it no longer needs
        for k in 10..<14 { try P.store(a, P.id(k), P.id(k, kind: 0x51)) }
        #expect(held.allSatisfy(P.isExact), "held images kept their pixels")
        #expect(Set(held.map(\.entityID)) == [P.id(0), P.id(1)])
        #expect(a.image(for: P.id(0)) != nil && a.image(for: P.id(1)) != nil, "held entries were not evicted")
        #expect(a.entityIDs.count == 4 && b.entityIDs.count == 4)
    }

    @Test("file protection is applied to the table file")
    func protection() throws {
        let dir = TemporaryDirectory()
        var format = P.format(count: 2)
        format.protection = .ownerWriteGroupRead
        let table = try ImageTable(format: format, directory: dir.url.appendingPathComponent("sub"))
        var st = stat()
        #expect(stat(table.path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o640)
        #expect(stat(dir.url.appendingPathComponent("sub").path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700)
    }
}
