import Foundation
import Testing
@_spi(Internal) import TesseraImaging
@testable import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `ImageRequest.processors` through `ImageManager`: run after the size or processing, part of the memory
/// cache's key, one download for every variant, one decode per distinct request.
@Suite("ImageRequest with processors")
struct ImageRequestProcessorTests {
    @Test("a circle after a fill: the pixels show it; identical requests share the decode, other processors share the download")
    func processorsOnRequests() async throws {
        let url = URL(string: "https://images.example/q.png")!
        let loader = MockDataLoader()
        loader.set(.init(body: Data(try Quadrants.png())), for: url)
        let disk = DiskCache.Configuration(directory: try temporaryDirectory("processors"))
        let manager = try ImageManager(configuration: .init(disk: disk), loader: loader)
        let circle = ImageRequest(url: url, processing: ImageProcessing(width: 60, height: 60, mode: .fill), processors: [.circle()])
        let image = try await manager.image(for: circle)
        #expect(image.width == 60 && image.height == 60)
        #expect(image.pixel(x: 0, y: 0)[3] == 0 && image.pixel(x: 59, y: 59)[3] == 0, "outside the circle is transparent")
        #expect(Quadrants.close(image.pixel(x: 20, y: 20), Quadrants.red), "the fill's top-left quadrant inside the circle")
        _ = try await manager.image(for: circle)
        #expect(manager.statistics.decodes == 1, "the same processors are answered from memory")
        let rounded = ImageRequest(url: url, processing: ImageProcessing(width: 60, height: 60, mode: .fill),
                                   processors: [.roundedCorners(radius: 8)])
        #expect(manager.cachedImage(for: rounded) == nil, "other processors are another memory-cache key")
        let corners = try await manager.image(for: rounded)
        #expect(corners.pixel(x: 0, y: 0)[3] == 0 && corners.pixel(x: 30, y: 0)[3] == 255)
        let sized = ImageRequest(url: url, size: PixelSize(width: 40, height: 40), processors: [.circle()])
        let small = try await manager.image(for: sized)
        #expect(small.width == 40 && small.pixel(x: 0, y: 0)[3] == 0, "processors run after a plain size too")
        #expect(manager.statistics.decodes == 3)
        #expect(loader.count(for: url) == 1, "one download for every variant (the disk cache keeps it)")
    }

    @Test("a failing custom processor fails the request with a typed error and caches nothing")
    func failingProcessor() async throws {
        struct Refused: Error {}
        let url = URL(string: "https://images.example/q.png")!
        let loader = MockDataLoader()
        loader.set(.init(body: Data(try Quadrants.png())), for: url)
        let manager = try ImageManager(configuration: .init(disk: nil), loader: loader)
        let request = ImageRequest(url: url, size: PixelSize(width: 20, height: 20),
                                   processors: [ImageProcessor(identifier: "test.refuses") { _ in throw Refused() }])
        do {
            _ = try await manager.image(for: request)
            Issue.record("the processor's error must fail the request")
        } catch {
            #expect(error.reason == .drawing(message: "processor test.refuses failed"))
        }
        #expect(manager.cachedImage(for: request) == nil)
    }
}
