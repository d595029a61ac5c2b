import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

@Suite("ImageManager: HTTP freshness, revalidation, offline")
struct FetchFreshnessTests {
    @Test("a fresh disk copy (max-age) is used without asking the origin; a stale one is revalidated with 304")
    func maxAgeThenETag() async throws {
        try await Origin.with { origin in
            origin.set("/v.png", .init(body: try pngBytes(), cacheControl: "max-age=60", etag: "\"v1\""))
            let clock = TestClock()
            let directory = try temporaryDirectory("fresh")
            let url = origin.url("/v.png")
            _ = try await makeManager(directory: directory, clock: clock).image(for: url)
            #expect(origin.count("/v.png") == 1)

            // A new manager (empty memory) on the same disk, within max-age: no request at all.
            let second = try makeManager(directory: directory, clock: clock)
            _ = try await second.image(for: url)
            #expect(origin.count("/v.png") == 1)
            #expect(second.statistics.diskHits == 1)

            // Past max-age: one conditional request, answered 304, the disk copy is served and refreshed.
            clock.advance(by: 61)
            let third = try makeManager(directory: directory, clock: clock)
            let image = try await third.image(for: url)
            #expect(image.layout.size == PixelSize(width: 64, height: 48))
            #expect(origin.count("/v.png") == 2)
            #expect(origin.arrivals.last?.ifNoneMatch == "\"v1\"")
            #expect(third.statistics.notModified == 1)

            // Refreshed for another 60 s by the 304.
            clock.advance(by: 30)
            _ = try await makeManager(directory: directory, clock: clock).image(for: url)
            #expect(origin.count("/v.png") == 2)
        }
    }

    @Test("Last-Modified revalidates with If-Modified-Since; a changed resource replaces the copy")
    func lastModified() async throws {
        try await Origin.with { origin in
            let stamp = "Tue, 14 Nov 2023 22:13:20 GMT"
            origin.set("/lm.png", .init(body: try pngBytes(Color(red: 1, green: 0, blue: 0)), cacheControl: "no-cache", lastModified: stamp))
            let directory = try temporaryDirectory("lm")
            let url = origin.url("/lm.png")
            let red = try await makeManager(directory: directory).image(for: url)
            #expect(red.pixel(x: 1, y: 1) == [0, 0, 255, 255])

            // no-cache: every use revalidates; unchanged → 304.
            _ = try await makeManager(directory: directory).image(for: url)
            #expect(origin.arrivals.map(\.ifModifiedSince) == [nil, stamp])

            // Changed at the origin: a full 200 replaces the disk copy.
            let newer = "Wed, 15 Nov 2023 22:13:20 GMT"
            origin.set("/lm.png", .init(body: try pngBytes(Color(red: 0, green: 1, blue: 0)), cacheControl: "no-cache", lastModified: newer))
            let green = try await makeManager(directory: directory).image(for: url)
            #expect(green.pixel(x: 1, y: 1) == [0, 255, 0, 255])
            let entry = try #require(await DiskCache(configuration: .init(directory: directory)).entry(for: url))
            #expect(entry.info.lastModified == newer)
        }
    }

    @Test("with an ETag and a Last-Modified date, revalidation asks If-None-Match alone; a new tag within the same second replaces the copy")
    func entityTagDecidesRevalidation() async throws {
        try await Origin.with { origin in
            let stamp = "Tue, 14 Nov 2023 22:13:20 GMT"
            origin.set("/both.png", .init(body: try pngBytes(Color(red: 1, green: 0, blue: 0)), cacheControl: "no-cache",
                                          etag: "\"one\"", lastModified: stamp))
            let directory = try temporaryDirectory("both")
            let url = origin.url("/both.png")
            _ = try await makeManager(directory: directory).image(for: url)
            // Replaced within the same second: the date is the same, the tag is not.
            origin.set("/both.png", .init(body: try pngBytes(Color(red: 0, green: 1, blue: 0)), cacheControl: "no-cache",
                                          etag: "\"two\"", lastModified: stamp))
            let green = try await makeManager(directory: directory).image(for: url)
            #expect(green.pixel(x: 1, y: 1) == [0, 255, 0, 255])
            #expect(origin.arrivals.map(\.ifNoneMatch) == [nil, "\"one\""])
            #expect(origin.arrivals.map(\.ifModifiedSince) == [nil, nil], "If-Modified-Since is not sent beside If-None-Match")
        }
    }

    @Test("no-store responses are served but never written to disk")
    func noStore() async throws {
        try await Origin.with { origin in
            origin.set("/ns.png", .init(body: try pngBytes(), cacheControl: "no-store"))
            let manager = try makeManager()
            _ = try await manager.image(for: origin.url("/ns.png"))
            #expect(manager.isCachedOnDisk(origin.url("/ns.png")) == false)
        }
    }

    @Test("offline: stale copies are served, missing ones fail with .offlineMiss, the origin is never asked")
    func offline() async throws {
        try await Origin.with { origin in
            origin.set("/o.png", .init(body: try pngBytes(), cacheControl: "max-age=1"))
            let clock = TestClock()
            let directory = try temporaryDirectory("offline")
            _ = try await makeManager(directory: directory, clock: clock).image(for: origin.url("/o.png"))
            clock.advance(by: 3600)
            let offline = try makeManager(directory: directory, clock: clock) { $0.offline = true }
            let image = try await offline.image(for: origin.url("/o.png"))
            #expect(image.layout.size == PixelSize(width: 64, height: 48))
            let missing = origin.url("/never-fetched.png")
            await #expect(throws: TesseraError(.fetching(.offlineMiss(url: missing.absoluteString)))) {
                _ = try await offline.image(for: missing)
            }
            #expect(origin.arrivals.count == 1)
        }
    }

    @Test("Cache-Control and HTTPCacheInfo parsing")
    func parsing() throws {
        let control = CacheControl(parsing: "public, max-age=\"120\", must-revalidate, no-cache")
        #expect(control.maxAge == 120)
        #expect(control.noCache && control.mustRevalidate && !control.noStore)
        #expect(CacheControl(parsing: "no-store").noStore)
        #expect(CacheControl(parsing: nil).maxAge == nil)

        let now = Date(timeIntervalSince1970: 1_000_000)
        let url = URL(string: "http://127.0.0.1/x")!
        func info(_ headers: [String: String]) -> HTTPCacheInfo {
            HTTPCacheInfo(response: LoadResponse(url: url, statusCode: 200, headers: headers), requestedURL: url, now: now, defaultMaxAge: .seconds(500))
        }
        #expect(info(["Cache-Control": "max-age=100", "Age": "40"]).expiresAt == now.addingTimeInterval(60))
        #expect(info([:]).expiresAt == now.addingTimeInterval(500))
        #expect(info(["Cache-Control": "no-cache", "ETag": "\"e\""]).isFresh(at: now) == false)
        #expect(info(["Expires": "0"]).isFresh(at: now) == false)
        let dated = info(["Date": "Mon, 12 Jan 1970 13:46:40 GMT", "Expires": "Mon, 12 Jan 1970 13:48:20 GMT"])
        #expect(dated.expiresAt == now.addingTimeInterval(100))
        #expect(info(["ETag": "\"e\""]).canRevalidate)
        #expect(!info([:]).canRevalidate)
    }
}
