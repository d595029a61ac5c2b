#if Serving
import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus

/// The service's HTTP face: `GET`/`HEAD /v1/{preset}/{path…}` (with `?info`: the image's size, format and
/// ThumbHash as JSON, ``ImageService/summary(of:)``), `/v1/resize`, `/healthz` and, with a registry, `/metrics`. Mount it in any Hummingbird router:
///
/// ```swift
/// let registry = PrometheusCollectorRegistry()
/// let service = try ImageService(configuration: ServerConfiguration(root: "/srv/images"),
///                                metricsFactory: PrometheusMetricsFactory(registry: registry))
/// let router = Router()
/// ImageRoutes(service: service, registry: registry).add(to: router)
/// // GET /v1/thumb/cat.jpg: the default presets are thumb (200×200, fill) and lowres (40×40, fill).
/// ```
///
/// Every answer goes through one place (`handle(_:route:label:_:)`): the request's duration by route
/// and status, the requests counter by status and preset, and one log line with the method, the
/// latency and the cache outcome; a thrown ``ServiceError`` becomes its own response there.
public struct ImageRoutes: Sendable {
    /// The service that answers every image route.
    public let service: ImageService
    /// Exported at `/metrics`; `nil`: no `/metrics` route.
    public let registry: PrometheusCollectorRegistry?
    /// Where the one line per request goes.
    public let logger: Logger

    /// Routes for `service`, exporting `registry` at `/metrics` when one is given and logging to `logger`.
    public init(service: ImageService, registry: PrometheusCollectorRegistry? = nil,
                logger: Logger = Logger(label: "tessera.serve")) {
        self.service = service
        self.registry = registry
        self.logger = logger
    }

    /// Adds the routes to `router` at its root, each for `GET` and `HEAD` (the `GET` answer's status and
    /// headers, `Content-Length` included, without the body; a `HEAD` of a thumbnail not made yet makes it).
    public func add<Context: RequestContext>(to router: Router<Context>) {
        add(to: router, prefix: "")
    }

    /// Adds the routes to `router` under `prefix`, a path of plain segments (`"/images"`; `""` or `"/"`:
    /// the root, as ``add(to:)``): `/images/v1/{preset}/…`, `/images/v1/resize`, `/images/healthz`,
    /// `/images/metrics`, `/images/admin/purge` and the URL dialects' prefixes under it
    /// (`/images/imgproxy/…` for the imgproxy prefix `/imgproxy/`). Paths outside the prefix are not
    /// routed here (`/v1/thumb/cat.jpg` is the router's `404`). Mount ``GalleryRoutes`` with the same
    /// prefix (``GalleryRoutes/add(to:prefix:)``) for a gallery whose thumbnails come from these routes.
    ///
    /// Each route reads the path after the prefix, as `add(to:)` reads the whole path: a signed URL
    /// (``ServerConfiguration/signingKeys``) is signed without the prefix (the signature of
    /// `/v1/thumb/cat.jpg`, ``URLSigner/signature(path:rawQuery:secret:)``, is the one of
    /// `/images/v1/thumb/cat.jpg`), and the log line names the full path.
    ///
    /// What only `tessera serve` has (``ImageServer``): the answers from memory on the connection's event
    /// loop (its HTTP/1 channel's memory-hit handler, before the router), the connection limits and
    /// deadlines (``ServerConfiguration/Connections``) and the `404` of the remaining paths. Mounted routes
    /// answer every request through the router; a memory hit is still one (`X-Tessera-Cache: memory`),
    /// found after routing.
    public func add<Context: RequestContext>(to router: Router<Context>, prefix: String) {
        Self.add(endpoints(prefix: prefix), to: router)
    }

    /// Adds `endpoints` to `router`, each answering Hummingbird's request with Hummingbird's response.
    static func add<Context: RequestContext>(_ endpoints: [Endpoint], to router: Router<Context>) {
        for endpoint in endpoints {
            router.on(RouterPath(endpoint.path), method: endpoint.method) { request, _ in
                Response(await endpoint.respond(to: RouteRequest(request)), head: request.method == .head)
            }
        }
    }

