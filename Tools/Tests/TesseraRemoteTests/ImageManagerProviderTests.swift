import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

@Suite("ImageManager as the source-image provider of ImageCache")
struct ImageManagerProviderTests {
    @Test("image tables fill from the manager over loopback: one origin request, decoded once, disk copy kept")
    func endToEnd() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            origin.set("/avatar.png", .init(body: try pngBytes(Color(red: 1, green: 0, blue: 0), width: 128, height: 128), gate: gate))
            let manager = try makeManager()
            let decodes = Counter()
            let tables = try temporaryDirectory("tables")
            let cache = try ImageCache(formats: [small, medium], directory: tables, provider: manager, decoder: countingDecoder(decodes))
            let url = origin.url("/avatar.png")
            let ann = User("ann", url: url)
            let bob = User("bob", url: url)

            async let first = cache.image(for: ann, format: medium)
            async let second = cache.image(for: bob, format: small)
            await origin.waitForArrivals("/avatar.png")
            gate.open()
            let (a, b) = try await (first, second)
            #expect(a.pixel(x: 32, y: 32) == [0, 0, 255, 255])
            #expect(b.layout.size == PixelSize(width: 32, height: 32))
            #expect(origin.count("/avatar.png") == 1)
            #expect(manager.isCachedOnDisk(url))
            #expect(decodes.count == 1)
            #expect(cache.cachedImage(for: ann, format: small) != nil)   // the family was filled too

            // New tables, same manager: the bytes come from the manager's disk cache, not the origin.
            let fresh = try ImageCache(formats: [medium], directory: try temporaryDirectory("tables2"), provider: manager)
            _ = try await fresh.image(for: User("cy", url: url), format: medium)
            #expect(origin.count("/avatar.png") == 1)
            #expect(manager.statistics.diskHits == 1)
        }
    }

    @Test("provider failures reach ImageCache callers typed")
    func failure() async throws {
        try await Origin.with { origin in
            let manager = try makeManager()
            let cache = try ImageCache(formats: [medium], directory: try temporaryDirectory("tables3"), provider: manager)
            let url = origin.url("/nope.png")
            await #expect(throws: TesseraError(.fetching(.httpStatus(code: 404, url: url.absoluteString)))) {
                _ = try await cache.image(for: User("dee", url: url), format: medium)
            }
        }
    }
}
