import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraMeasurement
import TesseraTestSupport

@Suite("Demo measurement: scrolling grid, frame statistics, smaps parsing")
struct DemoMeasurementTests {
    let grid = ScrollingGrid(itemCount: 40, columns: 4, cellSize: PixelSize(width: 100, height: 100), viewportHeight: 250)

    @Test("visible items cover every row touched by the viewport")
    func visibleItems() {
        #expect(grid.visibleItems(atOffset: 0) == 0..<12)      // rows 0, 1, 2 (2 partially)
        #expect(grid.visibleItems(atOffset: 50) == 0..<12)     // rows 0…2 (y 50…299)
        #expect(grid.visibleItems(atOffset: 51) == 0..<16)     // y 51…300 reaches row 3
        #expect(grid.visibleItems(atOffset: 100) == 4..<16)
        #expect(grid.visibleItems(atOffset: 10_000) == 28..<40) // clamped to the last screen
        #expect(grid.visibleItems(atOffset: -5) == 0..<12)
    }

    @Test("newly visible items are the difference between two offsets")
    func newlyVisible() {
        #expect(grid.newlyVisibleItems(from: nil, to: 0) == Array(0..<12))
        #expect(grid.newlyVisibleItems(from: 0, to: 50).isEmpty)
        #expect(grid.newlyVisibleItems(from: 50, to: 60) == [12, 13, 14, 15])
        #expect(grid.newlyVisibleItems(from: 60, to: 70).isEmpty)
        #expect(grid.newlyVisibleItems(from: 0, to: 400) == Array(16..<28))   // rows 4…6; row 3 was skipped over
    }

    @Test("a partial last row and vertical neighbours")
    func partialRowAndNeighbours() {
        let ragged = ScrollingGrid(itemCount: 10, columns: 4, cellSize: PixelSize(width: 10, height: 10), viewportHeight: 15)
        #expect(ragged.rowCount == 3)
        #expect(ragged.maximumOffset == 15)
        #expect(ragged.visibleItems(atOffset: 15) == 4..<10)
        #expect(ragged.verticalNeighbours(of: 5) == [9, 1])
        #expect(ragged.verticalNeighbours(of: 7) == [3])
        #expect(ragged.verticalNeighbours(of: 1) == [5])
    }

    @Test("the item count needed for a scroll distance never runs out")
    func itemCountForDistance() {
        let count = ScrollingGrid.itemCount(columns: 4, rowHeight: 100, viewportHeight: 250, scrollDistance: 1000)
        let g = ScrollingGrid(itemCount: count, columns: 4, cellSize: PixelSize(width: 100, height: 100), viewportHeight: 250)
        #expect(g.maximumOffset >= 1000)
        #expect(g.visibleItems(atOffset: 1000) == 40..<52)
    }

    @Test("frame statistics: dropped frames occupy several refresh intervals")
    func frameStatistics() {
        let budget = 0.010
        let stats = FrameStatistics(frameSeconds: [0.001, 0.002, 0.009, 0.010, 0.011, 0.025], budgetSeconds: budget)
        #expect(stats.frames == 6)
        #expect(stats.dropped == 2)
        #expect(stats.withinBudget == 4)
        #expect(stats.refreshIntervals == 4 + 2 + 3)
        #expect(abs(stats.effectiveFPS - 6.0 / 0.09) < 1e-9)
        #expect(stats.maximumSeconds == 0.025)
        #expect(stats.p99Seconds == 0.025)
        #expect(stats.medianSeconds == 0.009)
    }

    @Test("percentiles use the nearest rank")
    func percentiles() {
        let values = (1...100).map(Double.init)
        #expect(FrameStatistics.percentile(values, 0.5) == 50)
        #expect(FrameStatistics.percentile(values, 0.99) == 99)
        #expect(FrameStatistics.percentile(values, 1) == 100)
        #expect(FrameStatistics.percentile([], 0.5) == 0)
        #expect(FrameStatistics(frameSeconds: []).effectiveFPS == 0)
    }

    @Test("smaps_rollup parsing reads Rss and private pages in kB")
    func smaps() throws {
        let text = """
        55d0c0a00000-7ffc4b5fe000 ---p 00000000 00:00 0                          [rollup]
        Rss:               12345 kB
        Pss:               10000 kB
        Shared_Clean:       2000 kB
        Private_Clean:       300 kB
        Private_Dirty:      9045 kB
        Referenced:        12345 kB
        """
        let usage = try #require(MemoryUsage(smaps: text))
        #expect(usage.residentBytes == 12345 * 1024)
        #expect(usage.privateDirtyBytes == 9045 * 1024)
        #expect(usage.privateCleanBytes == 300 * 1024)
        #expect(MemoryUsage(smaps: "nothing here") == nil)
        let later = MemoryUsage(residentBytes: usage.residentBytes + 4096, privateDirtyBytes: usage.privateDirtyBytes - 1024,
                                privateCleanBytes: usage.privateCleanBytes)
        #expect(later.delta(since: usage) == MemoryUsage(residentBytes: 4096, privateDirtyBytes: -1024, privateCleanBytes: 0))
    }

    @Test("this process's memory is readable on Linux")
    func currentProcess() throws {
        #if os(Linux)
        let usage = try #require(MemoryUsage.current())
        #expect(usage.residentBytes > 0)
        #endif
    }
}
