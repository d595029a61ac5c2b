import Foundation
import Testing
@_spi(Internal) import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTesting
import TesseraTestSupport

/// What a new user gets without asking: a disk cache by default, a watched shared manager, one
/// statistics entry point whose counts add up, and a way to wait for prefetches.
@Suite("ImageManager defaults, statistics and prefetchesFinished")
struct ManagerDefaultsTests {
    static func url(_ name: String) -> URL { URL(string: "https://images.example/\(name).png")! }

    @Test("the default configuration has a 512 MiB disk cache in the XDG cache directory; disk: nil has none")
    func defaultDiskCache() throws {
        let configuration = ImageManager.Configuration()
        let disk = try #require(configuration.disk)
        #expect(disk.directory == ImageManager.Configuration.defaultDiskDirectory)
        #expect(disk.sizeLimit == 512 << 20)
        #expect(ImageManager.Configuration.defaultDiskDirectory.path.hasSuffix("/tessera/images"))
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            #expect(ImageManager.Configuration.defaultDiskDirectory.path == URL(fileURLWithPath: xdg).appendingPathComponent("tessera/images").path)
        }
        #expect(ImageManager.Configuration.standard == configuration)
        #expect(ImageManager.Configuration(disk: nil).disk == nil)
    }

    @Test("ImageManager.shared watches its memory cache for memory pressure")
    func sharedWatcher() throws {
        let watcher = try #require(ImageManager.sharedMemoryPressureWatcher)
        let memory = try #require(ImageManager.shared.memoryCache)
        #expect(watcher.cache as AnyObject === memory as AnyObject)
    }

    @Test("statistics: requests = memory hits + misses, and every miss ends once: disk, network, local, failed or cancelled")
    func statisticsAddUp() async throws {
        let loader = MockDataLoader()
        let gate = LoadGate()
        for name in ["a", "b"] { loader.set(.image(try pngBytes(), cacheControl: "max-age=600"), for: Self.url(name)) }
        loader.set(.image(try pngBytes(), gate: gate), for: Self.url("held"))
        let directory = try temporaryDirectory("statistics")
        let manager = try ImageManager(configuration: .init(disk: .init(directory: directory), diskSweepInterval: nil), loader: loader)
        _ = try await manager.image(for: Self.url("a"))                                            // network
        _ = try await manager.image(for: Self.url("a"))                                            // memory
        _ = try await manager.image(for: ImageRequest(url: Self.url("a"), size: PixelSize(width: 4, height: 4)))  // disk
        async let shared1 = manager.image(for: Self.url("b"))                                       // network, shared
        async let shared2 = manager.image(for: ImageRequest(url: Self.url("b"), size: PixelSize(width: 5, height: 5)))
        _ = try await (shared1, shared2)
        _ = try? await manager.image(for: Self.url("missing"))                                      // failed (404)
        let held = manager.imageTask(for: ImageRequest(url: Self.url("held")))
        await loader.waitForLoads(of: Self.url("held"))
        held.cancel()                                                                                // cancelled
        _ = try? await held.response

        let counts = manager.statistics
        #expect(counts.requests == 7)
        #expect(counts.requests == counts.memoryHits + counts.memoryMisses)
        #expect(counts.memoryMisses == counts.diskResponses + counts.networkResponses + counts.localResponses
            + counts.tableResponses + counts.failedRequests + counts.cancelledRequests)
        #expect(counts.memoryHits == 1 && counts.diskResponses == 1 && counts.networkResponses == 3)
        #expect(counts.failedRequests == 1 && counts.cancelledRequests == 1)
        // Jobs: "a" twice (network, then disk), "b", "missing" and "held" once each.
        #expect(counts.diskHits == 1 && counts.diskMisses == 4 && counts.downloads == 4)
    }

    @Test("prefetchesFinished() returns once every prefetch has ended, at once when there is none")
    func prefetchesFinished() async throws {
        let loader = MockDataLoader()
        let gate = LoadGate()
        let urls = (0..<3).map { Self.url("p\($0)") }
        for url in urls { loader.set(.image(try pngBytes(), gate: gate), for: url) }
        loader.set(.image(Data("not found".utf8), gate: gate), for: Self.url("bad"))
        let manager = try ImageManager(configuration: .init(disk: .init(directory: try temporaryDirectory("prefetched")), diskSweepInterval: nil),
                                       loader: loader)
        await manager.prefetchesFinished()
        await manager.prefetch(urls + [Self.url("bad")])
        #expect(await manager.queueSnapshot().prefetches.count == 4)
        let waiting = Task { await manager.prefetchesFinished() }
        await loader.waitForLoads(of: urls[0])
        gate.open()
        await waiting.value
        #expect(urls.allSatisfy { manager.isCachedOnDisk($0) })
        #expect(!manager.isCachedOnDisk(Self.url("bad")))
        #expect(await manager.queueSnapshot().prefetches.isEmpty)
    }
}
