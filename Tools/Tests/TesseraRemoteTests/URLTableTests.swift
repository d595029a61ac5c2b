import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `ImageManager.Configuration.tables`: URL requests of a fixed output size stored in an image table per size
/// and style, answered from it in the process and after a restart (a new manager over the same directories)
/// without decoding, never with the pixels of bytes that changed.
@Suite("URL requests through image tables")
struct URLTableTests {
    /// The directories a manager and its successor share.
    struct Place {
        let disk: URL
        let tables: URL
        let loader = MockDataLoader()

        init() throws {
            disk = try temporaryDirectory("url-tables-disk")
            tables = try temporaryDirectory("url-tables")
        }

        /// A manager with a disk cache and tables here, over the scripted loader.
        func manager() throws -> ImageManager {
            var configuration = ImageManager.Configuration(disk: DiskCache.Configuration(directory: disk), diskSweepInterval: nil)
            configuration.tables = ImageManager.TableStorage(directory: tables, maximumCount: 16)
            return try ImageManager(configuration: configuration, loader: loader)
        }

        /// Runs `body` with a new manager, which is gone (its tables closed) when `body` returns; `body` must
        /// not let a table image escape.
        func withManager<T>(_ body: (ImageManager) async throws -> T) async throws -> T {
            try await body(try manager())
        }

        /// The table files in the tables directory.
        var formats: [ImageFormat] { ImageTable.existingFormats(in: tables) }
    }

