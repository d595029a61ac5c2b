import Foundation
import Testing
@_spi(Internal) import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `file:` and `data:` URLs are read by the manager itself: no loader, no lane, no disk copy.
@Suite("file: and data: URLs")
struct LocalURLTests {
    static func manager(_ loader: MockDataLoader) throws -> ImageManager {
        try ImageManager(configuration: .init(disk: .init(directory: try temporaryDirectory("local")), diskSweepInterval: nil), loader: loader)
    }

    @Test("a file: URL is read without the loader and never copied to disk; then it comes from memory")
    func fileURL() async throws {
        let loader = MockDataLoader()
        let manager = try Self.manager(loader)
        let file = try temporaryDirectory("local-file").appendingPathComponent("photo.png")
        try Data(try pngBytes(width: 40, height: 30)).write(to: file)
        let request = ImageRequest(url: file, size: PixelSize(width: 20, height: 15))
        let response = try await manager.imageTask(for: request).response
        #expect(response.cacheType == .local && response.sourceFormat == .png && response.statusCode == nil)
        #expect(response.image.layout.size == PixelSize(width: 20, height: 15))
        #expect(loader.requests.isEmpty)
        #expect(!manager.cache.contains(request, in: .disk))
        #expect(try await manager.imageTask(for: request).response.cacheType == .memory)
        #expect(manager.statistics.localResponses == 1)
    }

    @Test("a data: URL, base64 or percent-encoded, is decoded without the loader")
    func dataURL() async throws {
        let loader = MockDataLoader()
        let manager = try Self.manager(loader)
        let png = try pngBytes(width: 8, height: 6)
        let base64 = try #require(URL(string: "data:image/png;base64," + Data(png).base64EncodedString()))
        let image = try await manager.imageTask(for: ImageRequest(url: base64)).response
        #expect(image.cacheType == .local && image.image.layout.size == PixelSize(width: 8, height: 6))
        let percent = try #require(URL(string: "data:image/png," + png.map { String(format: "%%%02X", $0) }.joined()))
        #expect(try await manager.image(for: percent).layout.size == PixelSize(width: 8, height: 6))
        #expect(loader.requests.isEmpty)
    }

    @Test("a missing file is a typed I/O error; a malformed data: URL an invalid URL")
    func failures() async throws {
        let manager = try Self.manager(MockDataLoader())
        let missing = try temporaryDirectory("local-missing").appendingPathComponent("none.png")
        let error = await #expect(throws: TesseraError.self) { _ = try await manager.image(for: missing) }
        #expect(error?.reason == .io(operation: "open", path: missing.path, errno: ENOENT))
        let malformed = try #require(URL(string: "data:image/png;base64"))
        await #expect(throws: TesseraError(.fetching(.invalidURL("data:image/png;base64")))) { _ = try await manager.image(for: malformed) }
    }
}
