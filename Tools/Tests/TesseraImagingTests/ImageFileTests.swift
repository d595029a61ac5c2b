import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TesseraImaging
import TesseraTestSupport

/// `ImageFile`: one open and one `fstat` for a file's size, modification time and bytes.
@Suite("image files read through one descriptor")
struct ImageFileTests {
    @Test("size, bytes and the modification date are FileManager's, to the bit")
    func agreesWithFileManager() throws {
        let directory = try temporaryDirectory("image-file")
        // Modification times with nanoseconds of every kind: set explicitly, and as the file system gives them.
        let times: [(Int, Int)] = [(1_700_000_000, 0), (1_700_000_000, 1), (1_234_567_890, 123_456_789),
                                   (2_000_000_000, 999_999_999), (978_307_200, 500_000_000), (86_400, 7)]
        var paths: [String] = []
        for (index, time) in times.enumerated() {
            let path = directory.appendingPathComponent("t\(index).bin").path
            try Data((0..<(index * 997 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: path))
            var stamps = [timespec(tv_sec: time.0, tv_nsec: time.1), timespec(tv_sec: time.0, tv_nsec: time.1)]
            #expect(utimensat(AT_FDCWD, path, &stamps, 0) == 0)
            paths.append(path)
        }
        for index in 0..<50 {
            let path = directory.appendingPathComponent("now\(index).bin").path
            try Data(repeating: UInt8(index), count: index).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        for path in paths {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let file = try ImageFile(path: path)
            #expect(file.size == (attributes[.size] as? NSNumber)?.intValue)
            let expected = try #require(attributes[.modificationDate] as? Date).timeIntervalSince1970
            #expect(file.modificationDate.timeIntervalSince1970.bitPattern == expected.bitPattern, "\(path)")
            #expect(try file.contents() == Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }

    @Test("a file over the limit is inputTooLarge before it is read; a missing one an open error")
    func limitsAndMissingFiles() throws {
        let directory = try temporaryDirectory("image-file-limit")
        let path = directory.appendingPathComponent("large.bin").path
        try Data(count: 1000).write(to: URL(fileURLWithPath: path))
        #expect(throws: TesseraError(.decoding(.inputTooLarge(bytes: 1000, limit: 999)))) { try ImageFile.contents(of: path, limit: 999) }
        #expect(try ImageFile.contents(of: path, limit: 1000).count == 1000)
        let missing = directory.appendingPathComponent("none.png").path
        #expect(throws: TesseraError(.io(operation: "open", path: missing, errno: ENOENT))) { _ = try ImageFile(path: missing) }
    }

    @Test("a FIFO or a directory is refused at once; a symbolic link only when links are not followed")
    func onlyRegularFiles() throws {
        let directory = try temporaryDirectory("image-file-kinds")
        let fifo = directory.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // No writer: a blocking open or read would never return.
        #expect(throws: TesseraError(.io(operation: "open", path: fifo, errno: EINVAL))) { _ = try ImageFile(path: fifo) }
        #expect(throws: TesseraError(.io(operation: "open", path: directory.path, errno: EINVAL))) { _ = try ImageFile(path: directory.path) }
        let target = directory.appendingPathComponent("target.bin").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: target))
        let link = directory.appendingPathComponent("link.bin").path
        #expect(symlink(target, link) == 0)
        #expect(try ImageFile.contents(of: link) == Data([1, 2, 3]))
        #expect(throws: TesseraError(.io(operation: "open", path: link, errno: ELOOP))) { _ = try ImageFile(path: link, followingLinks: false) }
    }
}
