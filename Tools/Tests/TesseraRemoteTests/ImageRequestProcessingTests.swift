import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// `ImageRequest.processing` through `ImageManager`: the serving vocabulary for library users, drawn once
/// per processing, one download per URL, and processing part of the memory-cache key.
@Suite("ImageRequest with ImageProcessing")
struct ImageRequestProcessingTests {
    @Test("gravity shows in the pixels; identical requests share the decode, another gravity shares the download only")
    func processingOnRequests() async throws {
        try await Origin.with { origin in
            origin.set("/q.png", .init(body: try Quadrants.png(), cacheControl: "max-age=3600"))
            let url = origin.url("/q.png")
            let manager = try makeManager()
            let northEast = ImageRequest(url: url, processing: ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .northEast))
            let image = try await manager.image(for: northEast)
            #expect(image.width == 50 && image.height == 50)
            #expect(Quadrants.close(image.pixel(x: 5, y: 5), Quadrants.green))
            _ = try await manager.image(for: northEast)
            #expect(manager.statistics.decodes == 1, "the same processing is answered from memory")
            let southWest = ImageRequest(url: url, processing: ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .southWest))
            #expect(manager.cachedImage(for: southWest) == nil, "another gravity is another memory-cache key")
            let other = try await manager.image(for: southWest)
            #expect(Quadrants.close(other.pixel(x: 5, y: 5), Quadrants.red))
            #expect(manager.statistics.decodes == 2)
            #expect(origin.count("/q.png") == 1, "one download for every processing of a URL")
            // Width only, never enlarged: 500 asks for more than the source has.
            let wide = try await manager.image(for: ImageRequest(url: url, processing: ImageProcessing(width: 500)))
            #expect(wide.width == 200 && wide.height == 100)
            let key = ImageKey(url: url, processing: ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .northEast))
            #expect(key.description.hasSuffix("#" + ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .northEast).identity))
        }
    }
}
