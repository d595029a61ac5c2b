import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// `ImageRequest` through `ImageManager`: cache policies, headers, entity sources, typed errors.
@Suite("ImageRequest")
struct ImageRequestTests {
    @Test("cacheOnly answers from a stale disk copy without the network, and fails with offlineMiss when nothing is cached")
    func cacheOnly() async throws {
        try await Origin.with { origin in
            origin.set("/p.png", .init(body: try pngBytes(), cacheControl: "max-age=0"))
            let url = origin.url("/p.png")
            let directory = try temporaryDirectory("policy")
            _ = try await makeManager(directory: directory).image(for: url)
            let manager = try makeManager(directory: directory)   // a fresh memory cache, the same disk
            let image = try await manager.image(for: ImageRequest(url: url, cachePolicy: .cacheOnly))
            #expect(image.width == 64 && image.height == 48)
            #expect(origin.count("/p.png") == 1, "the stale copy was not revalidated")
            let missing = origin.url("/never.png")
            await #expect(throws: TesseraError(.fetching(.offlineMiss(url: missing.absoluteString)))) {
                _ = try await manager.image(for: ImageRequest(url: missing, cachePolicy: .cacheOnly))
            }
            #expect(origin.count("/never.png") == 0)
        }
    }

    @Test("reloadIgnoringCache downloads again although a fresh copy is on disk and in memory")
    func reload() async throws {
        try await Origin.with { origin in
            origin.set("/r.png", .init(body: try pngBytes(), cacheControl: "max-age=3600"))
            let url = origin.url("/r.png")
            let manager = try makeManager()
            _ = try await manager.image(for: url)
            _ = try await manager.image(for: url)
            #expect(origin.count("/r.png") == 1)
            origin.set("/r.png", .init(body: try pngBytes(Color(red: 1, green: 0, blue: 0)), cacheControl: "max-age=3600"))
            let reloaded = try await manager.image(for: ImageRequest(url: url, cachePolicy: .reloadIgnoringCache))
            #expect(origin.count("/r.png") == 2)
            #expect(reloaded.pixel(x: 5, y: 5) == [0, 0, 255, 255])
            #expect(manager.cachedImage(for: ImageRequest(url: url))?.pixel(x: 5, y: 5) == [0, 0, 255, 255])
        }
    }

    @Test("a request's headers reach the loader; an entity request fetches the entity's URL at its format's size")
    func headersAndEntities() async throws {
        try await Origin.with { origin in
            origin.set("/e.png", .init(body: try pngBytes()))
            let loader = RecordingLoader()
            let manager = try makeManager(loader: loader)
            let user = User("eve", url: origin.url("/e.png"))
            let request = ImageRequest(entity: user, format: icon, headers: ["Authorization": "Bearer t0ken"])
            let image = try await manager.image(for: request)
            #expect(image.width == icon.size.width && image.height == icon.size.height)
            #expect(loader.loads.map(\.headers) == [["Authorization": "Bearer t0ken"]])
            // Credentials of its own make the request private: nothing it loads is kept in memory.
            #expect(manager.cachedImage(for: request) == nil)
            #expect(manager.cachedImage(for: ImageRequest(entity: user, format: icon)) == nil)
            let shared = try await manager.image(for: ImageRequest(entity: user, format: icon, headers: ["X-Client": "t"]))
            #expect(shared.width == icon.size.width)
            #expect(loader.loads.map(\.headers).last == ["X-Client": "t"])
            #expect(manager.cachedImage(for: ImageRequest(entity: user, format: icon)) != nil)
            #expect(manager.cachedImage(for: request) == nil, "a cached image is not shared with a request that has credentials")
        }
    }

    @Test("errors are typed end to end: a cancelled request throws .cancelled, an entity without a URL .noSourceURL")
    func typedErrors() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            origin.set("/slow.png", .init(body: try pngBytes(), gate: gate))
            let manager = try makeManager()
            let task = Task { try await manager.image(for: origin.url("/slow.png")) }
            await manager.waitForQueue { !$0.urgentRunning.isEmpty }
            task.cancel()
            await #expect(throws: TesseraError(.cancelled)) { try await task.value }
            gate.open()
            let nowhere = Nowhere()
            await #expect(throws: TesseraError(.cache(.noSourceURL(entityID: nowhere.entityID.uuidString, format: icon.name)))) {
                _ = try await manager.image(for: ImageRequest(entity: nowhere, format: icon))
            }
        }
    }
}

/// An entity without a source image.
private struct Nowhere: ImageEntity {
    let entityID = UUID(hashing: "nowhere")
    let sourceImageID = UUID(hashing: "nowhere-source")
    func sourceImageURL(for format: ImageFormat) -> URL? { nil }
}
