import Foundation
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// Table files that were tampered with, replaced or made inaccessible, and a file system that
/// refuses to grow. Regressions for what `scripts/fuzz table` and the disk-full runs found.
@Suite("Image table: hostile files, permissions, disk full")
struct ImageTableHostileFileTests {
    typealias P = TablePattern

    static let isRoot = getuid() == 0

    /// Rewrites slot `slot`'s 64-byte header in the closed table file through `edit`.
    static func editSlotHeader(_ format: ImageFormat, in dir: URL, slot: Int, _ edit: (SlotHeader) -> Void) throws {
        let fd = open(dir.appendingPathComponent(format.fileName).path, O_RDWR)
        try #require(fd >= 0)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: ImageFormat.slotHeaderSize)
        let offset = off_t(ImageFormat.pageSize + slot * ImageFormat.slotHeaderSize)
        try #require(pread(fd, &bytes, bytes.count, offset) == bytes.count)
        bytes.withUnsafeMutableBytes { edit(SlotHeader(pointer: $0.baseAddress!, slot: slot)) }
        try #require(pwrite(fd, bytes, bytes.count, offset) == bytes.count)
    }

    static func ioErrno(_ body: () throws -> Void) -> Int32? {
        do { try body() } catch let error as TesseraError {
            if case .io(_, _, let code) = error.reason { return code }
        } catch {}
        return nil
    }

