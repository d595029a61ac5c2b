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
    /// 200×100 quadrants: red top-left, green top-right, blue bottom-left, white bottom-right.
    static func quadrants() throws -> [UInt8] {
        let image = try Bitmap(width: 200, height: 100, style: .bgra32) { view in
            for y in 0..<100 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<200 {
                    let colour = y < 50 ? (x < 100 ? ServeResizeProcessingTests.red : ServeResizeProcessingTests.green)
                                        : (x < 100 ? ServeResizeProcessingTests.blue : ServeResizeProcessingTests.white)
                    for c in 0..<4 { row[x * 4 + c] = colour[c] }
                }
            }
        }
        return try PNGEncoder().encode(image)
    }

    @Test("gravity shows in the pixels; identical requests share the decode, another gravity shares the download only")
    func processingOnRequests() async throws {
        try await Origin.with { origin in
            origin.set("/q.png", .init(body: try Self.quadrants(), cacheControl: "max-age=3600"))
            let url = origin.url("/q.png")
            let manager = try makeManager()
            let northEast = ImageRequest(url: url, processing: ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .northEast))
            let image = try await manager.image(for: northEast)
            #expect(image.width == 50 && image.height == 50)
            #expect(ServeResizeProcessingTests.close(image.pixel(x: 5, y: 5), ServeResizeProcessingTests.green))
            _ = try await manager.image(for: northEast)
            #expect(manager.statistics.decodes == 1, "the same processing is answered from memory")
            let southWest = ImageRequest(url: url, processing: ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .southWest))
            #expect(manager.cachedImage(for: southWest) == nil, "another gravity is another memory-cache key")
            let other = try await manager.image(for: southWest)
            #expect(ServeResizeProcessingTests.close(other.pixel(x: 5, y: 5), ServeResizeProcessingTests.red))
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
