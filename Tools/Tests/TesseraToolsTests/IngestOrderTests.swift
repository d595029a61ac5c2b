import Foundation
import Testing
@testable import TesseraCLI
import TesseraTestSupport

/// `table ingest --jobs N` starts the largest files first, so that the run does not end on one large
/// decode with the other cores idle.
@Suite("table ingest: the order files start in")
struct IngestOrderTests {
    @Test("largest first, equal sizes in the order given, a missing file last")
    func largestFirst() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sizes = [3, 700, 50, 700, 9_000]
        var files = try sizes.enumerated().map { index, size in
            let path = dir.appendingPathComponent("f\(index)").path
            try Data(repeating: 7, count: size).write(to: URL(fileURLWithPath: path))
            return path
        }
        files.insert(dir.appendingPathComponent("missing").path, at: 2)
        // Sizes by index: 0: 3, 1: 700, 2: missing, 3: 50, 4: 700, 5: 9,000.
        #expect(TableIngester.startOrder(files) == [5, 1, 4, 3, 0, 2])
        #expect(TableIngester.startOrder([]) == [])
    }
}
