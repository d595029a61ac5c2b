import Foundation
import Hummingbird
import Logging
import Prometheus
import Testing
import Tessera
import TesseraServer
import TesseraTestSupport

/// What a newcomer meets when mounting `ImageRoutes` in their own app: the documented default presets,
/// `HEAD` and `/metrics` on a plain `Router()`, and tables that default to a per-user, per-root directory.
@Suite("tessera serve, mounted in your own app")
struct ServeMountingTests {
    @Test func aPlainRouterAnswersTheDefaultPresetsHeadAndMetrics() async throws {
        let fixture = try ServeFixture()
        var configuration = ServerConfiguration(root: fixture.root.path)
        configuration.tablesDirectory = fixture.tables.path
        configuration.presets.append(.init(name: "card", width: 160, height: 100, mode: .fill))
        configuration.limits.requestTimeoutSeconds = 600   // as in ServeFixture.configuration: answers, not deadlines
        let registry = PrometheusCollectorRegistry()
        let service = try ImageService(configuration: configuration, metricsFactory: PrometheusMetricsFactory(registry: registry))
        #expect(service.presetNames == ["card", "lowres", "thumb"])
        let router = Router()   // no options: HEAD comes from ImageRoutes itself
        var logger = Logger(label: "mounted")
        logger.logLevel = .critical
        ImageRoutes(service: service, registry: registry, logger: logger).add(to: router)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { continuation.yield($0.localAddress?.port ?? 0); continuation.finish() }, logger: logger)
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let thumb = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg")
        #expect(thumb.status == 200)
        #expect(try DecodedBody(thumb.body) == DecodedBody(format: "jpeg", width: 200, height: 200))
        let card = try await RawHTTP.get(port: port, "/v1/card/photo.jpg")
        #expect(try DecodedBody(card.body) == DecodedBody(format: "jpeg", width: 160, height: 100))
        let head = try await RawHTTP.head(port: port, "/v1/card/photo.jpg")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["content-length"] == String(card.body.count))
        #expect(head.headers["x-tessera-cache"] == "memory")
        let metrics = try await RawHTTP.get(port: port, "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("tessera_serve_cache_outcomes_total{outcome=\"memory\"} 1"))
        #expect(metrics.text.contains("tessera_requests_total{"))
        task.cancel()
        _ = await task.result
        await service.shutdown()
    }

    @Test func tablesDefaultToAPerUserPerRootCacheDirectory() throws {
        let xdg = ServerConfiguration.defaultTablesDirectory(root: "/srv/photos", environment: ["XDG_CACHE_HOME": "/var/cache/u", "HOME": "/home/u"])
        #expect(xdg.hasPrefix("/var/cache/u/tessera/serve/photos-"))
        let home = ServerConfiguration.defaultTablesDirectory(root: "/srv/photos", environment: ["HOME": "/home/u"])
        #expect(home.hasPrefix("/home/u/.cache/tessera/serve/photos-"))
        // A relative XDG_CACHE_HOME is ignored, as the XDG specification asks.
        #expect(ServerConfiguration.defaultTablesDirectory(root: "/srv/photos", environment: ["XDG_CACHE_HOME": "cache", "HOME": "/home/u"]) == home)
        // Stable for one root, different for two roots of the same name.
        #expect(ServerConfiguration.defaultTablesDirectory(root: "/srv/photos", environment: ["HOME": "/home/u"]) == home)
        #expect(ServerConfiguration.defaultTablesDirectory(root: "/mnt/photos", environment: ["HOME": "/home/u"]) != home)
        #expect(!home.hasPrefix("/tmp") && !home.hasPrefix(FileManager.default.temporaryDirectory.path))
    }
}
