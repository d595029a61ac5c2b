#if Serving
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// `tessera serve`: an ``ImageService`` behind ``ImageRoutes`` on a Hummingbird application, run in a
/// swift-service-lifecycle `ServiceGroup`. SIGTERM or SIGINT starts a graceful shutdown: the listener
/// closes, in-flight requests finish, then the service shuts down (its own `Service` conformance, ``ImageService/run()``:
/// the tables flushed, the loaders closed) and ``run(onListening:onMetricsListening:)`` returns.
public struct ImageServer: Sendable {
    /// The image service the routes call.
    public let service: ImageService
    /// The server's own Prometheus registry, exported at `/metrics`.
    public let registry: PrometheusCollectorRegistry
    /// The request and lifecycle log.
    public let logger: Logger
    /// What the application adds to the gallery: a script for the page and routes (``GalleryRoutes/Addition``); by default nothing.
    public var galleryAddition = GalleryRoutes.Addition()

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

    /// The image routes, exporting the server's registry (unless `metricsListen` gives `/metrics` a listener
    /// of its own) and logging to its logger.
    var routes: ImageRoutes {
        ImageRoutes(service: service, registry: service.configuration.metricsListen == nil ? registry : nil, logger: logger)
    }

    /// The router with every route: the image routes and the gallery, each also answering `HEAD`.
    public func router() -> Router<BasicRequestContext> {
        // `HEAD` on every `GET` route: the `GET` response's status and headers (its `Content-Length`
        // included), without the body.
        let router = Router(options: .autoGenerateHeadEndpoints)
        let routes = routes
        routes.add(to: router)
        GalleryRoutes(service: service, logger: logger, addition: galleryAddition).add(to: router)
        // A dialect under `/` answers every other path itself.
        let configuration = service.configuration
        guard configuration.imgproxy.prefix != "/", configuration.thumbor.prefix != "/" else { return router }
        router.get("**") { request, _ -> Response in   // measured and logged as route "other"
            Response(await routes.handle(RouteRequest(request), route: .other, label: "-") { () throws(ServiceError) -> RouteAnswer in
                throw ServiceError(.notFound, "no such route")
            }, head: request.method == .head)
        }
        return router
    }

    /// The `Server` header of every response.
    static let serverName = "tessera"

    /// The image listener's accept queue: connections the kernel has accepted that the server has not
    /// taken yet. Hummingbird's default, 256, overflows in a burst of connections (the server takes them
    /// as fast as its tasks start, and a new client then waits a second for its SYN to be sent again:
    /// 5,000 connections opened one after the other to an idle server took 5.4 s, 5 of them a second each).
    /// Linux caps it at `net.core.somaxconn` (4096 by default).
    static let backlog = 4096

    /// The Hummingbird application `run(onListening:onMetricsListening:)` serves: the router, behind the `MemoryHitHandler`
    /// that answers hot thumbnails on the event loop (`ImageHTTPChannel`). `onListening` gets the bound port.
    public func application(host: String, port: Int, onListening: @escaping @Sendable (Int) -> Void = { _ in })
        -> Application<RouterResponder<BasicRequestContext>> {
        let routes = routes
        let connections = service.configuration.connections
        return Application(router: router(),
                           server: HTTPServerBuilder { responder in
                               ImageHTTPChannel(responder: responder, routes: routes, connections: connections)
                           },
                           configuration: .init(address: .hostname(host, port: port), serverName: Self.serverName, backlog: Self.backlog),
                           onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) },
                           logger: logger)
    }

    /// The application of the `--metrics-listen` listener: `GET`/`HEAD /metrics` (the server's registry)
    /// and `/healthz`, measured and logged like the image listener's requests, and nothing else (`404`).
    /// It runs on Hummingbird's stock HTTP/1 channel with the idle timeout of the image listener.
    /// `onListening` gets the bound port.
    public func metricsApplication(host: String, port: Int, onListening: @escaping @Sendable (Int) -> Void = { _ in })
        -> Application<RouterResponder<BasicRequestContext>> {
        let monitoring = ImageRoutes(service: service, registry: registry, logger: logger)
        let router = Router()
        ImageRoutes.add(monitoring.endpoints(prefix: "").filter { $0.path == "/healthz" || $0.path == "/metrics" }, to: router)
        router.get("**") { _, _ -> Response in throw ServiceError(.notFound, "no such route") }
        let idle = TimeAmount.nanoseconds(Int64((service.configuration.connections.idleTimeoutSeconds * 1e9).rounded()))
        return Application(router: router, server: .http1(configuration: .init(idleTimeout: idle)),
                           configuration: .init(address: .hostname(host, port: port), serverName: Self.serverName),
                           onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) },
                           logger: logger)
    }

    /// Listens until SIGTERM or SIGINT, then shuts down gracefully. `onListening` gets the bound port; with
    /// `metricsListen` set, a second listener serves `/metrics` and `onMetricsListening` gets its bound port.
    /// On shutdown the image listener drains first, the metrics listener after it (so `/metrics` answers
    /// while requests finish).
    public func run(onListening: @escaping @Sendable (Int) -> Void = { _ in },
                    onMetricsListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let (host, port) = try service.configuration.listenAddress()
        // The service first, so that it shuts down last (``ImageService/run()``: the tables flushed, the loaders closed).
        var services: [any Service] = [service]
        if let (metricsHost, metricsPort) = try service.configuration.metricsListenAddress() {
            services.append(metricsApplication(host: metricsHost, port: metricsPort, onListening: onMetricsListening))
        }
        // A ServiceGroup shuts its services down in reverse order, one after the other: the image listener first.
        services.append(application(host: host, port: port, onListening: onListening))
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped", metadata: ["statistics": "\(service.statistics)"])
    }
}
#endif
