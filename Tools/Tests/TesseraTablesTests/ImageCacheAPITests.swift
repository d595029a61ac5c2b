import Foundation
import Synchronization
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
import Tessera
import TesseraTestSupport

/// A provider that reads files, except that it never answers for paths containing "stall" until cancelled.
private final class StalledProvider: SourceImageProviding {
    func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        if url.path.contains("stall") {
            try await Task.sleep(for: .seconds(3600))   // a source that never arrives; ends only by cancellation
            throw CancellationError()
        }
        return try await FileSourceImageProvider().sourceImage(at: url, for: entity, format: format)
    }
}

/// The callback API of `ImageCache`, `cancelRequest` right after a request starts, and the format registry.
@Suite("ImageCache API")
struct ImageCacheAPITests {
    @Test("two formats with one name are refused; a family lists its formats by name; each table opens once")
    func registry() throws {
        let dir = try temporaryDirectory()
        let twin = ImageFormat(name: "medium", style: .gray8, size: PixelSize(width: 8, height: 8), maximumCount: 2)
        #expect(throws: TesseraError(.cache(.duplicateFormat("medium")))) {
            _ = try ImageCache(formats: [medium, twin], directory: dir, provider: FileSourceImageProvider())
        }
        let cache = try ImageCache(formats: [medium, icon, small], directory: dir, provider: FileSourceImageProvider())
        #expect(cache.formats(inFamily: "users").map(\.name) == ["medium", "small"])
        #expect(cache.table(for: small) === cache.table(for: small))
        #expect(cache.table(for: small) !== cache.table(for: medium))
        #expect(cache.table(for: twin) == nil, "a format with a configured name but another definition has no table")
    }

    @Test("formats are addressed by their ImageFormat value; a handle this cache was not made with is unknown")
    func formatHandles() async throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("green.png")
        try Data(try solidPNG(Color(red: 0, green: 1, blue: 0))).write(to: file)
        let cache = try ImageCache(formats: [medium], directory: dir.appendingPathComponent("t"), provider: FileSourceImageProvider())
        let user = User("gil", url: file)
        let image = try await cache.image(for: user, format: medium)
        #expect(image.pixel(x: 3, y: 3) == [0, 255, 0, 255])
        #expect(cache.cachedImage(for: user, format: medium) != nil && cache.imageExists(for: user, format: medium))
        #expect(try cache.format(named: "medium") == medium)
        let impostor = ImageFormat(name: "medium", style: .gray8, size: PixelSize(width: 8, height: 8), maximumCount: 2)
        #expect(!cache.isConfigured(impostor) && cache.cachedImage(for: user, format: impostor) == nil)
        await #expect(throws: TesseraError(.cache(.unknownFormat("medium")))) { _ = try await cache.image(for: user, format: impostor) }
        #expect(throws: TesseraError(.cache(.unknownFormat("typo")))) { _ = try cache.format(named: "typo") }
        let outcome = Mutex<Result<TableImage, TesseraError>?>(nil)
        await cache.loadImage(for: user, format: impostor) { result in outcome.withLock { $0 = result } }.wait()
        let failed = try #require(outcome.withLock { $0 })
        #expect(throws: TesseraError(.cache(.unknownFormat("medium")))) { try failed.get() }
        await #expect(throws: TesseraError(.cache(.notAnEntityRequest(url: file.absoluteString)))) {
            _ = try await cache.image(for: ImageRequest(url: file))
        }
        cache.deleteImage(for: user, format: medium)
        #expect(!cache.imageExists(for: user, format: medium))
    }

    @Test("cancelRequest right after loadImage is never lost: the completion gets .cancelled")
    func cancelRightAway() async throws {
        for round in 0..<50 {
            let provider = StalledProvider()
            let cache = try ImageCache(formats: [medium], directory: try temporaryDirectory(), provider: provider)
            let user = User("u\(round)", url: URL(fileURLWithPath: "/stall/\(round).png"))
            let outcome = Mutex<Result<TableImage, TesseraError>?>(nil)
            let ticket = cache.loadImage(for: user, format: medium) { result in outcome.withLock { $0 = result } }
            cache.cancelRequest(for: user, format: medium)
            await ticket.wait()
            let result = try #require(outcome.withLock { $0 })
            #expect(throws: TesseraError(.cancelled)) { try result.get() }
            #expect(cache.waiterCount(for: user.url) == 0)
        }
    }

    @Test("a ticket's cancel ends the request; other entities are not affected")
    func ticketCancel() async throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("blue.png")
        try Data(try solidPNG(Color(red: 0, green: 0, blue: 1))).write(to: file)
        let cache = try ImageCache(formats: [medium], directory: dir.appendingPathComponent("t"), provider: StalledProvider())
        let kept = Mutex<Result<TableImage, TesseraError>?>(nil)
        let keep = cache.loadImage(for: User("keep", url: file), format: medium) { result in kept.withLock { $0 = result } }
        let dropped = Mutex<Result<TableImage, TesseraError>?>(nil)
        let drop = cache.loadImage(for: User("drop", url: dir.appendingPathComponent("stall.png")), format: medium) { result in
            dropped.withLock { $0 = result }
        }
        drop.cancel()
        await keep.wait()
        await drop.wait()
        let image = try #require(try kept.withLock { $0 }?.get())
        #expect(image.pixel(x: 1, y: 1) == [255, 0, 0, 255])
        let failure = try #require(dropped.withLock { $0 })
        #expect(throws: TesseraError(.cancelled)) { try failure.get() }
    }
}
