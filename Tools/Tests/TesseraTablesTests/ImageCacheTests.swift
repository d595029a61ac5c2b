import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("ImageCache: entities, families, coalescing, cancellation")
struct ImageCacheTests {
    @Test("a file provider fills the table on a miss; the next lookup is a synchronous hit")
    func fileProvider() async throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("red.png")
        try Data(try solidPNG(Color(red: 1, green: 0, blue: 0))).write(to: file)
        let cache = try ImageCache(formats: [medium], directory: dir.appendingPathComponent("tables"), provider: FileSourceImageProvider())
        let user = User("ann", url: file)
        #expect(cache.cachedImage(for: user, format: medium) == nil)
        let image = try await cache.image(for: user, format: medium)
        #expect(image.pixel(x: 32, y: 32) == [0, 0, 255, 255])
        let hit = try #require(cache.cachedImage(for: user, format: medium))
        #expect(hit.hasSamePixels(as: image))
    }

    @Test("N concurrent requests for one URL: one fetch at the origin, one decode, every caller served")
    func coalescing() async throws {
        try await Origin.with { origin in
        origin.set("/avatar.png", .init(body: try solidPNG(Color(red: 0, green: 1, blue: 0))))
        let decodes = Counter()
        let provider = HTTPSourceProvider()
        let cache = try ImageCache(formats: [small, medium], directory: try temporaryDirectory(), provider: provider,
                                   decoder: countingDecoder(decodes))
        let url = origin.url("/avatar.png")
        let users = (0..<40).map { User("u\($0 % 4)", url: url) }   // 4 entities sharing one URL
        let images = try await withThrowingTaskGroup(of: TableImage.self) { group in
            for (i, user) in users.enumerated() {
                group.addTask { try await cache.image(for: user, format: i % 2 == 0 ? small : medium) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(images.count == 40)
        #expect(origin.count("/avatar.png") == 1)
        #expect(provider.fetches.count == 1)
        #expect(decodes.count == 1)
        for image in images where image.style == .bgra32 { #expect(image.pixel(x: 10, y: 10) == [0, 255, 0, 255]) }
        }
    }

    @Test("one source fills every format of the family when the provider agrees, and only then")
    func families() async throws {
        for processFamilies in [true, false] {
            try await Origin.with { origin in
            origin.set("/bo.png", .init(body: try solidPNG(.white)))
            var provider = HTTPSourceProvider()
            provider.processFamilies = processFamilies
            let cache = try ImageCache(formats: [small, medium, icon], directory: try temporaryDirectory(), provider: provider)
            let user = User("bo", url: origin.url("/bo.png"))
            _ = try await cache.image(for: user, format: small)
            #expect(cache.imageExists(for: user, format: small))
            #expect(cache.imageExists(for: user, format: medium) == processFamilies)
            #expect(!cache.imageExists(for: user, format: icon), "other families are not touched")
            #expect(origin.count("/bo.png") == 1)
            }
        }
    }

    @Test("cancelling one requester leaves the others served and does not cancel the source")
    func cancelOne() async throws {
        try await Origin.with { origin in
        let gate = OriginGate()
        origin.set("/shared.png", .init(body: try solidPNG(Color(red: 0, green: 0, blue: 1)), gate: gate))
        let provider = HTTPSourceProvider()
        let cache = try ImageCache(formats: [medium], directory: try temporaryDirectory(), provider: provider)
        let url = origin.url("/shared.png")
        let a = User("a", url: url), b = User("b", url: url)
        let first = Task { try await cache.image(for: a, format: medium) }
        let second = Task { try await cache.image(for: b, format: medium) }
        while cache.waiterCount(for: url) < 2 { await Task.yield() }
        first.cancel()
        await #expect(throws: TesseraError(.cancelled)) { try await first.value }
        gate.open()
        let image = try await second.value
        #expect(image.pixel(x: 1, y: 1) == [255, 0, 0, 255])
        #expect(provider.cancels.count == 0)
        #expect(!cache.imageExists(for: a, format: medium), "a cancelled requester gets nothing drawn for it")
        #expect(origin.count("/shared.png") == 1)
        }
    }

    @Test("cancelling the last requester cancels the source exactly once and stores nothing")
    func cancelLast() async throws {
        try await Origin.with { origin in
        let gate = OriginGate()
        origin.set("/slow.png", .init(body: try solidPNG(.black), gate: gate))
        let provider = HTTPSourceProvider()
        let cache = try ImageCache(formats: [medium], directory: try temporaryDirectory(), provider: provider)
        let url = origin.url("/slow.png")
        let user = User("c", url: url)
        let waiting = Task { try await cache.image(for: user, format: medium) }
        let explicit = Task { try await cache.image(for: user, format: medium) }
        while cache.waiterCount(for: url) < 2 { await Task.yield() }
        cache.cancelRequest(for: user, format: medium)
        await #expect(throws: TesseraError(.cancelled)) { try await waiting.value }
        await #expect(throws: TesseraError(.cancelled)) { try await explicit.value }
        #expect(provider.cancels.count == 1)
        #expect(cache.waiterCount(for: url) == 0)
        gate.open()
        #expect(!cache.imageExists(for: user, format: medium))
        }
    }

    @Test("a changed source-image id is a miss and loads the new picture")
    func invalidation() async throws {
        try await Origin.with { origin in
        origin.set("/v1.png", .init(body: try solidPNG(Color(red: 1, green: 0, blue: 0))))
        origin.set("/v2.png", .init(body: try solidPNG(Color(red: 0, green: 0, blue: 1))))
        let cache = try ImageCache(formats: [medium], directory: try temporaryDirectory(), provider: HTTPSourceProvider())
        let before = User("dee", url: origin.url("/v1.png"))
        _ = try await cache.image(for: before, format: medium)
        let after = User("dee", url: origin.url("/v2.png"))
        #expect(before.entityID == after.entityID)
        #expect(cache.cachedImage(for: after, format: medium) == nil)
        let image = try await cache.image(for: after, format: medium)
        #expect(image.pixel(x: 5, y: 5) == [255, 0, 0, 255])
        #expect(origin.count("/v2.png") == 1)
        }
    }

    @Test("a source that fails reaches every waiter as a typed error and nothing is stored",
          arguments: ["/missing.png", "/garbage.png"])
    func errorsToAllWaiters(path: String) async throws {
        try await Origin.with { origin in
        origin.set("/garbage.png", .init(body: Array("not an image at all".utf8)))   // "/missing.png" is a 404
        let cache = try ImageCache(formats: [medium], directory: try temporaryDirectory(), provider: HTTPSourceProvider())
        let user = User("eve", url: origin.url(path))
        let results = await withTaskGroup(of: (any Error)?.self) { group in
            for _ in 0..<8 { group.addTask { do { _ = try await cache.image(for: user, format: medium); return nil } catch { return error } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        for error in results {
            let typed = try #require(error as? TesseraError)
            if path == "/missing.png" {
                guard case .fetching(.httpStatus(code: 404, _)) = typed.reason else { Issue.record("\(typed)"); continue }
            } else {
                guard case .decoding(.unsupportedFormat) = typed.reason else { Issue.record("\(typed)"); continue }
            }
        }
        #expect(!cache.imageExists(for: user, format: medium))
        #expect(origin.count(path) >= 1 && origin.count(path) <= 8)
        }
    }

    @Test("setImage, deleteImage, reset")
    func setDeleteReset() async throws {
        let cache = try ImageCache(formats: [small, medium], directory: try temporaryDirectory(), provider: FileSourceImageProvider())
        let user = User("fay", url: URL(fileURLWithPath: "/nonexistent.png"))
        let picture = try Bitmap.drawing(size: PixelSize(width: 50, height: 50)) { $0.fill(with: .white) }
        try cache.setImage(picture, for: user, format: medium)
        #expect(cache.imageExists(for: user, format: medium))
        #expect(!cache.imageExists(for: user, format: small))
        cache.deleteImage(for: user, format: medium)
        #expect(!cache.imageExists(for: user, format: medium))
        try cache.setImage(picture, for: user, format: small)
        try cache.reset()
        #expect(!cache.imageExists(for: user, format: small))
        await #expect(throws: TesseraError(.cache(.unknownFormat("icon")))) { try await cache.image(for: user, format: icon) }
    }

    @Test("stable ids: the same string hashes to the same UUID, different strings differ")
    func stableIDs() {
        #expect(UUID(hashing: "user:42") == UUID(hashing: "user:42"))
        #expect(UUID(hashing: "user:42") != UUID(hashing: "user:43"))
        let ids = Set((0..<10_000).map { UUID(hashing: "item-\($0)") })
        #expect(ids.count == 10_000)
    }
}

@Suite("ImageCache threading")
struct ImageCacheThreadingTests {
    /// A real codec wrapped to record whether it ever decoded on the main thread.
    struct ThreadRecordingDecoder: ImageDecoding {
        let base: any ImageDecoding
        let onMain: Counter
        let offMain: Counter
        var format: ImageFileFormat { base.format }
        func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo { try base.probe(data) }
        func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize { base.decodedSize(for: info, atLeast: target) }
        func supportsDirectDecode(to style: PixelStyle) -> Bool { base.supportsDirectDecode(to: style) }
        func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
            (Thread.isMainThread ? onMain : offMain).increment()
            return try base.decode(data, info: info, into: target)
        }
    }

    @MainActor
    @Test("a main-actor caller gets its result back on the main actor; decoding ran off the main thread")
    func decodingOffTheCallersActor() async throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("p.png")
        try Data(try solidPNG(.white)).write(to: file)
        let onMain = Counter(), offMain = Counter()
        let decoder = ImageDecoder(decoders: ImageDecoder.standardDecoders(limits: .default).map {
            ThreadRecordingDecoder(base: $0, onMain: onMain, offMain: offMain)
        })
        let cache = try ImageCache(formats: [medium], directory: dir.appendingPathComponent("t"),
                                   provider: FileSourceImageProvider(), decoder: decoder)
        let image = try await cache.image(for: User("main", url: file), format: medium)
        MainActor.assertIsolated("resumed on the caller's actor")
        #expect(image.width == 64)
        #expect(offMain.count == 1)
        #expect(onMain.count == 0)
    }
}
