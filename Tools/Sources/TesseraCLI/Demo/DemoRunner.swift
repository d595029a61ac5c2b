import Foundation
import Tessera

/// The work of one child process: builds a method, scrolls the grid with it and returns results.
///
/// Children: `conventional`, `background`, `memory-cache`, `tables` (empty tables filled through
/// the provider, then the same process scrolls again: warm, and warm with resolution swapping),
/// `tables-cold` (a new process reopening the tables the `tables` child left) and `tables-http`
/// (empty tables of their own, filled over HTTP from a loopback origin on 127.0.0.1).
enum DemoRunner {
    /// The child names, in the order the parent runs them.
    static let children = ["conventional", "conventional-swap", "background", "memory-cache", "tables", "tables-cold", "tables-http"]

    static func run(_ child: String, configuration c: DemoConfiguration) async throws -> [DemoMethodResult] {
        let full = c.grid.cellSize, low = c.lowResolutionSize
        switch child {
        case "conventional":
            let method = ConventionalMethod(paths: c.sourcePaths, fullSize: full, lowSize: low)
            let run = FrameLoop(configuration: c, swapsResolution: false).run(method)
            return [DemoMethodResult(id: child, label: "conventional (read+decode+scale on frame thread)", run: run,
                                 configuration: c, failures: method.failures)]
        case "conventional-swap":
            let method = ConventionalMethod(paths: c.sourcePaths, fullSize: full, lowSize: low)
            let run = FrameLoop(configuration: c, swapsResolution: true).run(method)
            return [DemoMethodResult(id: child, label: "conventional, \(low) while moving", run: run,
                                 configuration: c, failures: method.failures)]
        case "background":
            let method = BackgroundDecodeMethod(paths: c.sourcePaths, size: full)
            let run = FrameLoop(configuration: c, swapsResolution: false).run(method)
            drain(method)
            return [DemoMethodResult(id: child, label: "background decode + placeholders", run: run,
                                 configuration: c, failures: method.failures)]
        case "memory-cache":
            let method = MemoryCacheMethod(paths: c.sourcePaths, size: full, grid: c.grid, limit: c.memoryCacheLimit)
            let run = FrameLoop(configuration: c, swapsResolution: false).run(method)
            drain(method)
            return [DemoMethodResult(id: child, label: "memory cache + neighbour prefetch", run: run,
                                 configuration: c, failures: method.failures)]
        case "tables":
            return try tables(c)
        case "tables-http":
            let origin = try await DemoOrigin.start(files: c.sourcePaths)
            let results = Result { try tablesOverHTTP(c, origin: origin) }
            await origin.stop()
            return try results.get()
        case "tables-cold":
            let cache = try openCache(c, origin: nil)
            let method = ImageTableMethod(cache: cache, photos: photos(c, origin: nil), full: c.fullFormat, low: c.lowFormat)
            let run = FrameLoop(configuration: c, swapsResolution: false).run(method)
            drain(method)
            return [DemoMethodResult(id: child, label: "image tables, cold start (new process)", run: run, configuration: c,
                                 failures: method.failures, tableBytes: tableBytes(cache, c), newProcess: true)]
        default:
            throw TesseraError(.cache(.unknownFormat("no demo child named \(child)")))
        }
    }

    /// Empty tables of their own, filled over HTTP from `origin`.
    private static func tablesOverHTTP(_ c: DemoConfiguration, origin: DemoOrigin) throws -> [DemoMethodResult] {
        let cache = try openCache(c, origin: origin)
        try cache.reset()
        let method = ImageTableMethod(cache: cache, photos: photos(c, origin: origin), full: c.fullFormat, low: c.lowFormat)
        let run = FrameLoop(configuration: c, swapsResolution: false).run(method)
        drain(method)
        return [DemoMethodResult(id: "tables-http", label: "image tables, empty (filled over HTTP, 127.0.0.1)", run: run, configuration: c,
                             failures: method.failures, tableBytes: tableBytes(cache, c))]
    }

    /// Fill (empty tables), then warm, then warm with resolution swapping, in one process.
    private static func tables(_ c: DemoConfiguration) throws -> [DemoMethodResult] {
        let cache = try openCache(c, origin: nil)
        try cache.reset()
        let list = photos(c, origin: nil)
        var results: [DemoMethodResult] = []
        let fill = ImageTableMethod(cache: cache, photos: list, full: c.fullFormat, low: c.lowFormat)
        let fillRun = FrameLoop(configuration: c, swapsResolution: false).run(fill)
        drain(fill)
        results.append(DemoMethodResult(id: "tables-fill", label: "image tables, empty (filled from files)", run: fillRun,
                                    configuration: c, failures: fill.failures, tableBytes: tableBytes(cache, c)))
        let warm = ImageTableMethod(cache: cache, photos: list, full: c.fullFormat, low: c.lowFormat)
        let warmRun = FrameLoop(configuration: c, swapsResolution: false).run(warm)
        drain(warm)
        results.append(DemoMethodResult(id: "tables-warm", label: "image tables, warm", run: warmRun,
                                    configuration: c, failures: warm.failures, tableBytes: tableBytes(cache, c)))
        let swap = ImageTableMethod(cache: cache, photos: list, full: c.fullFormat, low: c.lowFormat)
        let swapRun = FrameLoop(configuration: c, swapsResolution: true).run(swap)
        drain(swap)
        results.append(DemoMethodResult(id: "tables-warm-swap", label: "image tables, warm, \(c.lowResolutionSize) while moving",
                                    run: swapRun, configuration: c, failures: swap.failures, tableBytes: tableBytes(cache, c)))
        try cache.table(for: c.fullFormat)?.flush()
        try cache.table(for: c.lowFormat)?.flush()
        return results
    }

    /// Opens the demo's cache with a provider for local files, or — for a loopback HTTP `origin`, with
    /// tables of their own — the project's `ImageManager` on the origin's AsyncHTTPClient loader (no
    /// memory or disk cache of its own: the tables are the cache). The provider is the only thing that
    /// changes between the two fill paths.
    static func openCache(_ c: DemoConfiguration, origin: DemoOrigin?) throws -> ImageCache {
        let provider: any SourceImageProviding
        if let origin {
            provider = ImageManager(loader: origin.loader, memoryCache: nil, diskCache: nil)
        } else {
            provider = FileSourceImageProvider()
        }
        let directory = origin != nil ? c.tableDirectory.appendingPathComponent("http", isDirectory: true) : c.tableDirectory
        return try ImageCache(formats: [c.fullFormat, c.lowFormat], directory: directory, provider: provider)
    }

    /// One entity per grid item, with a file URL or a URL on the loopback origin.
    static func photos(_ c: DemoConfiguration, origin: DemoOrigin?) -> [DemoPhoto] {
        c.sourcePaths.enumerated().map { index, path in
            let name = (path as NSString).lastPathComponent
            return DemoPhoto(name: name, url: origin?.url(forItem: index) ?? URL(fileURLWithPath: path))
        }
    }

    private static func tableBytes(_ cache: ImageCache, _ c: DemoConfiguration) -> Int {
        [c.fullFormat, c.lowFormat].compactMap { cache.table(for: $0)?.usage.bytesOnDisk }.reduce(0, +)
    }

    /// Lets background loads finish (off the clock) so the next run and the process exit find no
    /// work in flight.
    private static func drain(_ method: some FrameMethod) {
        let deadline = FramePacer.now() + 30_000_000_000
        while method.pendingLoads > 0, FramePacer.now() < deadline {
            method.beginFrame()
            usleep(1000)
        }
    }
}
