import AsyncHTTPClient
import Foundation
import Synchronization
import Testing
import Tessera
import TesseraHTTP
import TesseraTestSupport

/// `HTTPDataLoader(client:)`: a loader on the application's own `HTTPClient`, which it borrows and never
/// shuts down.
@Suite("HTTPDataLoader on a borrowed HTTPClient")
struct BorrowedHTTPClientTests {
    @Test func theLoaderLoadsAndItsShutdownLeavesTheClientUsable() async throws {
        let origin = try await Origin.start()
        let body = Array(try ServeFixture.jpeg(width: 48, height: 32))
        origin.set("/photo.jpg", .init(body: body))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let loader = HTTPDataLoader(client: client)
        let loaded = try await loader.load(LoadRequest(url: origin.url("/photo.jpg")), progress: { _ in })
        #expect(loaded.statusCode == 200 && Array(loaded.data) == body)
        // The loader's own limits still hold on the app's client: the size limit, here.
        await #expect(throws: TesseraError(.fetching(.tooLarge(bytes: body.count, limit: 100, url: origin.url("/photo.jpg").absoluteString)))) {
            _ = try await loader.load(LoadRequest(url: origin.url("/photo.jpg"), maximumBytes: 100), progress: { _ in })
        }

        try await loader.shutdown()
        try await loader.shutdown()   // a second call does nothing
        #expect(loader.isShutdown)
        await #expect(throws: TesseraError.self) {
            _ = try await loader.load(LoadRequest(url: origin.url("/photo.jpg")), progress: { _ in })
        }
        #expect(origin.count("/photo.jpg") == 2)
        // The client is the app's, and still works.
        let response = try await client.execute(HTTPClientRequest(url: origin.url("/photo.jpg").absoluteString), timeout: .seconds(30))
        #expect(response.status.code == 200)
        #expect(Array(try await response.body.collect(upTo: 1 << 20).readableBytesView) == body)
        #expect(origin.count("/photo.jpg") == 3)
        try await client.shutdown()
        await origin.stop()
    }

    @Test func aRedirectTheClientFollowsPastTheURLCheckIsRefused() async throws {
        let origin = try await Origin.start()
        origin.set("/hop.jpg", .init(redirect: "/inside.jpg"))
        origin.set("/inside.jpg", .init(body: Array(try ServeFixture.jpeg(width: 8, height: 8))))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)   // follows redirects: against the documented rule
        let checked = Mutex<[String]>([])
        let loader = HTTPDataLoader(client: client, urlCheck: { url in
            checked.withLock { $0.append(url.path) }
            return nil
        })
        let hop = origin.url("/hop.jpg")
        await #expect(throws: TesseraError.self) {
            _ = try await loader.load(LoadRequest(url: hop), progress: { _ in })
        }
        #expect(checked.withLock { $0 } == ["/hop.jpg"])

        // A client that does not follow redirects: the loader follows, checking each hop.
        var settings = HTTPClient.Configuration()
        settings.redirectConfiguration = .disallow
        let strict = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
        let strictLoader = HTTPDataLoader(client: strict, urlCheck: { url in
            checked.withLock { $0.append(url.path) }
            return nil
        })
        let loaded = try await strictLoader.load(LoadRequest(url: hop), progress: { _ in })
        #expect(loaded.statusCode == 200)
        #expect(checked.withLock { $0 } == ["/hop.jpg", "/hop.jpg", "/inside.jpg"])
        try await client.shutdown()
        try await strict.shutdown()
        await origin.stop()
    }
}