    /// One route of the image routes, for any web framework to mount: a path pattern, a method and the
    /// answer. ``add(to:prefix:)`` mounts them in a Hummingbird router; the `TesseraVapor` product mounts
    /// the same list in a Vapor application. Patterns use the syntax both routers share: plain segments,
    /// `:name` for one segment and `**` for the rest of the path.
    public struct Endpoint: Sendable {
        /// The path pattern, the mount prefix included (`/images/v1/:preset/**`).
        public let path: String
        /// `GET`, `HEAD` or `POST`.
        public let method: HTTPRequest.Method
        /// The answer; reads only the request's method, path, query and headers.
        let answer: @Sendable (RouteRequest) async -> RouteAnswer

        /// The answer to `request`, measured and logged, an error turned into its response.
        public func respond(to request: RouteRequest) async -> RouteAnswer { await answer(request) }
    }

    /// The routes ``add(to:prefix:)`` mounts under `prefix`, each for `GET` and `HEAD` (`POST` for the
    /// purge): `/admin/purge`, `/healthz`, `/metrics` (with a registry), `/v1/resize`, the URL dialects'
    /// prefixes with their health checks, `/v1/:preset` (a preset without a path: `404`) and
    /// `/v1/:preset/**`.
    public func endpoints(prefix: String) -> [Endpoint] {
        let mount = Self.mountPath(prefix)
        var endpoints = [Endpoint(path: mount + "/admin/purge", method: .post) { request in
            await handle(request, route: .admin, label: "purge") { () throws(ServiceError) -> RouteAnswer in
                try await purge(request)
            }
        }]
        for method in [HTTPRequest.Method.get, .head] {
            endpoints.append(Endpoint(path: mount + "/healthz", method: method) { request in
                await handle(request, route: .healthz, label: "healthz") { () throws(ServiceError) -> RouteAnswer in Self.healthAnswer }
            })
            if let registry {
                endpoints.append(Endpoint(path: mount + "/metrics", method: method) { request in
                    await handle(request, route: .metrics, label: "metrics") { () throws(ServiceError) -> RouteAnswer in
                        Self.metricsAnswer(registry)
                    }
                })
            }
            endpoints.append(Endpoint(path: mount + "/v1/resize", method: method) { request in
                await image(request, route: .resize, mount: mount)
            })
            if let prefix = service.configuration.imgproxy.prefix {
                endpoints += dialectEndpoints(method: method, prefix: mount + prefix, mount: mount, health: "health") { .imgproxy(path: $0) }
            }
            if let prefix = service.configuration.thumbor.prefix {
                endpoints += dialectEndpoints(method: method, prefix: mount + prefix, mount: mount, health: "healthcheck") { .thumbor(path: $0) }
            }
            endpoints.append(Endpoint(path: mount + "/v1/:preset", method: method) { request in   // a preset without a path
                await handle(request, route: .preset, label: "unknown") { () throws(ServiceError) -> RouteAnswer in
                    throw ServiceError(.notFound, "no such image")
                }
            })
            let presets = mount + "/v1/"
            endpoints.append(Endpoint(path: presets + ":preset/**", method: method) { request in
                // The preset is the segment after `/v1/`; the path after it as sent (percent-encoded,
                // empty components kept), which the root's checks read.
                let rest = request.path.hasPrefix(presets) ? request.path.dropFirst(presets.count) : ""
                let name = rest.prefix { $0 != "/" }
                let raw = String(rest.dropFirst(min(name.count + 1, rest.count)))
                return await image(request, route: .preset(name: Self.decodedPresetName(name), path: raw), mount: mount)
            })
        }
        return endpoints
    }

    /// A URL dialect's routes under `prefix` (the mount path and ``ServerConfiguration/normalisedPrefix(_:)``):
    /// its health check at `prefix` + `health`, answered as `/healthz` is, and every other path under it,
    /// the part after the prefix as sent (percent-encoded) given to `route`.
    private func dialectEndpoints(method: HTTPRequest.Method, prefix: String, mount: String, health: String,
                                  route: @escaping @Sendable (String) -> ImageService.Route) -> [Endpoint] {
        [
            Endpoint(path: prefix + health, method: method) { request in
                await handle(request, route: .healthz, label: "healthz") { () throws(ServiceError) -> RouteAnswer in Self.healthAnswer }
            },
            Endpoint(path: prefix + "**", method: method) { request in
                let path = request.path
                return await image(request, route: route(path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : ""), mount: mount)
            },
        ]
    }

