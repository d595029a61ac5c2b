import Foundation
import Synchronization
import Testing
// Only the public API, as an app sees it: no `@testable`, no `@_spi`. Everything the cache protocols require
// (keys, entries, freshness, statistics, limits) must be constructible from here.
import Tessera
import TesseraTesting

/// `MemoryCaching` and `DiskCaching` implemented outside the library, by two small dictionary caches, and
/// given to an `ImageManager` in place of the default caches: the manager reads and writes them.
@Suite("Caches of your own: MemoryCaching and DiskCaching from outside the library")
struct CustomCacheTests {
    /// A memory cache on a dictionary, counting its hits, misses and insertions.
    final class DictionaryMemoryCache: MemoryCaching {
        private struct State {
            var images: [ImageKey: Bitmap] = [:]
            var hits = 0, misses = 0, evictions = 0
            var inserted: [ImageKey] = []
            var limits = MemoryCacheLimits(costLimit: 1 << 20, countLimit: 10)
        }

        private let state = Mutex(State())

        /// The keys inserted, in order.
        var inserted: [ImageKey] { state.withLock { $0.inserted } }

        func image(for key: ImageKey) -> Bitmap? {
            state.withLock { state in
                let image = state.images[key]
                if image == nil { state.misses += 1 } else { state.hits += 1 }
                return image
            }
        }

        func contains(_ key: ImageKey) -> Bool { state.withLock { $0.images[key] != nil } }

        func insert(_ image: Bitmap, for key: ImageKey) {
            state.withLock { state in
                state.images[key] = image
                state.inserted.append(key)
            }
        }

        func removeImage(for key: ImageKey) { state.withLock { _ = $0.images.removeValue(forKey: key) } }

        func removeAll() { state.withLock { $0.images = [:] } }

        /// Drops everything when over `cost`: a cache of its own may be as crude as it likes.
        func trim(toCost cost: Int) {
            state.withLock { state in
                guard state.images.values.reduce(0, { $0 + $1.layout.byteCount }) > cost else { return }
                state.evictions += state.images.count
                state.images = [:]
            }
        }

        var totalCost: Int { state.withLock { $0.images.values.reduce(0) { $0 + $1.layout.byteCount } } }

        var statistics: MemoryCacheStatistics {
            state.withLock { state in
                MemoryCacheStatistics(count: state.images.count, totalCost: state.images.values.reduce(0) { $0 + $1.layout.byteCount },
                                      hits: state.hits, misses: state.misses, evictions: state.evictions)
            }
        }

        var configuration: MemoryCacheLimits { state.withLock { $0.limits } }

        func setLimits(_ configuration: MemoryCacheLimits) { state.withLock { $0.limits = configuration } }
    }

    /// A "disk" cache on a dictionary, counting its reads and writes.
    final class DictionaryDiskCache: DiskCaching {
        private struct State {
            var entries: [URL: DiskCacheEntry] = [:]
            var hits = 0, misses = 0, stores = 0, lookups = 0
            var sizeLimit = 1 << 20
            var ageLimit: Duration?
        }

        private let state = Mutex(State())

        /// How many times ``store(_:info:for:)`` was called.
        var stores: Int { state.withLock { $0.stores } }
        /// How many times ``contains(_:)`` was asked.
        var lookups: Int { state.withLock { $0.lookups } }

        func contains(_ url: URL) -> Bool {
            state.withLock { state in
                state.lookups += 1
                return state.entries[url] != nil
            }
        }

        func entry(for url: URL) async -> DiskCacheEntry? {
            state.withLock { state in
                let entry = state.entries[url]
                if entry == nil { state.misses += 1 } else { state.hits += 1 }
                return entry
            }
        }

        func store(_ data: Data, info: HTTPCacheInfo, for url: URL) async throws(TesseraError) {
            state.withLock { state in
                state.entries[url] = DiskCacheEntry(data: data, info: info)
                state.stores += 1
            }
        }