    @Test("fuzz regression: a last-access time of 2⁶⁴−1 (outside the commit word) opens, keeps the entry")
    func lastAccessOverflow() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 4)
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            try P.store(table, P.id(1), P.id(1, kind: 0x50))
            try P.store(table, P.id(2), P.id(2, kind: 0x50))
        }
        try Self.editSlotHeader(format, in: dir.url, slot: 0) { $0.lastAccess = .max }
        let table = try ImageTable(format: format, directory: dir.url)   // must not trap: clock = max + 1
        #expect(P.isExact(try #require(table.image(for: P.id(1)))))
        try P.store(table, P.id(3), P.id(3, kind: 0x50))
        #expect(Set(table.entityIDs) == [P.id(1), P.id(2), P.id(3)])
        #expect(table.verify().isClean)
    }

    @Test("a forged header with a valid commit word and generation 2⁶⁴−1 is damage, not a trap")
    func forgedGeneration() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 4)
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            try P.store(table, P.id(1), P.id(1, kind: 0x50))
            try P.store(table, P.id(2), P.id(2, kind: 0x50))
        }
        try Self.editSlotHeader(format, in: dir.url, slot: 1) { h in
            h.commit(entityID: h.entityID, sourceID: h.sourceID, generation: .max, pixelChecksum: h.pixelChecksum, lastAccess: .max)
        }
        let table = try ImageTable(format: format, directory: dir.url)
        #expect(table.image(for: P.id(2)) == nil)
        #expect(P.isExact(try #require(table.image(for: P.id(1)))))
        #expect(table.verify().damaged.map(\.reason) == ["slot generation out of range"])
        try P.store(table, P.id(4), P.id(4, kind: 0x50))   // the clock keeps working
        #expect(P.isExact(try #require(table.image(for: P.id(4)))))
    }

    @Test("a header page with a valid checksum but absurd sizes is not a format (no overflow), and is replaced on open")
    func absurdHeader() throws {
        let dir = TemporaryDirectory()
        let format = P.format("absurd", count: 4)
        var page = TableFileHeader.encode(format)
        page.withUnsafeMutableBytes { p in
            p.storeBytes(of: UInt32.max, toByteOffset: 20, as: UInt32.self)
            p.storeBytes(of: UInt32.max, toByteOffset: 24, as: UInt32.self)
            p.storeBytes(of: UInt64.max, toByteOffset: 40, as: UInt64.self)
            p.storeBytes(of: PixelChecksum.hash(p.baseAddress!, count: 4088), toByteOffset: 4088, as: UInt64.self)
        }
        #expect(TableFileHeader.decode(page) == nil)   // must not trap converting or multiplying these
        try Data(page).write(to: dir.url.appendingPathComponent(format.fileName))
        #expect(ImageTable.existingFormats(in: dir.url).isEmpty)
        let table = try ImageTable(format: format, directory: dir.url)
        #expect(table.entityIDs.isEmpty)
        try P.store(table, P.id(1), P.id(1, kind: 0x50))
        #expect(table.verify().isClean)
    }

    @Test("a table file whose header names another table is not listed as that table")
    func headerNamesAnotherFile() throws {
        let dir = TemporaryDirectory()
        try Data(TableFileHeader.encode(P.format("other", count: 4))).write(to: dir.url.appendingPathComponent("liar.tesseratable"))
        try Data(TableFileHeader.encode(P.format("honest", count: 4))).write(to: dir.url.appendingPathComponent("honest.tesseratable"))
        #expect(ImageTable.existingFormats(in: dir.url).map(\.name) == ["honest"])
    }

    @Test("a table path replaced by a symlink: typed ELOOP, the link's target untouched (also as root)")
    func symlinkedTable() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 4)
        let victim = dir.url.appendingPathComponent("precious.txt")
        try Data("do not truncate me".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(atPath: dir.url.appendingPathComponent(format.fileName).path,
                                                   withDestinationPath: victim.path)
        #expect(Self.ioErrno { _ = try ImageTable(format: format, directory: dir.url) } == ELOOP)
        #expect(try Data(contentsOf: victim) == Data("do not truncate me".utf8))
    }

    @Test("a table path that is a directory or a FIFO: typed error, no hang (also as root)")
    func notARegularFile() throws {
        let dir = TemporaryDirectory()
        let a = P.format("a", count: 4), b = P.format("b", count: 4)
        try FileManager.default.createDirectory(at: dir.url.appendingPathComponent(a.fileName), withIntermediateDirectories: false)
        #expect(Self.ioErrno { _ = try ImageTable(format: a, directory: dir.url) } == EISDIR)
        #expect(mkfifo(dir.url.appendingPathComponent(b.fileName).path, 0o600) == 0)
        #expect(Self.ioErrno { _ = try ImageTable(format: b, directory: dir.url) } == EINVAL)
    }

    @Test("an unreadable table file (chmod 000): typed EACCES, and the file keeps its entries",
          .enabled(if: !isRoot, "root bypasses file permissions; the symlink, directory and RLIMIT_FSIZE tests cover root"))
    func unreadableTable() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 4)
        do { try P.store(try ImageTable(format: format, directory: dir.url), P.id(1), P.id(1, kind: 0x50)) }
        let path = dir.url.appendingPathComponent(format.fileName).path
        #expect(chmod(path, 0) == 0)
        #expect(Self.ioErrno { _ = try ImageTable(format: format, directory: dir.url) } == EACCES)
        #expect(chmod(path, 0o600) == 0)
        #expect(P.isExact(try #require(try ImageTable(format: format, directory: dir.url).image(for: P.id(1)))))
    }

    @Test("a file that cannot grow (RLIMIT_FSIZE, in a child process): typed EFBIG, earlier entries intact after reopen")
    func fileSizeLimit() throws {
        let dir = TemporaryDirectory()
        let child = try StressChild(arguments: ["--dir", dir.url.path, "--fill", "--rlimit"])
        let output = child.allLines()
        #expect(child.finish() == 0, "\(output)")
        #expect(output.last?.hasPrefix("fill stored=8 error=ftruncate") == true, "\(output)")
        #expect(output.last?.contains("errno \(EFBIG)") == true)
    }

    @Test("many tasks on shared tables in a child process: invariants hold throughout (short load run)")
    func shortLoad() throws {
        let dir = TemporaryDirectory()
        let child = try StressChild(arguments: ["--dir", dir.url.path, "--load", "--operations", "400", "--tasks", "4"])
        let output = child.allLines()
        #expect(child.finish() == 0, "\(output)")
        let report = try #require(output.first { $0.hasPrefix("load ") })
        #expect(report.contains("wrong=0") && report.contains("ops=1600"), "\(report)")
        #expect(output.filter { $0.hasPrefix("verify ") && $0.hasSuffix("clean") }.count == 2, "\(output)")
    }
}
