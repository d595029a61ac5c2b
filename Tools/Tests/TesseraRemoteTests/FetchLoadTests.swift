import Foundation
import Testing
import TesseraTestSupport

/// The ImageManager load tool in a child process, briefly (`scripts/load-test` runs it for minutes).
@Suite("ImageManager under load (short)")
struct FetchLoadTests {
    @Test("many tasks on one ImageManager against a local origin, with the table load alongside: exact bytes, consistent disk cache")
    func shortFetchLoad() throws {
        let directory = try temporaryDirectory("fetch-load")
        let child = try StressChild(arguments: ["--fetch-load", "--dir", directory.path, "--operations", "40", "--tasks", "4"])
        let output = child.allLines()
        #expect(child.finish() == 0, "\(output)")
        let report = try #require(output.last { $0.hasPrefix("fetch t=") })
        #expect(report.contains(" ops=160 ") && report.contains(" wrong=0 ") && report.contains(" failed=0 "), "\(report)")
        #expect(output.contains { $0.hasPrefix("fetch end") && $0.hasSuffix(" consistent") }, "\(output)")
        #expect(output.filter { $0.hasPrefix("verify ") && $0.hasSuffix("clean") }.count == 2, "\(output)")
    }
}
