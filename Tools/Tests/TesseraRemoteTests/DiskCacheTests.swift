import Foundation
import Synchronization
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

@Suite("DiskCache: files, index, limits, corruption")
struct DiskCacheTests {
    static func url(_ name: String) -> URL { URL(string: "http://127.0.0.1/\(name)")! }

    static func info(_ url: URL, at date: Date) -> HTTPCacheInfo {
        HTTPCacheInfo(url: url.absoluteString, storedAt: date, expiresAt: date.addingTimeInterval(3600))
    }

    @Test("SHA-256 matches the standard test vectors; file names never come from the URL's text")
    func sha256() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(String(repeating: "a", count: 1000))
            == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        let sneaky = URL(string: "http://127.0.0.1/../../etc/passwd")!
        #expect(DiskCacheFile.isEntryName(DiskCacheFile.name(for: sneaky)))
    }

    @Test("store, read back, index rebuilt by a new instance from file metadata; no temporary files left")
    func roundTripAndIndex() async throws {
        let directory = try temporaryDirectory("disk")
        let clock = TestClock()
        let cache = try DiskCache(configuration: .init(directory: directory), now: clock.closure)
        let a = Self.url("a.png")
        try await cache.store(Data([1, 2, 3]), info: Self.info(a, at: clock.now), for: a)
        #expect(cache.contains(a))
        #expect(cache.contains(Self.url("b.png")) == false)
        let entry = try #require(await cache.entry(for: a))
        #expect(entry.data == Data([1, 2, 3]))
        #expect(entry.info.url == a.absoluteString)

        // Leftover of a crash mid-write: removed on open.
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(".tmp-crashed").path, contents: Data([9]))
        let reopened = try DiskCache(configuration: .init(directory: directory), now: clock.closure)
        #expect(reopened.contains(a))
        #expect(reopened.statistics.count == 1)
        #expect(reopened.statistics.totalBytes == cache.statistics.totalBytes)
        #expect(reopened.statistics.oldestStoredAt == clock.now)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [DiskCacheFile.name(for: a)])

        try await reopened.removeAll()
        #expect(reopened.statistics.count == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("contains and statistics answer while another thread holds the lock of file changes")
    func indexReadsDoNotWaitForFileChanges() async throws {
        let clock = TestClock()
        let cache = try DiskCache(configuration: .init(directory: try temporaryDirectory("staging")), now: clock.closure)
        let a = Self.url("a.png")
        try await cache.store(Data([1, 2, 3]), info: Self.info(a, at: clock.now), for: a)
        let answered = DispatchSemaphore(value: 0)
        let seen = Mutex<(Bool, Int)?>(nil)
        // The file lock is held (as by a store's rename or an eviction's unlinks) until the reader has answered,
        // so a reader that needed it would never answer and the wait below would give up.
        let waited = cache.whileChangingFiles { () -> DispatchTimeoutResult in
            Thread.detachNewThread {
                seen.withLock { $0 = (cache.contains(a), cache.statistics.count) }
                answered.signal()
            }
            return answered.wait(timeout: .now() + 60)
        }
        #expect(waited == .success)
        #expect(seen.withLock { $0.map { $0.0 && $0.1 == 1 } } == true)
    }

    @Test("size limit: least recently accessed first, on insert; a body over the whole limit is not stored")
    func sizeEviction() async throws {
        let clock = TestClock()
        let body = Data(repeating: 1, count: 1000)
        let probe = try DiskCacheFile.encode(body, info: Self.info(Self.url("a"), at: clock.now)).count
        let cache = try DiskCache(configuration: .init(directory: try temporaryDirectory("size"), sizeLimit: probe * 3 + 10),
                                  now: clock.closure)
        for name in ["a", "b", "c"] {
            try await cache.store(body, info: Self.info(Self.url(name), at: clock.now), for: Self.url(name))
            clock.advance(by: 1)
        }
        _ = await cache.entry(for: Self.url("a"))             // a is now the most recently accessed
        clock.advance(by: 1)
        try await cache.store(body, info: Self.info(Self.url("d"), at: clock.now), for: Self.url("d"))
        #expect(cache.contains(Self.url("b")) == false)
        #expect(["a", "c", "d"].allSatisfy { cache.contains(Self.url($0)) })
        #expect(cache.statistics.evictions == 1)
        #expect(cache.statistics.totalBytes <= probe * 3 + 10)
        #expect(FileManager.default.fileExists(atPath: cache.filePath(for: Self.url("b"))) == false)

        try await cache.store(Data(repeating: 0, count: probe * 4), info: Self.info(Self.url("huge"), at: clock.now), for: Self.url("huge"))
        #expect(cache.contains(Self.url("huge")) == false)
        #expect(cache.statistics.count == 3)

        // Recency survives a reopen (access times are written to the files).
        let reopened = try DiskCache(configuration: .init(directory: URL(fileURLWithPath: cache.path), sizeLimit: probe * 3 + 10),
                                     now: clock.closure)
        #expect(reopened.namesByRecency == ["c", "a", "d"].map { DiskCacheFile.name(for: Self.url($0)) })
        reopened.setLimits(sizeLimit: probe * 2 + 10, ageLimit: nil)
        #expect(reopened.contains(Self.url("c")) == false)
        #expect(reopened.statistics.count == 2)
    }

    @Test("age limit: entries older than the limit go on insert and on sweep (injected clock, no waiting)")
    func ageEviction() async throws {
        let clock = TestClock()
        let cache = try DiskCache(configuration: .init(directory: try temporaryDirectory("age"), ageLimit: .seconds(100)), now: clock.closure)
        try await cache.store(Data([1]), info: Self.info(Self.url("old"), at: clock.now), for: Self.url("old"))
        clock.advance(by: 60)
        try await cache.store(Data([2]), info: Self.info(Self.url("mid"), at: clock.now), for: Self.url("mid"))
        clock.advance(by: 50)                                  // old is 110 s old, mid 50 s
        #expect(cache.sweep() == 1)
        #expect(cache.contains(Self.url("old")) == false)
        #expect(cache.contains(Self.url("mid")))
        clock.advance(by: 60)                                  // mid is 110 s old
        try await cache.store(Data([3]), info: Self.info(Self.url("new"), at: clock.now), for: Self.url("new"))
        #expect(cache.contains(Self.url("mid")) == false)
        #expect(cache.contains(Self.url("new")))
        #expect(cache.statistics.evictions == 2)
    }

    @Test("an unreadable file is removed and reported as a miss")
    func corruptHeader() async throws {
        let cache = try DiskCache(configuration: .init(directory: try temporaryDirectory("corrupt")))
        let a = Self.url("a")
        try await cache.store(Data([1, 2]), info: Self.info(a, at: Date()), for: a)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: cache.filePath(for: a)))
        #expect(await cache.entry(for: a) == nil)
        #expect(cache.contains(a) == false)
        #expect(FileManager.default.fileExists(atPath: cache.filePath(for: a)) == false)
    }

    @Test("a cached file that fails to decode is removed and fetched again")
    func corruptImageRefetched() async throws {
        try await Origin.with { origin in
            origin.set("/img.png", .init(body: try pngBytes(), cacheControl: "max-age=3600"))
            let directory = try temporaryDirectory("refetch")
            let url = origin.url("/img.png")
            let first = try makeManager(directory: directory)
            _ = try await first.image(for: url)

            // Keep the header valid, break the image bytes.
            let disk = try DiskCache(configuration: .init(directory: directory))
            let entry = try #require(await disk.entry(for: url))
            try await disk.store(Data(entry.data.prefix(8)) + Data(repeating: 0xAB, count: 64), info: entry.info, for: url)

            let second = try makeManager(directory: directory)
            let image = try await second.image(for: url)
            #expect(image.layout.size == PixelSize(width: 64, height: 48))
            #expect(origin.count("/img.png") == 2)
            #expect(second.statistics.corruptRefetches == 1)
            let repaired = try #require(await disk.entry(for: url))
            #expect(repaired.data == Data(try pngBytes()))
        }
    }

    @Test("manager thresholds and clearing")
    func managerMaintenance() async throws {
        try await Origin.with { origin in
            origin.set("/m.png", .init(body: try pngBytes()))
            let manager = try makeManager()
            let url = origin.url("/m.png")
            _ = try await manager.image(for: url)
            #expect(manager.cachedImage(for: url) != nil)
            // Limits are tuned through the caches' own API (the protocols), never a downcast.
            let memory = try #require(manager.memoryCache)
            let disk = try #require(manager.diskCache)
            memory.setLimits(MemoryCache.Configuration(costLimit: 100, countLimit: 10))
            #expect(manager.cachedImage(for: url) == nil)
            #expect(memory.configuration.costLimit == 100 && memory.statistics.count == 0)
            disk.setLimits(sizeLimit: 10, ageLimit: nil)
            #expect(manager.isCachedOnDisk(url) == false)
            #expect(disk.statistics.count == 0 && disk.statistics.sizeLimit == 10)
            disk.setLimits(sizeLimit: 1 << 20, ageLimit: nil)
            _ = try await manager.image(for: url)
            #expect(manager.isCachedOnDisk(url))
            try await manager.clearDiskCache()
            #expect(manager.isCachedOnDisk(url) == false)
        }
    }

    @Test("concurrent stores, reads, removals and evictions: the index and the files name the same entries")
    func concurrentChangesKeepIndexAndFilesInStep() async throws {
        let directory = try temporaryDirectory("disk-concurrent")
        // Room for about 8 of the 24 bodies: most stores evict.
        let cache = try DiskCache(configuration: .init(directory: directory, sizeLimit: 8 * 1200))
        let urls = (0..<24).map { Self.url("c\($0).png") }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(task))
                    for _ in 0..<300 {
                        let url = urls[Int(generator.next() % UInt64(urls.count))]
                        switch generator.next() % 4 {
                        case 0, 1: try? await cache.store(Data(repeating: UInt8(task), count: 1000), info: Self.info(url, at: Date()), for: url)
                        case 2: _ = await cache.entry(for: url)
                        default: await cache.remove(url)
                        }
                    }
                }
            }
        }
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        let indexed = Set(urls.filter { cache.contains($0) }.map { DiskCacheFile.name(for: $0) })
        #expect(files == indexed, "files without an index entry: \(files.subtracting(indexed).count), index entries without a file: \(indexed.subtracting(files).count)")
        #expect(cache.statistics.count == indexed.count)
        #expect(cache.statistics.totalBytes <= 8 * 1200)
    }
}
