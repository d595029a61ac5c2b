import Foundation
import Tessera
import TesseraMeasurement

/// The demo's results and what they mean, printed as a table or as JSON.
struct DemoReport: Codable {
    /// How the measurement was done, in plain sentences.
    var measured: [String]
    /// Processor and core count.
    var machine: String
    var grid: ScrollingGrid
    var pixelsPerFrame: Int
    var movingFrames: Int
    var restFrames: Int
    var budgetMilliseconds: Double
    var paced: Bool
    var sourceImages: Int
    var sourceSize: PixelSize
    var sourceBytes: Int
    var lowResolutionSize: PixelSize
    var memoryCacheLimit: Int
    /// One entry per method.
    var methods: [DemoMethodResult]
    /// The numbers Fast Image Cache's README reports for its demo app, for comparison.
    var reference = "Fast Image Cache README (iPhone 5, 2013): conventional ~35 FPS, image tables ~59 FPS; disk 568 KB vs 2.2 MB; extra private memory 1.34 MB vs 0.09 MB"

    init(configuration c: DemoConfiguration, results: [DemoMethodResult], sourceBytes: Int) {
        let size = c.sourcePaths.first.flatMap { try? ImageDecoder().probe(ImageFiles.read($0)) }.map { PixelSize(width: $0.width, height: $0.height) }
        grid = c.grid
        pixelsPerFrame = c.pixelsPerFrame
        movingFrames = c.movingFrames
        restFrames = c.restFrames
        budgetMilliseconds = c.budgetSeconds * 1000
        paced = c.paced
        sourceImages = c.sourcePaths.count
        sourceSize = size ?? PixelSize(width: 1, height: 1)
        self.sourceBytes = sourceBytes
        lowResolutionSize = c.lowResolutionSize
        memoryCacheLimit = c.memoryCacheLimit
        methods = results
        machine = Self.machine()
        let fromWhere = "every method reads local files (page cache warm: the sources were just prepared or read), except 'filled over HTTP', whose ImageCache provider (ImageManager on AsyncHTTPClient) fetches each source from an HTTP/1.1 origin this process starts on 127.0.0.1 (loopback, no real network latency)"
        measured = [
            "\(c.grid.columns)-column grid of \(c.grid.cellSize) cells, viewport \(c.grid.viewportHeight) px high, scrolled \(c.pixelsPerFrame) px per frame (\(c.pixelsPerFrame * 60) px/s) for \(c.movingFrames) frames, then \(c.restFrames) frames at rest.",
            "Frame work = time on the frame thread (the child process's main thread) to get every newly visible cell's image at cell size (or a placeholder) and copy it into the frame buffer. Budget \(String(format: "%.1f", c.budgetSeconds * 1000)) ms; a frame over budget is dropped and occupies ⌈work/budget⌉ refresh intervals; effective FPS = frames / intervals.",
            c.paced ? "After its work each frame waits for the next 16.7 ms tick (vsync), so background threads run in real time between frames; the wait is never counted as work."
                    : "Frames ran back to back (--no-pacing): background threads got no idle time between frames.",
            "Each method runs in its own process; memory deltas are /proc/self/smaps_rollup Rss and Private_Dirty after the last frame (cells still on screen) minus before the first.",
            "Sources: \(c.sourcePaths.count) JPEGs cut from real photographs; \(fromWhere).",
        ]
    }

    static func machine() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.map(String.init) ?? "?"
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), load average \(load) at the end (other processes compete for the cores)"
    }

    func print() {
        Swift.print("Tessera demo: \(measured[0])")
        Swift.print("Sources: \(sourceImages) JPEGs \(sourceSize), \(Self.mb(sourceBytes)) on disk. Machine: \(machine).")
        Swift.print("")
        Terminal.table(
            ["method", "frames ok", "dropped", "eff. FPS", "p50 ms", "p99 ms", "placeholder frames", "uploaded", "disk", "RSS Δ", "private dirty Δ"],
            methods.map { m in
                [m.label, "\(m.frames.withinBudget)/\(m.frames.frames)", "\(m.frames.dropped)",
                 String(format: "%.1f", m.frames.effectiveFPS), Terminal.ms(m.frames.medianSeconds), Terminal.ms(m.frames.p99Seconds),
                 "\(m.placeholderFrames)", Self.mb(m.bytesUploaded),
                 m.tableBytesOnDisk > 0 ? "\(Self.mb(m.sourceBytesOnDisk)) + \(Self.mb(m.tableBytesOnDisk)) tables" : Self.mb(m.sourceBytesOnDisk),
                 m.memoryDelta.map { Self.mb($0.residentBytes, signed: true) } ?? "n/a",
                 m.memoryDelta.map { Self.mb($0.privateDirtyBytes, signed: true) } ?? "n/a"]
            })
        Swift.print("")
        for line in measured.dropFirst() { Swift.print("- " + line) }
        Swift.print("- Frame-thread time per image shown (all frame work / images shown): " + methods.filter { !$0.id.hasSuffix("swap") }.map { m in
            String(format: "%@ %.3f ms", m.id, m.frames.totalSeconds * 1000 / Double(max(1, m.imagesShown)))
        }.joined(separator: ", ") + ".")
        for line in swapSummary() { Swift.print("- " + line) }
        Swift.print("- Reference: \(reference).")
    }

    /// What resolution swapping saved, while moving, against the same method at full resolution.
    func swapSummary() -> [String] {
        var lines: [String] = []
        for (full, low) in [("conventional", "conventional-swap"), ("tables-warm", "tables-warm-swap")] {
            guard let a = methods.first(where: { $0.id == full }), let b = methods.first(where: { $0.id == low }) else { continue }
            lines.append(String(format: "Resolution swapping (%@ %@ while moving, full size at rest): moving frames p50 %.3f → %.3f ms, p99 %.3f → %.3f ms, dropped %d → %d; bytes touched while moving %@ → %@.",
                                full, lowResolutionSize.description, a.movingFrames.medianSeconds * 1000, b.movingFrames.medianSeconds * 1000,
                                a.movingFrames.p99Seconds * 1000, b.movingFrames.p99Seconds * 1000, a.movingFrames.dropped, b.movingFrames.dropped,
                                Self.mb(a.bytesUploadedWhileMoving), Self.mb(b.bytesUploadedWhileMoving)))
        }
        return lines
    }

    static func mb(_ bytes: Int, signed: Bool = false) -> String {
        let value = Double(bytes) / 1_048_576
        return String(format: signed ? "%+.2f MB" : "%.2f MB", value)
    }
}
