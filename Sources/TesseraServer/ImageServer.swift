#if Serving
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import Prometheus
import ServiceLifecycle

/// `tessera serve`: an ``ImageService`` behind ``ImageRoutes`` on a Hummingbird application, run in a
/// swift-service-lifecycle `ServiceGroup`. SIGTERM or SIGINT starts a graceful shutdown: the listener
/// closes, in-flight requests finish, then the tables are flushed and ``run(onListening:)`` returns.
public struct ImageServer: Sendable {
    /// The image service the routes call.
    public let service: ImageService
    /// The server's own Prometheus registry, exported at `/metrics`.
    public let registry: PrometheusCollectorRegistry
    /// The request and lifecycle log.
    public let logger: Logger

    /// Opens the service with its own Prometheus registry (no global metrics bootstrap, so several servers
    /// can live in one process).
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "tessera.serve")) throws {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        self.logger = logger
        // The library's logs and metrics (tables, remote sources) flow into the server's logger and registry.
        service = try ImageService(configuration: configuration, metricsFactory: PrometheusMetricsFactory(registry: registry),
                                   logger: logger)
    }

    /// The image routes, exporting the server's registry and logging to its logger.
    var routes: ImageRoutes { ImageRoutes(service: service, registry: registry, logger: logger) }

    /// The router with every route: the image routes and the gallery, each also answering `HEAD`.
    public func router() -> Router<BasicRequestContext> {
        // `HEAD` on every `GET` route: the `GET` response's status and headers (its `Content-Length`
        // included), without the body.
        let router = Router(options: .autoGenerateHeadEndpoints)
        routes.add(to: router)
        GalleryRoutes(service: service, logger: logger).add(to: router)
        router.get("**") { _, _ -> Response in ServiceError(404, "not_found", "no such route").response }
        return router
    }

    /// The `Server` header of every response.
    static let serverName = "tessera"

    /// The Hummingbird application `run(onListening:)` serves: the router, behind the `MemoryHitHandler`
    /// that answers hot thumbnails on the event loop (``ImageHTTPChannel``). `onListening` gets the bound port.
    public func application(host: String, port: Int, onListening: @escaping @Sendable (Int) -> Void = { _ in })
        -> Application<RouterResponder<BasicRequestContext>> {
        let routes = routes
        return Application(router: router(),
                           server: HTTPServerBuilder { responder in ImageHTTPChannel(responder: responder, routes: routes) },
                           configuration: .init(address: .hostname(host, port: port), serverName: Self.serverName),
                           onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) },
                           logger: logger)
    }

    /// Listens until SIGTERM or SIGINT, then shuts down gracefully. `onListening` gets the bound port.
    public func run(onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let (host, port) = try service.configuration.listenAddress()
        let app = application(host: host, port: port, onListening: onListening)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        await service.shutdown()
        logger.info("stopped", metadata: ["statistics": "\(service.statistics)"])
    }
}
#endif
