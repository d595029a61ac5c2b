import Foundation
import Testing
@_spi(Internal) import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `ImageCache` fills its tables through `ImageManager` at the level of the cache's request: a `low`
/// request's source waits in the slow lane, a `normal` one in the urgent lane.
@Suite("ImageCache honours a request's priority")
struct ImageCachePriorityTests {
    @Test("a low entity request downloads its source on the slow lane, a normal one on the urgent lane")
    func lanes() async throws {
        let loader = MockDataLoader()
        let gate = LoadGate()
        let blocker = URL(string: "https://images.example/blocker.png")!
        let later = URL(string: "https://images.example/later.png")!
        let now = URL(string: "https://images.example/now.png")!
        loader.set(.image(try pngBytes(), gate: gate), for: blocker)
        loader.set(.image(try pngBytes(width: 128, height: 128)), for: later)
        loader.set(.image(try pngBytes(width: 128, height: 128)), for: now)
        let manager = try ImageManager(configuration: .init(disk: nil, diskSweepInterval: nil, maximumConcurrentDownloads: 1), loader: loader)
        let cache = try ImageCache(formats: [small], directory: try temporaryDirectory("cache-priority"), provider: manager)
        let holding = Task { try await manager.image(for: blocker) }
        await loader.waitForLoads(of: blocker)

        async let low = cache.image(for: ImageRequest(entity: User("low", url: later), format: small, priority: .low))
        await manager.waitForQueue { $0.slowQueued == [later] }
        async let normal = cache.image(for: ImageRequest(entity: User("normal", url: now), format: small))
        await manager.waitForQueue { $0.urgentQueued == [now] }
        #expect(await manager.queueSnapshot().slowQueued == [later])

        gate.open()
        _ = try await holding.value
        let (a, b) = try await (low, normal)
        #expect(a.layout.size == small.size && b.layout.size == small.size)
        #expect(loader.count(for: later) == 1 && loader.count(for: now) == 1)
    }
}
