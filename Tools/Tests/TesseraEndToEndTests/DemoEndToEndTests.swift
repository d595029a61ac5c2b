import Foundation
import Testing
import Tessera
import TesseraMeasurement

/// `tessera demo --json` (release build) with a short scroll over sources cut from two real
/// photographs: the report describes the configuration it was given, lists every method once, and
/// each method's frame and image counts follow from the grid and the scroll (not from timing).
@Suite("release tessera demo, short run",
       .enabled(if: ReleaseCLI.isAvailable, "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct DemoEndToEndTests {
    struct Report: Decodable {
        struct Method: Decodable {
            var id: String
            var label: String
            var frames: FrameStatistics
            var movingFrames: FrameStatistics
            var placeholderFrames: Int
            var bytesUploaded: Int
            var bytesUploadedWhileMoving: Int
            var imagesShown: Int
            var sourceBytesOnDisk: Int
            var tableBytesOnDisk: Int
            var memoryDelta: MemoryUsage?
            var failures: Int
            var newProcess: Bool
            var frameMilliseconds: [Double]
            var decodes: Int?
        }
        var grid: ScrollingGrid
        var pixelsPerFrame: Int
        var movingFrames: Int
        var restFrames: Int
        var paced: Bool
        var sourceImages: Int
        var sourceSize: PixelSize
        var sourceBytes: Int
        var lowResolutionSize: PixelSize
        var methods: [Method]
    }

    /// The methods the table of docs/PERFORMANCE.md ("Scrolling: `tessera demo`") lists, by id.
    static let methods: Set = ["conventional", "background", "memory-cache", "tables-fill", "tables-http", "tables-warm",
                               "tables-cold", "tables-url-http", "tables-url-warm", "tables-url-cold", "conventional-swap",
                               "tables-warm-swap"]
    /// The methods over the loopback HTTP origin (`--no-http` drops them).
    static let overHTTP: Set = ["tables-http", "tables-url-http", "tables-url-warm", "tables-url-cold"]
    /// Methods that produce every image on the frame thread (no placeholders, ever).
    static let synchronous: Set = ["conventional", "conventional-swap", "tables-warm", "tables-cold", "tables-warm-swap", "tables-url-warm"]

    /// The configuration of the run.
    static let cell = PixelSize(width: 60, height: 60)
    static let low = PixelSize(width: 16, height: 16)
    static let source = PixelSize(width: 320, height: 240)
    static let columns = 3, viewport = 200, speed = 15, frames = 12, rest = 3

    static func arguments(images: String, work: String) -> [String] {
        ["demo", "--images", images, "--work-dir", work, "--source-size", source.description, "--cell", cell.description,
         "--low-resolution", low.description, "--columns", "\(columns)", "--viewport-height", "\(viewport)",
         "--speed", "\(speed)", "--frames", "\(frames)", "--rest-frames", "\(rest)", "--json"]
    }

    /// Images a method that answers every request at once shows: each cell once when it scrolls into
    /// view (low resolution while moving when swapping), plus the swap of each low-resolution cell to
    /// full resolution once the grid rests — the behaviour `tessera demo --help` describes.
    static func imagesShownSynchronously(_ grid: ScrollingGrid, swaps: Bool) -> Int {
        var cells: [Int: Bool] = [:]   // item -> shows full resolution
        var shown = 0
        for frame in 0..<(frames + rest) {
            let visible = grid.visibleItems(atOffset: min(frame, frames) * speed)
            cells = cells.filter { visible.contains($0.key) }
            let full = !(swaps && frame < frames)
            for item in visible where cells[item] == nil || (full && cells[item] == false) {
                cells[item] = full
                shown += 1
            }
        }
        return shown
    }

    /// Items that are visible at some frame of the scroll.
    static func everVisible(_ grid: ScrollingGrid) -> Set<Int> {
        Set((0..<(frames + rest)).flatMap { grid.visibleItems(atOffset: min($0, frames) * speed) })
    }

    /// A paced run with every method, then one with `--no-http --no-pacing` on the same work dir.
    /// Checked: the configuration echoed; the sources (count from ``ScrollingGrid/itemCount``, size,
    /// bytes); every method exactly once with frame counts equal to the configured frames, no failures;
    /// synchronous methods show exactly the images the scroll model predicts with no placeholder
    /// frames and upload cell-sized BGRA images; resolution swapping uploads fewer bytes while moving;
    /// the tables hold one full-size BGRA and one low-resolution RGB565 entry per item ever visible;
    /// URL requests through tables decode each visible item once, then never again, also in a new process
    /// (``checkURLRequests(_:work:visible:)``); the chart is a PNG; `--no-http` drops only the HTTP methods.
    @Test("demo --json reports every method with the configured frames")
    func demo() async throws {
        let scratch = try ScratchDirectory("demo")
        let images = try ScratchDirectory("demo-photos")
        _ = try FileFacts.copy(try RealPhotos.smallest(2, ext: "jpg"), into: images)
        let work = scratch.path("work"), plot = scratch.path("frames.png")
        let run = try await ReleaseCLI.run(Self.arguments(images: images.url.path, work: work) + ["--plot", plot])
        try #require(run.status == 0 && run.signal == nil, "\(run)")
        let report = try run.json(Report.self)

        let itemCount = ScrollingGrid.itemCount(columns: Self.columns, rowHeight: Self.cell.height,
                                                viewportHeight: Self.viewport, scrollDistance: Self.frames * Self.speed)
        #expect(report.grid == ScrollingGrid(itemCount: itemCount, columns: Self.columns, cellSize: Self.cell, viewportHeight: Self.viewport))
        #expect(report.pixelsPerFrame == Self.speed && report.movingFrames == Self.frames && report.restFrames == Self.rest && report.paced)
        #expect(report.lowResolutionSize == Self.low && report.sourceSize == Self.source && report.sourceImages == itemCount)
        let sources = try Self.sources(in: work)
        #expect(sources.count == itemCount)
        #expect(report.sourceBytes == sources.compactMap { FileFacts.size($0) }.reduce(0, +))
        #expect(try RealPhotos.size(of: sources[0]) == Self.source)

        #expect(report.methods.count == Self.methods.count && Set(report.methods.map(\.id)) == Self.methods)
        let byID = Dictionary(uniqueKeysWithValues: report.methods.map { ($0.id, $0) })
        for method in report.methods {
            #expect(method.frames.frames == Self.frames + Self.rest && method.movingFrames.frames == Self.frames, "\(method.id)")
            #expect(method.frameMilliseconds.count == Self.frames + Self.rest, "\(method.id)")
            #expect(method.frames.withinBudget + method.frames.dropped == method.frames.frames, "\(method.id)")
            #expect(method.failures == 0, "\(method.id)")
            #expect(method.sourceBytesOnDisk == report.sourceBytes, "\(method.id)")
            #expect((method.tableBytesOnDisk > 0) == method.id.hasPrefix("tables"), "\(method.id)")
            #expect(method.newProcess == (method.id == "tables-cold" || method.id == "tables-url-cold"), "\(method.id)")
            #expect((method.decodes != nil) == method.id.hasPrefix("tables-url"), "\(method.id)")
            #expect(method.imagesShown <= Self.imagesShownSynchronously(report.grid, swaps: method.id.hasSuffix("swap")), "\(method.id)")
            guard Self.synchronous.contains(method.id) else { continue }
            #expect(method.placeholderFrames == 0, "\(method.id)")
            #expect(method.imagesShown == Self.imagesShownSynchronously(report.grid, swaps: method.id.hasSuffix("swap")), "\(method.id)")
            if !method.id.hasSuffix("swap") {
                #expect(method.bytesUploaded == method.imagesShown * Self.cell.pixelCount * 4, "\(method.id): cell-sized BGRA")
            }
        }
        for (full, swap) in [("conventional", "conventional-swap"), ("tables-warm", "tables-warm-swap")] {
            let a = try #require(byID[full]), b = try #require(byID[swap])
            #expect(b.bytesUploadedWhileMoving < a.bytesUploadedWhileMoving, "\(swap) touches fewer bytes while moving")
        }
        try Self.checkTables(in: URL(fileURLWithPath: work).appendingPathComponent("tables"), visible: Self.everVisible(report.grid).count)
        try Self.checkTables(in: URL(fileURLWithPath: work).appendingPathComponent("tables/http"), visible: Self.everVisible(report.grid).count)
        try Self.checkURLRequests(byID, work: work, visible: Self.everVisible(report.grid).count)
        #expect(try ImageDecoder().probe(try Data(contentsOf: URL(fileURLWithPath: plot))).format == .png)

        let quick = try await ReleaseCLI.run(Self.arguments(images: images.url.path, work: work) + ["--no-http", "--no-pacing"])
        try #require(quick.status == 0 && quick.signal == nil, "\(quick)")
        let again = try quick.json(Report.self)
        #expect(Set(again.methods.map(\.id)) == Self.methods.subtracting(Self.overHTTP) && !again.paced)
        #expect(again.methods.allSatisfy { $0.frames.frames == Self.frames + Self.rest && $0.failures == 0 })
    }

    /// URL requests through `ImageManager`'s tables: each item ever visible downloaded and decoded once while
    /// the tables fill, nothing decoded when warm, and nothing in the new process either (the pixels come from
    /// the table, the bytes' source from the disk cache); one cell-sized BGRA table holding one entry per item.
    static func checkURLRequests(_ byID: [String: Report.Method], work: String, visible: Int) throws {
        let fill = try #require(byID["tables-url-http"]), warm = try #require(byID["tables-url-warm"])
        let cold = try #require(byID["tables-url-cold"])
        #expect(fill.decodes == visible && warm.decodes == visible, "decodes counted in the process: \(fill.decodes ?? -1), \(warm.decodes ?? -1)")
        #expect(cold.decodes == 0, "a new process answers from the table: \(cold.decodes ?? -1) decodes")
        let directory = URL(fileURLWithPath: work).appendingPathComponent("url-requests/tables")
        let formats = ImageTable.existingFormats(in: directory)
        let format = try #require(formats.count == 1 ? formats.first : nil, "\(directory.path): \(formats)")
        #expect(format.size == cell && format.style == .bgra32 && format.name.hasPrefix("url-"))
        let table = try ImageTable(format: format, directory: directory)
        #expect(table.usage.entryCount == visible)
        #expect(table.verify().damaged.isEmpty)
    }

    /// The prepared source JPEGs under the work dir.
    static func sources(in work: String) throws -> [String] {
        let dirs = try FileManager.default.contentsOfDirectory(atPath: work).filter { $0.hasPrefix("sources-") }
        let dir = try #require(dirs.count == 1 ? dirs.first : nil, "one sources directory in \(work): \(dirs)")
        return try FileManager.default.contentsOfDirectory(atPath: work + "/" + dir).filter { $0.hasSuffix(".jpg") }.sorted()
            .map { work + "/" + dir + "/" + $0 }
    }

    /// The demo's tables in `directory`: one cell-sized BGRA and one low-resolution RGB565 format,
    /// each holding one entry per item that was ever visible (one decode fills both).
    static func checkTables(in directory: URL, visible: Int) throws {
        let formats = ImageTable.existingFormats(in: directory)
        let full = try #require(formats.first { $0.size == cell && $0.style == .bgra32 }, "\(directory.path): \(formats)")
        let small = try #require(formats.first { $0.size == low && $0.style == .bgr565 }, "\(directory.path): \(formats)")
        #expect(formats.count == 2)
        for format in [full, small] {
            let table = try ImageTable(format: format, directory: directory)
            #expect(table.usage.entryCount == visible, "\(directory.lastPathComponent)/\(format.name)")
            #expect(table.verify().damaged.isEmpty)
        }
    }
}
