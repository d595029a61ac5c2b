import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `stale-while-revalidate` and `stale-if-error` (RFC 5861), and the `.staleWhileRevalidate` cache policy,
/// with scripted loads: the stale copy first, the new image after it through the task's events.
@Suite("ImageManager: stale-while-revalidate and stale-if-error")
struct StaleWhileRevalidateTests {
    static let url = URL(string: "https://origin.example/photo.png")!
    static let red = Color(red: 1, green: 0, blue: 0)
    static let green = Color(red: 0, green: 1, blue: 0)
    /// BGRA pixels of the two colours.
    static let redPixel: [UInt8] = [0, 0, 255, 255]
    static let greenPixel: [UInt8] = [0, 255, 0, 255]

    /// A manager over `loader` with a disk cache in `directory` and the test's clock.
    static func manager(_ loader: MockDataLoader, directory: URL, clock: TestClock) throws -> ImageManager {
        try ImageManager(configuration: .init(disk: .init(directory: directory), diskSweepInterval: nil), loader: loader,
                         now: clock.closure)
    }

    /// A red image cached on disk in a fresh directory under `cacheControl` with ETag `"red"`; returns the
    /// loader, the directory and the clock (not yet moved).
    static func cachedRed(_ cacheControl: String) async throws -> (MockDataLoader, URL, TestClock) {
        let loader = MockDataLoader()
        loader.set(.image(try pngBytes(red), cacheControl: cacheControl, etag: "\"red\""), for: url)
        let directory = try temporaryDirectory("swr")
        let clock = TestClock()
        let first = try await manager(loader, directory: directory, clock: clock).imageTask(for: ImageRequest(url: url)).response
        #expect(first.cacheType == .network)
        return (loader, directory, clock)
    }

    /// Every event of `events` until the sequence ends.
    static func collect(_ events: AsyncStream<ImageTask.Event>) async -> [ImageTask.Event] {
        var all: [ImageTask.Event] = []
        for await event in events { all.append(event) }
        return all
    }

    static func refreshed(_ events: [ImageTask.Event]) -> [ImageResponse] {
        events.compactMap { if case .refreshed(let response) = $0 { response } else { nil } }
    }

    static func finishedCount(_ events: [ImageTask.Event]) -> Int {
        events.count { if case .finished = $0 { true } else { false } }
    }

