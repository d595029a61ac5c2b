import Foundation
import Testing
@_spi(Internal) import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `manager.cache`: store, remove, contains, cached data and cached image for a request, per layer.
@Suite("ImageManager.cache")
struct CacheFacadeTests {
    @Test("stored bytes are on disk and decoded in memory; each layer is read, checked and emptied on its own")
    func layers() async throws {
        let loader = MockDataLoader()
        let manager = try ImageManager(configuration: .init(disk: .init(directory: try temporaryDirectory("facade")), diskSweepInterval: nil),
                                       loader: loader)
        let url = URL(string: "https://images.example/stored.png")!
        let request = ImageRequest(url: url, size: PixelSize(width: 10, height: 10), cacheKey: "stored")
        let bytes = Data(try pngBytes())
        #expect(!manager.cache.contains(request))

        try await manager.cache.store(bytes, for: request)
        #expect(manager.cache.contains(request, in: .memory) && manager.cache.contains(request, in: .disk))
        #expect(await manager.cache.cachedData(for: request) == bytes)
        let fromMemory = try #require(await manager.cache.cachedImage(for: request))
        #expect(fromMemory.cacheType == .memory && fromMemory.image.layout.size == PixelSize(width: 10, height: 10))

        await manager.cache.remove(request, from: .memory)
        #expect(!manager.cache.contains(request, in: .memory) && manager.cache.contains(request, in: .disk))
        #expect(await manager.cache.cachedImage(for: request, in: .memory) == nil)
        let fromDisk = try #require(await manager.cache.cachedImage(for: request, in: .disk))
        #expect(fromDisk.cacheType == .disk && fromDisk.sourceFormat == .png)
        #expect(!manager.cache.contains(request, in: .memory), "a disk-only read does not fill memory")

        // A request answers from what the façade stored, without a load.
        #expect(try await manager.imageTask(for: request).response.cacheType == .disk)
        #expect(loader.requests.isEmpty)

        let other = ImageRequest(url: url, size: PixelSize(width: 3, height: 3))
        manager.cache.store(fromDisk.image, for: other)
        #expect(manager.cache.contains(other, in: .memory) && !manager.cache.contains(other, in: .disk))

        await manager.cache.remove(request, from: .disk)
        #expect(!manager.cache.contains(request, in: .disk))
        #expect(await manager.cache.cachedData(for: request) == nil)
        try await manager.cache.removeAll()
        #expect(!manager.cache.contains(other) && !manager.cache.contains(request))
    }

    @Test("storing bytes that are no image in memory throws a typed error; on disk alone they are kept as given")
    func notAnImage() async throws {
        let manager = try ImageManager(configuration: .init(disk: .init(directory: try temporaryDirectory("facade-bad")), diskSweepInterval: nil),
                                       loader: MockDataLoader())
        let request = ImageRequest(url: URL(string: "https://images.example/text.png")!)
        await #expect(throws: TesseraError.self) { try await manager.cache.store(Data("not an image".utf8), for: request, in: .memory) }
        try await manager.cache.store(Data("not an image".utf8), for: request, in: .disk)
        #expect(await manager.cache.cachedData(for: request) == Data("not an image".utf8))
        #expect(await manager.cache.cachedImage(for: request) == nil)
    }
}