    /// `POST /admin/purge?src=SOURCE`: with the admin key as `Authorization: Bearer KEY`, everything the
    /// service keeps of the source is dropped (``ImageService/purge(source:)``) and the answer is `204`, with
    /// what was dropped in `X-Tessera-Purged`. `404` when no admin key is configured (the route does not
    /// exist), `401` with a missing or wrong key (compared in constant time), `400` without `src`.
    private func purge(_ request: RouteRequest) async throws(ServiceError) -> RouteAnswer {
        guard let adminKey = service.configuration.adminKey else { throw ServiceError(.notFound, "no such route (no admin key is configured)") }
        let bearer = "Bearer "
        guard let authorization = request.headers[.authorization], authorization.hasPrefix(bearer),
              URLDialect.signatureMatches(Array(authorization.utf8.dropFirst(bearer.utf8.count)), Array(adminKey.utf8)) else {
            throw ServiceError(.unauthorized, "the admin routes need Authorization: Bearer with the admin key")
        }
        guard let src = ImageService.RequestInfo.parse(request.query)["src"], !src.isEmpty else {
            throw ServiceError(.missingSource, "src is required: the source to purge, as /v1/resize names it")
        }
        let report = try await service.purge(source: src)
        logger.info("purged", metadata: ["src": "\(src)", "dropped": "\(report)"])
        return RouteAnswer(status: .noContent, headers: [Self.purgedField: report.description, .cacheControl: "no-store"])
    }

    /// `X-Tessera-Purged`: what a purge dropped (``ImageService/PurgeReport``).
    static let purgedField = HTTPFields.Element.Name("X-Tessera-Purged")!

    /// `GET /healthz`'s answer.
    static var healthAnswer: RouteAnswer {
        RouteAnswer(status: .ok, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{\"status\":\"ok\"}"))
    }

    /// `GET /metrics`'s answer: `registry` in Prometheus' text format.
    static func metricsAnswer(_ registry: PrometheusCollectorRegistry) -> RouteAnswer {
        RouteAnswer(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ByteBuffer(bytes: registry.emitToBuffer()))
    }

    /// `GET /metrics`'s answer: `registry` in Prometheus' text format.
    public static func metricsResponse(_ registry: PrometheusCollectorRegistry) -> Response {
        Response(metricsAnswer(registry), head: false)
    }

    /// An image route's answer, through the service's one request path; the service sees the path after
    /// the `mount` path (``add(to:prefix:)``), as it would at the root.
    private func image(_ request: RouteRequest, route: ImageService.Route, mount: String) async -> RouteAnswer {
        await handle(request, route: route.metricsRoute, label: route.label, dialect: route.dialect) { () throws(ServiceError) -> RouteAnswer in
            let path = request.path
            let info = ImageService.RequestInfo(route: route, path: path.hasPrefix(mount) ? String(path.dropFirst(mount.count)) : path,
                                                rawQuery: request.query,
                                                accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
                                                ifModifiedSince: request.headers[.ifModifiedSince])
            if ImageService.wantsSummary(info) { return Self.answer(try await service.summary(of: info)) }
            return Self.answer(try await service.respond(to: info))
        }
    }

    /// The one place where an answer or an error becomes the response, and where every request is
    /// measured and logged.
    func handle(_ request: RouteRequest, route: ServiceMetrics.Route, label: String, dialect: URLDialect = .tessera,
                _ body: () async throws(ServiceError) -> RouteAnswer) async -> RouteAnswer {
        let start = ContinuousClock.now
        let isImage = route.isImage
        if isImage { service.metrics.inFlight.increment() }   // image requests only: the gauge is the service's load
        defer { if isImage { service.metrics.inFlight.decrement() } }
        var answer: RouteAnswer
        var outcome = "-"
        do throws(ServiceError) {
            answer = try await body()
            outcome = answer.headers[Self.cacheOutcomeField] ?? "-"
        } catch {
            if error.status.code >= 500 { logger.warning("request failed", metadata: ["error": "\(error)"]) }
            answer = error.answer(in: dialect)
            outcome = "error"
        }
        record(method: request.method.rawValue, path: request.path, route: route, label: label,
               status: answer.status.code, outcome: outcome, start: start)
        return answer
    }

    /// The answer of an image.
    static func answer(_ image: ImageService.ImageResponse) -> RouteAnswer {
        var fields = HTTPFields()
        forEachField(of: image) { fields.append(HTTPFields.Element(name: $0, value: $1)) }
        if image.status == 304 { return RouteAnswer(status: .notModified, headers: fields) }
        return RouteAnswer(status: HTTPResponse.Status(code: image.status), headers: fields, body: image.bodyBuffer)
    }

