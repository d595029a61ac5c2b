import Foundation
import Tessera

/// The work of one child process: builds a method, scrolls the grid with it and returns results.
///
/// Children: `conventional`, `background`, `memory-cache`, `tables` (empty tables filled through
/// the provider, then the same process scrolls again: warm, and warm with resolution swapping),
/// `tables-cold` (a new process reopening the tables the `tables` child left), `tables-http`
/// (empty tables of their own, filled over HTTP from a loopback origin on 127.0.0.1), `tables-url-http`
/// (plain URL requests through `ImageManager`'s tables over that origin: empty, then warm) and
/// `tables-url-cold` (a new process with a new manager over the tables and disk cache `tables-url-http` left).
enum DemoRunner {
    /// The child names, in the order the parent runs them.
    static let children = ["conventional", "conventional-swap", "background", "memory-cache", "tables", "tables-cold", "tables-http",
                           "tables-url-http", "tables-url-cold"]
    /// The children that need the loopback HTTP origin (`--no-http` skips them).
    static let httpChildren: Set = ["tables-http", "tables-url-http", "tables-url-cold"]

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
        case "tables-url-http", "tables-url-cold":
            let origin = try await DemoOrigin.start(files: c.sourcePaths)
            let results = Result { try urlTables(c, origin: origin, cold: child == "tables-url-cold") }
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

    /// URL requests at the cell's size through an `ImageManager` with tables and a disk cache (no memory
    /// cache: the tables are the cache of decoded images) over `origin`. Not `cold`: both emptied first, one
    /// scroll that fills them over HTTP, then a warm one in the same process. `cold`: a new process over what
    /// the other child left, one scroll (each image's first request reads its bytes from disk to find its
    /// entry, without decoding).
    private static func urlTables(_ c: DemoConfiguration, origin: DemoOrigin, cold: Bool) throws -> [DemoMethodResult] {
        let base = URL(fileURLWithPath: c.workDirectory).appendingPathComponent("url-requests", isDirectory: true)
        if !cold { try? FileManager.default.removeItem(at: base) }
        var configuration = ImageManager.Configuration(disk: nil, diskSweepInterval: nil)
        configuration.tables = ImageManager.TableStorage(directory: base.appendingPathComponent("tables", isDirectory: true),
                                                         maximumCount: max(1, c.grid.itemCount))
        let disk = try DiskCache(configuration: DiskCache.Configuration(directory: base.appendingPathComponent("disk", isDirectory: true)))
        let manager = ImageManager(configuration: configuration, loader: origin.loader, memoryCache: nil, diskCache: disk)
        let urls = c.sourcePaths.indices.map { origin.url(forItem: $0) }
        var results: [DemoMethodResult] = []
        let runs = cold ? [("tables-url-cold", "URL requests through tables, cold start (new process, 127.0.0.1)")]
            : [("tables-url-http", "URL requests through tables, empty (filled over HTTP, 127.0.0.1)"),
               ("tables-url-warm", "URL requests through tables, warm")]
        for (id, label) in runs {
            let method = URLTableMethod(manager: manager, urls: urls, size: c.grid.cellSize)
            let run = FrameLoop(configuration: c, swapsResolution: false).run(method)
            drain(method)
            let bytes = manager.imageTables.map(\.usage.bytesOnDisk).reduce(0, +)
            results.append(DemoMethodResult(id: id, label: label, run: run, configuration: c, failures: method.failures,
                                            tableBytes: bytes, newProcess: cold, decodes: manager.statistics.decodes))
        }
        for table in manager.imageTables { try table.flush() }
        return results
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
