import ArgumentParser
import Foundation
import Tessera
import TesseraMeasurement

/// `tessera demo`: scrolls a grid of photo thumbnails at 60 Hz and measures what each way of getting
/// the thumbnails costs the frame thread — conventional decoding, background decoding, a memory
/// cache with prefetch, image tables (first fill, warm, cold start in a new process), plain URL requests
/// through `ImageManager`'s tables over HTTP (empty, warm, cold start), plus resolution swapping.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Scroll a photo grid at 60 Hz: conventional loading vs background decode vs memory cache vs image tables.",
        discussion: """
        Source images are JPEGs cut from real photographs (--images, by default the mate-backgrounds \
        wallpapers), prepared once under --work-dir. Every method runs in its own child process (clean \
        memory baseline); each frame asks for the image of every cell that becomes visible, at the \
        cell's size, on the frame thread. A frame whose work exceeds 16.7 ms is dropped.
        """
    )

    @Option(help: "Directory of photographs to derive the sources from (searched recursively).")
    var images = "/usr/share/backgrounds/mate"
    @Option(help: "Where prepared sources and tables are kept (default $XDG_CACHE_HOME/tessera-demo).")
    var workDir: String?
    @Option(help: "Source image size WxH (JPEG).") var sourceSize = "1600x1200"
    @Option(help: "JPEG quality of the sources.") var quality = 85
    @Option(help: "Cell (thumbnail) size WxH in pixels.") var cell = "150x150"
    @Option(help: "Low-resolution thumbnail size WxH shown while moving (resolution swapping).") var lowResolution = "32x32"
    @Option(help: "Cells per row.") var columns = 4
    @Option(help: "Viewport height in pixels.") var viewportHeight = 900
    @Option(help: "Pixels scrolled per frame (x60 = pixels per second).") var speed = 20
    @Option(help: "Frames while scrolling.") var frames = 480
    @Option(help: "Frames at rest after scrolling.") var restFrames = 60
    @Option(help: "Memory-cache method: most decoded images kept (default 3 screens).") var memoryCacheLimit: Int?
    @Flag(help: "Skip the runs over HTTP from a loopback origin (tables filled over HTTP, URL requests through tables).") var noHttp = false
    @Flag(help: "Run frames back to back instead of waiting for the next 16.7 ms tick.") var noPacing = false
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "Write a chart of frame work per method (PNG).") var plot: String?
    @Option(help: .hidden) var child: String?
    @Option(help: .hidden) var config: String?

    func run() async throws {
        if let child {
            guard let config else { throw ValidationError("--child needs --config") }
            let results = try await DemoRunner.run(child, configuration: DemoConfiguration.load(config))
            try Terminal.json(results)
            return
        }
        let configuration = try prepare()
        let path = (configuration.workDirectory as NSString).appendingPathComponent("demo-config.json")
        try configuration.save(path)
        var results: [DemoMethodResult] = []
        let children = DemoRunner.children.filter { !(noHttp && DemoRunner.httpChildren.contains($0)) }
        for (index, name) in children.enumerated() {
            Terminal.error("[\(index + 1)/\(children.count)] scrolling \(configuration.totalFrames) frames: \(name)…")
            results += try ChildProcess.run(name, configurationPath: path)
        }
        let sourceBytes = configuration.sourcePaths.reduce(0) { total, path in
            total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0)
        }
        for i in results.indices { results[i].sourceBytesOnDisk = sourceBytes }
        let order = ["conventional", "background", "memory-cache", "tables-fill", "tables-http", "tables-warm", "tables-cold",
                     "tables-url-http", "tables-url-warm", "tables-url-cold", "conventional-swap", "tables-warm-swap"]
        results.sort { (order.firstIndex(of: $0.id) ?? order.count) < (order.firstIndex(of: $1.id) ?? order.count) }
        let report = DemoReport(configuration: configuration, results: results, sourceBytes: sourceBytes)
        if let plot {
            try Data(PNGEncoder().encode(FramePlot.draw(report))).write(to: URL(fileURLWithPath: plot))
        }
        if json { try Terminal.json(report); return }
        report.print()
        if let plot { Swift.print("frame chart: \(plot)") }
    }

    /// Builds the configuration and prepares the source images.
    private func prepare() throws -> DemoConfiguration {
        guard let cellSize = PixelSize(parsing: cell), let low = PixelSize(parsing: lowResolution),
              let source = PixelSize(parsing: sourceSize) else { throw ValidationError("sizes must be WxH") }
        guard columns > 0, viewportHeight > 0, speed >= 0, frames > 0, restFrames >= 0 else {
            throw ValidationError("columns, viewport height and frames must be positive")
        }
        let work = workDir ?? ImageTable.defaultDirectory(appName: "tessera-demo").deletingLastPathComponent().path
        let count = ScrollingGrid.itemCount(columns: columns, rowHeight: cellSize.height, viewportHeight: viewportHeight,
                                            scrollDistance: frames * speed)
        let photos = DemoSources.photographs(in: images)
        let sourceDir = (work as NSString).appendingPathComponent("sources-\(source)-q\(quality)-\(Self.tag(images))")
        let paths = try DemoSources.prepare(count: count, size: source, quality: quality, photos: photos,
                                            directory: sourceDir, quiet: false)
        let grid = ScrollingGrid(itemCount: count, columns: columns, cellSize: cellSize, viewportHeight: viewportHeight)
        let visible = grid.visibleItems(atOffset: 0).count
        return DemoConfiguration(sourcePaths: paths, workDirectory: work, grid: grid, pixelsPerFrame: speed,
                                 movingFrames: frames, restFrames: restFrames, budgetSeconds: 1.0 / 60, paced: !noPacing,
                                 lowResolutionSize: low, memoryCacheLimit: memoryCacheLimit ?? 3 * visible)
    }

    /// A short stable tag for a photo directory, so that sources from different directories never mix.
    static func tag(_ directory: String) -> String {
        String(UUID(hashing: directory).uuidString.prefix(8)).lowercased()
    }
}