    @Test("Cache-Control parses stale-while-revalidate and stale-if-error; invalid values leave them out")
    func parsing() {
        let control = CacheControl(parsing: "max-age=0, stale-while-revalidate=60, stale-if-error=\"600\"")
        #expect(control.maxAge == 0 && control.staleWhileRevalidate == 60 && control.staleIfError == 600)
        let invalid = CacheControl(parsing: "stale-while-revalidate=-1, stale-if-error")
        #expect(invalid.staleWhileRevalidate == nil && invalid.staleIfError == nil)

        let now = Date(timeIntervalSince1970: 1_000_000)
        let response = LoadResponse(url: Self.url, statusCode: 200,
                                    headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60, stale-if-error=600"])
        let info = HTTPCacheInfo(response: response, requestedURL: Self.url, now: now, defaultMaxAge: .seconds(1))
        #expect(info.staleWhileRevalidate == 60 && info.staleIfError == 600)
        #expect(!info.isUsableWhileRevalidating(at: now.addingTimeInterval(5)), "fresh: no revalidation needed")
        #expect(info.isUsableWhileRevalidating(at: now.addingTimeInterval(69)))
        #expect(!info.isUsableWhileRevalidating(at: now.addingTimeInterval(70)))
        #expect(info.isUsableIfError(at: now.addingTimeInterval(609)) && !info.isUsableIfError(at: now.addingTimeInterval(610)))

        // A 304 without Cache-Control keeps the windows; one with it replaces them.
        let bare = info.refreshed(by: LoadResponse(url: Self.url, statusCode: 304), now: now, defaultMaxAge: .seconds(1))
        #expect(bare.staleWhileRevalidate == 60 && bare.staleIfError == 600)
        let replaced = info.refreshed(by: LoadResponse(url: Self.url, statusCode: 304, headers: ["Cache-Control": "max-age=5"]),
                                      now: now, defaultMaxAge: .seconds(1))
        #expect(replaced.staleWhileRevalidate == nil && replaced.staleIfError == nil)
    }

    @Test("the windows are stored with the disk copy; an entry written before they existed still reads")
    func persisted() async throws {
        let directory = try temporaryDirectory("swr-disk")
        let info = HTTPCacheInfo(url: Self.url.absoluteString, etag: "\"e\"", storedAt: Date(timeIntervalSince1970: 100),
                                 expiresAt: Date(timeIntervalSince1970: 110), staleWhileRevalidate: 60, staleIfError: 600)
        try await DiskCache(configuration: .init(directory: directory)).store(Data(try pngBytes()), info: info, for: Self.url)
        let reopened = try #require(await DiskCache(configuration: .init(directory: directory)).entry(for: Self.url))
        #expect(reopened.info == info)

        // The file layout of an older entry: `TSC1`, the JSON's length (32-bit little-endian), the JSON, the body.
        let json = Data(#"{"url":"https://origin.example/photo.png","etag":"\"e\"","storedAt":100,"expiresAt":110}"#.utf8)
        var file = Data("TSC1".utf8)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(json)
        file.append(Data([1, 2, 3]))
        let old = try #require(DiskCacheFile.decode(file))
        #expect(old.info.etag == "\"e\"" && old.info.expiresAt == Date(timeIntervalSince1970: 110))
        #expect(old.info.staleWhileRevalidate == nil && old.info.staleIfError == nil)
        #expect(old.data == Data([1, 2, 3]))
    }

    @Test("within stale-while-revalidate: the stale image at once, then the new one as .refreshed; caches updated")
    func staleThenRefreshed() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10, stale-while-revalidate=60")
        clock.advance(by: 30)
        // The origin has a new image; its answer waits at a gate until the stale answer is in.
        let gate = LoadGate()
        let greenBytes = try pngBytes(Self.green, width: 40, height: 30)
        loader.set(.init(headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": "\"green\""],
                         body: Data(greenBytes), gate: gate), for: Self.url)
        let manager = try Self.manager(loader, directory: directory, clock: clock)
        let task = manager.imageTask(for: ImageRequest(url: Self.url))
        let events = task.events
        let first = try await task.response
        #expect(first.cacheType == .disk)
        #expect(first.image.pixel(x: 1, y: 1) == Self.redPixel)
        #expect(first.image.layout.size == PixelSize(width: 64, height: 48))

        await loader.waitForLoads(of: Self.url, count: 2)
        #expect(loader.requests.last?.ifNoneMatch == "\"red\"", "a conditional request with the stored validator")
        gate.open()
        let all = await Self.collect(events)
        #expect(Self.finishedCount(all) == 1)
        let refreshed = Self.refreshed(all)
        #expect(refreshed.count == 1)
        let fresh = try #require(refreshed.first)
        #expect(fresh.cacheType == .network && fresh.statusCode == 200)
        #expect(fresh.image.layout.size == PixelSize(width: 40, height: 30))
        #expect(fresh.image.pixel(x: 1, y: 1) == Self.greenPixel)
        // `response` still answers the first (stale) image.
        #expect(try await task.response.cacheType == .disk)

        // The memory cache holds the new image, the disk the new bytes with their validator and freshness.
        #expect(manager.cachedImage(for: Self.url)?.pixel(x: 1, y: 1) == Self.greenPixel)
        let entry = try #require(await DiskCache(configuration: .init(directory: directory)).entry(for: Self.url))
        #expect(entry.data == Data(greenBytes))
        #expect(entry.info.etag == "\"green\"")
        #expect(entry.info.isFresh(at: clock.now))
    }