    /// The JSON answer of `?info`: `{"width":…,"height":…,"format":…,"thumbHash":…}`, cached as long as the
    /// image itself; `Vary: Accept` because the format follows it.
    static func answer(_ summary: ImageService.ImageSummary) -> RouteAnswer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(summary)) ?? Data("{}".utf8)
        return RouteAnswer(status: .ok, headers: [.contentType: "application/json", .vary: "Accept", .cacheControl: summary.cacheControl],
                           body: ByteBuffer(bytes: body))
    }

    /// Calls `body` with each header of an image response or `304` (without `Content-Length`, `Date` and
    /// `Server`), in order: the one list both the route and the `MemoryHitHandler` (in NIO's types) answer with.
    static func forEachField(of image: ImageService.ImageResponse, _ body: (HTTPFields.Element.Name, String) -> Void) {
        body(.vary, "Accept")
        body(.eTag, image.etag)
        body(.cacheControl, image.cacheControl)
        body(cacheOutcomeField, image.outcome.rawValue)
        switch image.integrity {
        case .intact: break
        case .damaged: body(decodeField, "damaged")
        case .truncated: body(decodeField, "partial")
        }
        if image.isFallback { body(fallbackField, "1") }
        if image.status != 304 { body(.contentType, image.contentType) }
        if let disposition = image.contentDisposition { body(.contentDisposition, disposition) }
        if let seconds = image.lastModified { body(.lastModified, HTTPDate.text(seconds)) }
        if let animation = image.animation { body(animationField, animation) }
    }

    /// The path routes are mounted at for `prefix`: `""` for the root (`""`, `"/"`), otherwise one leading
    /// `/` and no trailing one (`"images/"` → `"/images"`).
    static func mountPath(_ prefix: String) -> String {
        let inner = prefix.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        return inner.isEmpty ? "" : "/" + inner
    }

    /// A preset's name from the URL, percent-decoded (undecodable: empty, an unknown preset).
    private static func decodedPresetName(_ raw: some StringProtocol) -> String {
        raw.utf8.contains(UInt8(ascii: "%")) ? String(raw).removingPercentEncoding ?? "" : String(raw)
    }

    /// Counts a finished request (duration by route and status; requests by status and preset) and
    /// writes its log line.
    func record(method: String, path: String, route: ServiceMetrics.Route, label: String, status: Int, outcome: String,
                start: ContinuousClock.Instant) {
        record(method: method, path: path, route: route, label: label, status: status, outcome: outcome, start: start,
               into: recorders(route: route, label: label, status: status))
    }

    /// The metrics ``record(method:path:route:label:status:outcome:start:)`` adds a request of `route`,
    /// `label` and `status` to (a connection answering hits keeps them, so that a hit looks nothing up).
    func recorders(route: ServiceMetrics.Route, label: String, status: Int) -> ServiceMetrics.Recorders {
        service.metrics.recorders(route: route, status: status,
                                  preset: route.isImage ? (route != .preset || service.presets[label] != nil ? label : "unknown") : nil)
    }

    /// ``record(method:path:route:label:status:outcome:start:)`` into `recorders`, the request's own
    /// (``recorders(route:label:status:)``).
    func record(method: String, path: String, route: ServiceMetrics.Route, label: String, status: Int, outcome: String,
                start: ContinuousClock.Instant, into recorders: ServiceMetrics.Recorders) {
        let elapsed = ContinuousClock.now - start
        let (seconds, attoseconds) = elapsed.components
        recorders.duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        recorders.requests?.increment()
        logger.info("request", metadata: [
            "method": "\(method)", "path": "\(path)", "status": "\(status)", "preset": "\(route.isImage ? label : "-")",
            "cache": "\(outcome)", "latency_ms": "\(String(format: "%.2f", Double(seconds) * 1000 + Double(attoseconds) / 1e15))",
        ])
    }

    /// `X-Tessera-Cache`.
    static let cacheOutcomeField = HTTPFields.Element.Name("X-Tessera-Cache")!
    /// `X-Tessera-Decode`: `partial` when the source ended early, `damaged` when its codec recovered from damage.
    static let decodeField = HTTPFields.Element.Name("X-Tessera-Decode")!
    /// `X-Tessera-Animation` (``ImageService/ImageResponse/animation``).
    static let animationField = HTTPFields.Element.Name("X-Tessera-Animation")!
    /// `X-Tessera-Fallback: 1` on the fallback image.
    static let fallbackField = HTTPFields.Element.Name("X-Tessera-Fallback")!
}
#endif