    static let url = URL(string: "https://images.example/q.png")!
    static let northEast = ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .northEast)
    static let southWest = ImageProcessing(width: 50, height: 50, mode: .fill, gravity: .southWest)

    /// Whether a manager's counters add up (``FetchStatistics``).
    static func addsUp(_ s: FetchStatistics) -> Bool {
        s.requests == s.memoryHits + s.memoryMisses
            && s.memoryMisses == s.diskResponses + s.networkResponses + s.localResponses + s.tableResponses + s.failedRequests
            + s.cancelledRequests
    }

    @Test("a processed request is stored, then answered from its table in the process and after a restart: no decode, same pixels")
    func restart() async throws {
        let place = try Place()
        place.loader.set(.image(try Quadrants.png(), cacheControl: "max-age=3600"), for: Self.url)
        let request = ImageRequest(url: Self.url, processing: Self.northEast)
        let first: Bitmap = try await place.withManager { manager in
            let response = try await manager.imageTask(for: request).response
            #expect(response.cacheType == .network && response.tableImage == nil)
            // Past the memory cache, the same manager answers from the table.
            let again = try await manager.imageTask(for: ImageRequest(url: Self.url, processing: Self.northEast,
                                                                     options: .disableMemoryCacheReads)).response
            #expect(again.cacheType == .table)
            #expect(response.sourceFormat == .png)
            #expect(again.pixels.hasSamePixels(as: response.image))
            let counts = manager.statistics
            #expect(counts.decodes == 1 && counts.tableResponses == 1 && Self.addsUp(counts), "\(counts)")
            return response.image
        }
        #expect(place.formats.count == 1 && place.formats.first?.size == PixelSize(width: 50, height: 50))

        try await place.withManager { manager in
            let response = try await manager.imageTask(for: request).response
            #expect(response.cacheType == .table)
            #expect(response.sourceFormat == .png, "after a restart the entry is found from the bytes on disk, whose format is known")
            let entry = try #require(response.tableImage, "a table image from the mapping, not a copy")
            #expect(entry.hasSamePixels(as: first))
            #expect(Quadrants.close(entry.pixel(x: 5, y: 5), Quadrants.green), "north-east of the quadrants")
            let image = try await manager.image(for: request)
            #expect(image.hasSamePixels(as: first), "image(for:) hands out a copy of the same pixels")
            let counts = manager.statistics
            #expect(counts.decodes == 0 && counts.tableResponses == 2 && counts.memoryHits == 0, "a table answer is not copied into memory: \(counts)")
            #expect(counts.diskHits == 1, "the bytes' source is read once from the disk cache, then known: \(counts)")
            #expect(Self.addsUp(counts))
        }
        #expect(place.loader.count(for: Self.url) == 1, "one download in all")
    }

    @Test("new bytes at the origin are never answered with the old pixels; unchanged bytes after a 304 are")
    func changedOrigin() async throws {
        let place = try Place()
        place.loader.set(.image(try Quadrants.png(), cacheControl: "no-cache", etag: "\"v1\""), for: Self.url)
        let request = ImageRequest(url: Self.url, processing: Self.northEast)
        try await place.withManager { manager in
            let image = try await manager.image(for: request)
            #expect(Quadrants.close(image.pixel(x: 5, y: 5), Quadrants.green))
        }
        let blue = try pngBytes(Color(red: 0, green: 0, blue: 1), width: 200, height: 100)
        place.loader.set(.image(blue, cacheControl: "no-cache", etag: "\"v2\""), for: Self.url)
        try await place.withManager { manager in
            let response = try await manager.imageTask(for: request).response
            #expect(response.cacheType == .network, "revalidated, the new bytes came back: decoded, not the table")
            #expect(Quadrants.close(response.image.pixel(x: 5, y: 5), Quadrants.blue))
            #expect(manager.statistics.decodes == 1)
        }
        try await place.withManager { manager in
            let response = try await manager.imageTask(for: request).response
            #expect(response.cacheType == .table && response.statusCode == 304, "304: the same bytes, so the new entry answers")
            #expect(Quadrants.close(response.pixels.pixel(x: 5, y: 5), Quadrants.blue))
            #expect(manager.statistics.decodes == 0)
        }
        #expect(place.loader.count(for: Self.url) == 3)
    }

    @Test("requests without one fixed output size are not stored")
    func notFixed() async throws {
        let place = try Place()
        place.loader.set(.image(try Quadrants.png(), cacheControl: "max-age=3600"), for: Self.url)
        let requests = [
            ImageRequest(url: Self.url),
            ImageRequest(url: Self.url, size: PixelSize(width: 40, height: 40), contentMode: .fit),
            ImageRequest(url: Self.url, processing: ImageProcessing(width: 50)),
            ImageRequest(url: Self.url, processing: ImageProcessing(width: 50, height: 50, mode: .fit)),
        ]
        for request in requests {
            for _ in 0..<2 {
                try await place.withManager { manager in
                    let response = try await manager.imageTask(for: request).response
                    #expect(response.cacheType == .disk || response.cacheType == .network)
                    #expect(manager.statistics.decodes == 1)
                }
            }
        }
        #expect(place.formats.isEmpty, "no table was made: \(place.formats)")
        // Fill without enlarge on a source smaller than the box gives the source's size: it does not fit the slot.
        let larger = ImageRequest(url: Self.url, processing: ImageProcessing(width: 400, height: 400, mode: .fill))
        for _ in 0..<2 {
            try await place.withManager { manager in
                let image = try await manager.image(for: larger)
                #expect(image.width == 200 && image.height == 100)
                #expect(manager.statistics.decodes == 1 && manager.statistics.tableResponses == 0)
            }
        }
    }

    @Test("a download cut short is answered but never stored in a table, processed or not; after a restart no entry answers it")
    func truncatedNotStored() async throws {
        let place = try Place()
        let jpeg = try ServeFixture.jpeg(width: 320, height: 240)
        let cut = URL(string: "https://images.example/cut.jpg")!, whole = URL(string: "https://images.example/whole.jpg")!
        place.loader.set(.image(jpeg.prefix(jpeg.count * 6 / 10), cacheControl: "max-age=3600"), for: cut)
        place.loader.set(.image(jpeg, cacheControl: "max-age=3600"), for: whole)
        // A size, and a processing with a processor (whose output keeps the decode's integrity): both qualify.
        func requests(_ url: URL, options: ImageRequest.Options = []) -> [ImageRequest] {
            [ImageRequest(url: url, size: PixelSize(width: 50, height: 50), options: options),
             ImageRequest(url: url, processing: Self.northEast, processors: [.circle()], options: options)]
        }
        try await place.withManager { manager in
            for request in requests(cut) + requests(cut, options: .disableMemoryCacheReads) {
                let response = try await manager.imageTask(for: request).response
                #expect(response.cacheType == .network || response.cacheType == .disk, "\(response.cacheType)")
                #expect(response.image.width == 50 && response.image.height == 50)
                #expect(response.image.integrity == .truncated, "the answer is served, and says it is partial")
            }
            for request in requests(whole) { _ = try await manager.image(for: request) }
            let counts = manager.statistics
            #expect(counts.tableResponses == 0 && counts.decodes == 6, "\(counts)")
            #expect(manager.imageTables.count == 2)
            #expect(manager.imageTables.allSatisfy { $0.entityIDs == [URLTables.entityID(of: whole)] },
                    "only the whole image has entries")
        }
        try await place.withManager { manager in
            for request in requests(cut) {
                let response = try await manager.imageTask(for: request).response
                #expect(response.cacheType == .disk, "no table entry: the bytes on disk are decoded again")
                #expect(response.tableImage == nil && response.image.integrity == .truncated)
            }
            for request in requests(whole) {
                #expect(try await manager.imageTask(for: request).response.cacheType == .table, "the control: stored, and found")
            }
            #expect(manager.statistics.decodes == 2 && manager.statistics.tableResponses == 2)
            #expect(manager.imageTables.allSatisfy { !$0.contains(entityID: URLTables.entityID(of: cut)) })
        }
        #expect(place.loader.count(for: cut) == 1 && place.loader.count(for: whole) == 1)
    }

    @Test("two processings and a size of one URL get a table each, from one download")
    func variants() async throws {
        let place = try Place()
        place.loader.set(.image(try Quadrants.png(), cacheControl: "max-age=3600"), for: Self.url)
        let requests = [ImageRequest(url: Self.url, processing: Self.northEast), ImageRequest(url: Self.url, processing: Self.southWest),
                        ImageRequest(url: Self.url, size: PixelSize(width: 40, height: 40))]
        try await place.withManager { manager in
            for request in requests { _ = try await manager.image(for: request) }
            #expect(manager.statistics.decodes == 3)
        }
        #expect(place.formats.count == 3)
        #expect(Set(place.formats.map(\.name)).count == 3 && place.formats.allSatisfy { $0.name.hasPrefix("url-") })
        try await place.withManager { manager in
            let ne = try await manager.imageTask(for: requests[0]).response
            let sw = try await manager.imageTask(for: requests[1]).response
            let sized = try await manager.imageTask(for: requests[2]).response
            #expect([ne, sw, sized].allSatisfy { $0.cacheType == .table })
            #expect(Quadrants.close(ne.pixels.pixel(x: 5, y: 5), Quadrants.green))
            #expect(Quadrants.close(sw.pixels.pixel(x: 5, y: 45), Quadrants.blue))
            #expect(sized.pixels.width == 40 && sized.pixels.height == 40)
            #expect(manager.statistics.decodes == 0)
        }
        #expect(place.loader.count(for: Self.url) == 1)
    }

    @Test("tables follow the disk switches: no table writes without disk writes, no table answers without disk reads")
    func options() async throws {
        let place = try Place()
        place.loader.set(.image(try Quadrants.png(), cacheControl: "max-age=3600"), for: Self.url)
        try await place.withManager { manager in
            let request = ImageRequest(url: Self.url, processing: Self.northEast, options: .disableDiskCacheWrites)
            _ = try await manager.image(for: request)
        }
        try await place.withManager { manager in
            let response = try await manager.imageTask(for: ImageRequest(url: Self.url, processing: Self.northEast)).response
            #expect(response.cacheType == .network, "nothing was stored on disk nor in the table")
        }
        try await place.withManager { manager in
            let request = ImageRequest(url: Self.url, processing: Self.northEast, options: .disableDiskCacheReads)
            let response = try await manager.imageTask(for: request).response
            #expect(response.cacheType == .network && manager.statistics.decodes == 1)
        }
    }
}