        func updateInfo(_ info: HTTPCacheInfo, for url: URL) async throws(TesseraError) {
            state.withLock { $0.entries[url]?.info = info }
        }

        func remove(_ url: URL) async { state.withLock { _ = $0.entries.removeValue(forKey: url) } }

        func removeAll() async throws(TesseraError) { state.withLock { $0.entries = [:] } }

        var statistics: DiskCacheStatistics {
            state.withLock { state in
                DiskCacheStatistics(directory: "memory:", count: state.entries.count,
                                    totalBytes: state.entries.values.reduce(0) { $0 + $1.data.count },
                                    sizeLimit: state.sizeLimit, ageLimit: state.ageLimit,
                                    oldestStoredAt: state.entries.values.map(\.info.storedAt).min(),
                                    hits: state.hits, misses: state.misses)
            }
        }

        func setLimits(sizeLimit: Int, ageLimit: Duration?) {
            state.withLock { state in
                state.sizeLimit = sizeLimit
                state.ageLimit = ageLimit
            }
        }
    }

    static let url = URL(string: "https://images.example/custom.png")!

    @Test("an ImageManager over caches of your own stores in both, answers from memory, then from the disk cache")
    func managerUsesCustomCaches() async throws {
        let image = try Bitmap.drawing(size: PixelSize(width: 64, height: 48)) { $0.fill(with: Color(red: 1, green: 0, blue: 0)) }
        let loader = MockDataLoader()
        loader.set(.image(try PNGEncoder().encode(image), cacheControl: "max-age=3600"), for: Self.url)
        let memory = DictionaryMemoryCache(), disk = DictionaryDiskCache()
        let configuration = ImageManager.Configuration(disk: nil, diskSweepInterval: nil)
        let manager = ImageManager(configuration: configuration, loader: loader, memoryCache: memory, diskCache: disk)
        let request = ImageRequest(url: Self.url, size: PixelSize(width: 32, height: 24))
        let key = ImageKey(url: Self.url, size: PixelSize(width: 32, height: 24))

        let downloaded = try await manager.imageTask(for: request).response
        #expect(downloaded.cacheType == .network)
        #expect(downloaded.image.width == 32 && downloaded.image.height == 24)
        #expect(memory.inserted == [key], "the decoded variant went into the memory cache of our own")
        #expect(disk.stores == 1 && disk.contains(Self.url), "the downloaded bytes went into the disk cache of our own")
        #expect(disk.lookups >= 1 && disk.statistics.misses == 0,
                "the job asked the disk cache's index before downloading, and read nothing it does not hold")

        let remembered = try await manager.imageTask(for: request).response
        #expect(remembered.cacheType == .memory)
        #expect(memory.statistics == MemoryCacheStatistics(count: 1, totalCost: downloaded.image.layout.byteCount, hits: 1, misses: 1))

        // Another manager with an empty memory cache and the same disk cache: answered from the disk cache.
        let fresh = DictionaryMemoryCache()
        let second = ImageManager(configuration: configuration, loader: loader, memoryCache: fresh, diskCache: disk)
        let fromDisk = try await second.imageTask(for: request).response
        #expect(fromDisk.cacheType == .disk)
        #expect(fromDisk.image.hasSamePixels(as: downloaded.image))
        #expect(fresh.inserted == [key])
        #expect(disk.statistics.hits == 1)
        // A prefetch of what the disk cache holds asks it (`contains`) and loads nothing.
        let lookups = disk.lookups
        await second.prefetch([Self.url])
        await second.prefetchesFinished()
        #expect(disk.lookups > lookups)
        #expect(loader.count(for: Self.url) == 1, "one download in all")

        // The manager's own entry points reach the caches too.
        #expect(manager.statistics.memoryHits == 1 && manager.statistics.networkResponses == 1)
        #expect(second.statistics.diskResponses == 1)
        try await second.clearDiskCache()
        #expect(disk.statistics.count == 0 && !disk.contains(Self.url))
        second.clearMemoryCache()
        #expect(fresh.statistics.count == 0)
    }
}
