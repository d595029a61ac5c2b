import Foundation
import Testing
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `MockDataLoader` keeps the loader contract `ImageManager` relies on: scripted answers, `304` to a
/// matching `If-None-Match`, typed failures, limits, gates that hold a load and let cancellation through.
@Suite("TesseraTesting: MockDataLoader")
struct MockDataLoaderTests {
    static let url = URL(string: "http://127.0.0.1/m.png")!

    @Test("answers its script, 304 to a matching ETag, 404 when unscripted, tooLarge past the limit, counted")
    func contract() async throws {
        let loader = MockDataLoader()
        loader.set(.image(Data([1, 2, 3]), cacheControl: "max-age=5", etag: "\"v1\""), for: Self.url)
        let plain = try await loader.load(LoadRequest(url: Self.url), progress: { _ in })
        #expect(plain.statusCode == 200 && plain.data == Data([1, 2, 3]) && plain.headers["cache-control"] == "max-age=5")
        let conditional = try await loader.load(LoadRequest(url: Self.url, ifNoneMatch: "\"v1\""), progress: { _ in })
        #expect(conditional.statusCode == 304 && conditional.data.isEmpty)
        let other = URL(string: "http://127.0.0.1/none.png")!
        await #expect(throws: TesseraError(.fetching(.httpStatus(code: 404, url: other.absoluteString)))) {
            _ = try await loader.load(LoadRequest(url: other), progress: { _ in })
        }
        await #expect(throws: TesseraError(.fetching(.tooLarge(bytes: 3, limit: 2, url: Self.url.absoluteString)))) {
            _ = try await loader.load(LoadRequest(url: Self.url, maximumBytes: 2), progress: { _ in })
        }
        #expect(loader.count(for: Self.url) == 3 && loader.requests.count == 4)
    }

    @Test("a gate holds a load until opened; a cancelled load stops waiting at once")
    func gates() async throws {
        let loader = MockDataLoader(), gate = LoadGate()
        loader.set(.image(Data([9]), gate: gate), for: Self.url)
        let held = Task { try await loader.load(LoadRequest(url: Self.url), progress: { _ in }) }
        let cancelled = Task { try await loader.load(LoadRequest(url: Self.url), progress: { _ in }) }
        await loader.waitForLoads(of: Self.url, count: 2)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        #expect(!gate.isOpen)
        gate.open()
        #expect(try await held.value.data == Data([9]))
    }

    @Test("an ImageManager on it: one load for concurrent requests, then memory")
    func managerOnTheMock() async throws {
        let loader = MockDataLoader(), gate = LoadGate()
        let png = try PNGEncoder().encode(Bitmap.drawing(size: PixelSize(width: 8, height: 4)) { $0.fill(with: Color(red: 1, green: 0, blue: 0)) })
        loader.set(.image(png, cacheControl: "max-age=60", gate: gate), for: Self.url)
        let manager = try ImageManager(configuration: ImageManager.Configuration(disk: nil), loader: loader)
        async let first = manager.image(for: Self.url)
        async let second = manager.image(for: Self.url)
        await loader.waitForLoads(of: Self.url)
        gate.open()
        #expect(try await first.layout.size == PixelSize(width: 8, height: 4))
        #expect(try await second.layout.size == PixelSize(width: 8, height: 4))
        _ = try await manager.image(for: Self.url)
        #expect(loader.count(for: Self.url) == 1)
        #expect(manager.statistics.memoryHits == 1)
    }
}