    @Test("within stale-while-revalidate, a 304: the stale image, no second image, the copy fresh again")
    func notModifiedDeliversNothingMore() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10, stale-while-revalidate=60")
        clock.advance(by: 30)
        let manager = try Self.manager(loader, directory: directory, clock: clock)
        let task = manager.imageTask(for: ImageRequest(url: Self.url))
        let events = task.events
        let first = try await task.response
        #expect(first.cacheType == .disk && first.image.pixel(x: 1, y: 1) == Self.redPixel)
        let all = await Self.collect(events)
        #expect(Self.refreshed(all).isEmpty)
        #expect(Self.finishedCount(all) == 1)
        #expect(loader.count(for: Self.url) == 2)
        #expect(manager.statistics.notModified == 1)
        let entry = try #require(await DiskCache(configuration: .init(directory: directory)).entry(for: Self.url))
        #expect(entry.info.isFresh(at: clock.now), "the 304 refreshed the copy")
        #expect(entry.info.staleWhileRevalidate == 60)
    }

    @Test("past max-age + stale-while-revalidate the request waits for the origin: the new image, no .refreshed")
    func pastTheWindowWaits() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10, stale-while-revalidate=60")
        clock.advance(by: 71)
        loader.set(.image(try pngBytes(Self.green), cacheControl: "max-age=10", etag: "\"green\""), for: Self.url)
        let task = try Self.manager(loader, directory: directory, clock: clock).imageTask(for: ImageRequest(url: Self.url))
        let events = task.events
        let response = try await task.response
        #expect(response.cacheType == .network && response.image.pixel(x: 1, y: 1) == Self.greenPixel)
        let all = await Self.collect(events)
        #expect(Self.refreshed(all).isEmpty && Self.finishedCount(all) == 1)
    }

    @Test(".staleWhileRevalidate answers a stale copy at once even when the origin did not allow it; .useCache waits")
    func policy() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10")
        clock.advance(by: 30)
        let gate = LoadGate()
        loader.set(.init(headers: ["Cache-Control": "max-age=10", "ETag": "\"green\""], body: Data(try pngBytes(Self.green)), gate: gate),
                   for: Self.url)
        let manager = try Self.manager(loader, directory: directory, clock: clock)
        let task = manager.imageTask(for: ImageRequest(url: Self.url, cachePolicy: .staleWhileRevalidate))
        let events = task.events
        // Answered while the origin's answer is still held at the gate.
        let first = try await task.response
        #expect(first.cacheType == .disk && first.image.pixel(x: 1, y: 1) == Self.redPixel)
        gate.open()
        let refreshed = Self.refreshed(await Self.collect(events))
        #expect(refreshed.map { $0.image.pixel(x: 1, y: 1) } == [Self.greenPixel])

        // The same stale state with the default policy: the request waits for the new image.
        let (other, otherDirectory, otherClock) = try await Self.cachedRed("max-age=10")
        otherClock.advance(by: 30)
        other.set(.image(try pngBytes(Self.green), cacheControl: "max-age=10", etag: "\"green\""), for: Self.url)
        let waited = try await Self.manager(other, directory: otherDirectory, clock: otherClock)
            .imageTask(for: ImageRequest(url: Self.url)).response
        #expect(waited.cacheType == .network && waited.image.pixel(x: 1, y: 1) == Self.greenPixel)
    }

    @Test("within stale-if-error: a refused connection, a timeout or a 503 answers the stale copy; a 404 and an expired window fail")
    func staleIfError() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10, stale-if-error=600")
        clock.advance(by: 30)
        let address = Self.url.absoluteString
        for failure in [TesseraError(.fetching(.connectionRefused(url: address, recently: false))),
                        TesseraError(.fetching(.timeout(url: address)))] {
            loader.set(.init(failure: failure), for: Self.url)
            let manager = try Self.manager(loader, directory: directory, clock: clock)
            let response = try await manager.imageTask(for: ImageRequest(url: Self.url)).response
            #expect(response.cacheType == .disk && response.image.pixel(x: 1, y: 1) == Self.redPixel, "\(failure)")
        }
        loader.set(.init(status: 503), for: Self.url)
        let unavailable = try await Self.manager(loader, directory: directory, clock: clock).image(for: Self.url)
        #expect(unavailable.pixel(x: 1, y: 1) == Self.redPixel)
        #expect(loader.count(for: Self.url) == 4, "the origin was asked each time")

        loader.set(.init(status: 404), for: Self.url)
        await #expect(throws: TesseraError(.fetching(.httpStatus(code: 404, url: address)))) {
            _ = try await Self.manager(loader, directory: directory, clock: clock).image(for: Self.url)
        }
        clock.advance(by: 600)
        loader.set(.init(status: 503), for: Self.url)
        await #expect(throws: TesseraError(.fetching(.httpStatus(code: 503, url: address)))) {
            _ = try await Self.manager(loader, directory: directory, clock: clock).image(for: Self.url)
        }
    }

    @Test("without stale-if-error a failing origin is an error even with a stale copy on disk")
    func noStaleIfError() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10")
        clock.advance(by: 30)
        loader.set(.init(status: 503), for: Self.url)
        await #expect(throws: TesseraError(.fetching(.httpStatus(code: 503, url: Self.url.absoluteString)))) {
            _ = try await Self.manager(loader, directory: directory, clock: clock).image(for: Self.url)
        }
    }

    @Test("a failed background revalidation delivers nothing and keeps the stale copy")
    func failedRevalidation() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10, stale-while-revalidate=60")
        clock.advance(by: 30)
        loader.set(.init(status: 500), for: Self.url)
        let manager = try Self.manager(loader, directory: directory, clock: clock)
        let task = manager.imageTask(for: ImageRequest(url: Self.url))
        let events = task.events
        #expect(try await task.response.image.pixel(x: 1, y: 1) == Self.redPixel)
        let all = await Self.collect(events)
        #expect(Self.refreshed(all).isEmpty && Self.finishedCount(all) == 1)
        #expect(loader.count(for: Self.url) == 2, "the revalidation was tried")
        let entry = try #require(await DiskCache(configuration: .init(directory: directory)).entry(for: Self.url))
        #expect(entry.info.etag == "\"red\"" && !entry.info.isFresh(at: clock.now))
    }

    @Test("cancelling after the stale answer ends the events without .refreshed; the caches still get the new image")
    func cancelAfterAnswer() async throws {
        let (loader, directory, clock) = try await Self.cachedRed("max-age=10, stale-while-revalidate=60")
        clock.advance(by: 30)
        let gate = LoadGate()
        let greenBytes = try pngBytes(Self.green)
        loader.set(.init(headers: ["Cache-Control": "max-age=10", "ETag": "\"green\""], body: Data(greenBytes), gate: gate), for: Self.url)
        let manager = try Self.manager(loader, directory: directory, clock: clock)
        let task = manager.imageTask(for: ImageRequest(url: Self.url))
        let events = task.events
        #expect(try await task.response.cacheType == .disk)
        task.cancel()
        let all = await Self.collect(events)
        #expect(Self.refreshed(all).isEmpty && Self.finishedCount(all) == 1)
        await loader.waitForLoads(of: Self.url, count: 2)      // the revalidation's job is under way
        gate.open()
        await manager.waitForQueue { $0.inProgress.isEmpty }
        let entry = try #require(await DiskCache(configuration: .init(directory: directory)).entry(for: Self.url))
        #expect(entry.data == Data(greenBytes), "the revalidation went on and stored the new bytes")
    }

    @Test("image(for:) and dataResponse(for:) answer stale within stale-while-revalidate and revalidate in the background")
    func backgroundWithoutTask() async throws {
        for useData in [false, true] {
            let (loader, directory, clock) = try await Self.cachedRed("max-age=10, stale-while-revalidate=60")
            clock.advance(by: 30)
            let gate = LoadGate()
            let greenBytes = try pngBytes(Self.green)
            loader.set(.init(headers: ["Cache-Control": "max-age=10", "ETag": "\"green\""], body: Data(greenBytes), gate: gate),
                       for: Self.url)
            let manager = try Self.manager(loader, directory: directory, clock: clock)
            if useData {
                let stale = try await manager.dataResponse(for: Self.url)
                #expect(stale.cacheType == .disk && stale.etag == "\"red\"")
            } else {
                #expect(try await manager.image(for: Self.url).pixel(x: 1, y: 1) == Self.redPixel)
            }
            await loader.waitForLoads(of: Self.url, count: 2)
            gate.open()
            await manager.waitForQueue { $0.inProgress.isEmpty }
            let entry = try #require(await DiskCache(configuration: .init(directory: directory)).entry(for: Self.url))
            #expect(entry.data == Data(greenBytes), "the background revalidation stored the new bytes (data: \(useData))")
            // The next request of the same manager gets the new bytes from the fresh disk copy.
            let next = try await manager.dataResponse(for: Self.url)
            #expect(next.cacheType == .disk && next.etag == "\"green\"" && next.data == Data(greenBytes))
        }
    }
}
