import Foundation
import Testing
@_spi(Internal) import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// Cache control per request: a cache key instead of the URL, each layer's reads and writes switched off
/// independently, and `returnCacheDataDontLoad`.
@Suite("Cache control per request")
struct CacheControlTests {
    static func url(_ name: String, token: String = "") -> URL {
        URL(string: "https://bucket.example/\(name).png" + (token.isEmpty ? "" : "?X-Signature=\(token)"))!
    }

    static func manager(_ loader: MockDataLoader, disk: URL?) throws -> ImageManager {
        let configuration = ImageManager.Configuration(disk: disk.map { DiskCache.Configuration(directory: $0) }, diskSweepInterval: nil)
        return try ImageManager(configuration: configuration, loader: loader)
    }

    /// A loader whose `name` answers a PNG fresh for ten minutes, and a manager with a disk cache on it.
    static func cached(_ name: String) throws -> (MockDataLoader, URL, ImageManager) {
        let loader = MockDataLoader()
        let url = Self.url(name)
        loader.set(.image(try pngBytes(), cacheControl: "max-age=600"), for: url)
        return (loader, url, try Self.manager(loader, disk: try temporaryDirectory("cache-control")))
    }

    @Test("a cache key is the identity: presigned URLs with new tokens share memory, disk and one download")
    func cacheKey() async throws {
        let loader = MockDataLoader()
        let first = Self.url("avatar", token: "one"), second = Self.url("avatar", token: "two"), third = Self.url("avatar", token: "three")
        for url in [first, second, third] { loader.set(.image(try pngBytes(), cacheControl: "max-age=600"), for: url) }
        let directory = try temporaryDirectory("cache-key")
        let manager = try Self.manager(loader, disk: directory)

        let a = try await manager.imageTask(for: ImageRequest(url: first, cacheKey: "avatars/42")).response
        let b = try await manager.imageTask(for: ImageRequest(url: second, cacheKey: "avatars/42")).response
        #expect(a.cacheType == .network && b.cacheType == .memory)
        let reopened = try Self.manager(loader, disk: directory)
        let c = try await reopened.imageTask(for: ImageRequest(url: third, cacheKey: "avatars/42")).response
        #expect(c.cacheType == .disk)
        #expect(loader.count(for: first) == 1 && loader.count(for: second) == 0 && loader.count(for: third) == 0)
        // Without the key, the URL is the identity again.
        _ = try await reopened.image(for: ImageRequest(url: third))
        #expect(loader.count(for: third) == 1)
        #expect(ImageManager.identity(of: nil, url: first) == first)
        #expect(ImageManager.identity(of: "avatars/42", url: first) == ImageManager.identity(of: "avatars/42", url: second))
    }

    @Test("requests for one cache key with different URLs share one download")
    func cacheKeyCoalesces() async throws {
        let loader = MockDataLoader()
        let gate = LoadGate()
        let first = Self.url("shared", token: "one"), second = Self.url("shared", token: "two")
        loader.set(.image(try pngBytes(), gate: gate), for: first)
        loader.set(.image(try pngBytes()), for: second)
        let manager = try Self.manager(loader, disk: nil)
        let one = manager.imageTask(for: ImageRequest(url: first, cacheKey: "k"))
        await loader.waitForLoads(of: first)
        let two = manager.imageTask(for: ImageRequest(url: second, cacheKey: "k"))
        await manager.waitForQueue { $0.waiters[ImageManager.identity(of: "k", url: first)] == 2 }
        gate.open()
        _ = try await (one.response, two.response)
        #expect(loader.count(for: first) == 1 && loader.count(for: second) == 0)
        #expect(manager.statistics.coalesced == 1)
    }

    @Test("skipping memory reads goes to disk; skipping memory writes leaves memory empty")
    func memorySwitches() async throws {
        let (loader, url, manager) = try Self.cached("m")

        let unwritten = try await manager.imageTask(for: ImageRequest(url: url, options: .disableMemoryCacheWrites)).response
        #expect(unwritten.cacheType == .network)
        #expect(!manager.cache.contains(ImageRequest(url: url), in: .memory))
        #expect(manager.cache.contains(ImageRequest(url: url), in: .disk))

        _ = try await manager.image(for: ImageRequest(url: url))
        #expect(manager.cache.contains(ImageRequest(url: url), in: .memory))
        let unread = try await manager.imageTask(for: ImageRequest(url: url, options: .disableMemoryCacheReads)).response
        #expect(unread.cacheType == .disk)
        #expect(loader.count(for: url) == 1)
    }

    @Test("skipping disk reads downloads again; skipping disk writes leaves the disk empty")
    func diskSwitches() async throws {
        let (loader, url, manager) = try Self.cached("d")

        let unwritten = try await manager.imageTask(for: ImageRequest(url: url, options: [.disableDiskCacheWrites, .disableMemoryCacheWrites])).response
        #expect(unwritten.cacheType == .network)
        #expect(!manager.cache.contains(ImageRequest(url: url)))

        _ = try await manager.image(for: ImageRequest(url: url, options: .disableMemoryCacheWrites))
        #expect(manager.cache.contains(ImageRequest(url: url), in: .disk))
        #expect(loader.count(for: url) == 2)
        let unread = try await manager.imageTask(for: ImageRequest(url: url, options: [.disableDiskCacheReads, .disableMemoryCacheReads])).response
        #expect(unread.cacheType == .network)
        #expect(loader.count(for: url) == 3)
        let cached = try await manager.imageTask(for: ImageRequest(url: url, options: .disableMemoryCacheReads)).response
        #expect(cached.cacheType == .disk && loader.count(for: url) == 3)
    }

    @Test("returnCacheDataDontLoad answers from memory or disk, and otherwise fails with offlineMiss without loading")
    func returnCacheDataDontLoad() async throws {
        let (loader, url, manager) = try Self.cached("offline")
        let request = ImageRequest(url: url, options: .returnCacheDataDontLoad)
        await #expect(throws: TesseraError(.fetching(.offlineMiss(url: url.absoluteString)))) {
            _ = try await manager.image(for: request)
        }
        #expect(loader.count(for: url) == 0)

        _ = try await manager.image(for: ImageRequest(url: url, options: .disableMemoryCacheWrites))
        #expect(try await manager.imageTask(for: request).response.cacheType == .disk)
        #expect(try await manager.imageTask(for: request).response.cacheType == .memory)
        #expect(loader.count(for: url) == 1)
        // May not read the disk and nothing in memory for this size: a miss, still without a load.
        let unreadable = ImageRequest(url: url, size: PixelSize(width: 4, height: 4), options: [.returnCacheDataDontLoad, .disableDiskCacheReads])
        await #expect(throws: TesseraError(.fetching(.offlineMiss(url: url.absoluteString)))) {
            _ = try await manager.image(for: unreadable)
        }
        #expect(loader.count(for: url) == 1)
    }
}
