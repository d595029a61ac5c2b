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
        let mount = Self.mountPath(prefix)
        router.on(RouterPath(mount + "/admin/purge"), method: .post) { request, _ in
            await handle(request, route: .admin, label: "purge") { () throws(ServiceError) -> Response in
                try await purge(request)
            }
        }
        for method in [HTTPRequest.Method.get, .head] {
            router.on(RouterPath(mount + "/healthz"), method: method) { request, _ in
                await handle(request, route: .healthz, label: "healthz") { () throws(ServiceError) -> Response in
                    Self.healthResponse
                }
            }
            if let registry {
                router.on(RouterPath(mount + "/metrics"), method: method) { request, _ in
                    await handle(request, route: .metrics, label: "metrics") { () throws(ServiceError) -> Response in
                        Self.metricsResponse(registry)
                    }
                }
            }
            router.on(RouterPath(mount + "/v1/resize"), method: method) { request, _ in
                await image(request, route: .resize, mount: mount)
            }
            if let prefix = service.configuration.imgproxy.prefix {
                addDialect(to: router, method: method, prefix: mount + prefix, mount: mount, health: "health") { .imgproxy(path: $0) }
            }
            if let prefix = service.configuration.thumbor.prefix {
                addDialect(to: router, method: method, prefix: mount + prefix, mount: mount, health: "healthcheck") { .thumbor(path: $0) }
            }
            router.on(RouterPath(mount + "/v1/:preset"), method: method) { request, _ in   // a preset without a path
                await handle(request, route: .preset, label: "unknown") { () throws(ServiceError) -> Response in
                    throw ServiceError(.notFound, "no such image")
                }
            }
            router.on(RouterPath(mount + "/v1/:preset/**"), method: method) { request, context in
                // The preset as a route parameter; the path after it as sent (percent-encoded, empty
                // components kept), which the root's checks read.
                let name = context.parameters.get("preset") ?? ""
                let prefix = mount + "/v1/" + name + "/"
                let raw = request.uri.path.hasPrefix(prefix) ? String(request.uri.path.dropFirst(prefix.count)) : ""
                return await image(request, route: .preset(name: Self.decodedPresetName(name), path: raw), mount: mount)
            }
        }
    }

    /// A URL dialect's routes under `prefix` (the mount path and ``ServerConfiguration/normalisedPrefix(_:)``):
    /// its health check at `prefix` + `health`, answered as `/healthz` is, and every other path under it,
    /// the part after the prefix as sent (percent-encoded) given to `route`.
    private func addDialect<Context: RequestContext>(to router: Router<Context>, method: HTTPRequest.Method, prefix: String,
                                                     mount: String, health: String,
                                                     route: @escaping @Sendable (String) -> ImageService.Route) {
        router.on(RouterPath(prefix + health), method: method) { request, _ in
            await handle(request, route: .healthz, label: "healthz") { () throws(ServiceError) -> Response in
                Self.healthResponse
            }
        }
        router.on(RouterPath(prefix + "**"), method: method) { request, _ in
            let path = request.uri.path
            return await image(request, route: route(path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : ""), mount: mount)
        }
    }

    /// `POST /admin/purge?src=SOURCE`: with the admin key as `Authorization: Bearer KEY`, everything the
    /// service keeps of the source is dropped (``ImageService/purge(source:)``) and the answer is `204`, with
    /// what was dropped in `X-Tessera-Purged`. `404` when no admin key is configured (the route does not
    /// exist), `401` with a missing or wrong key (compared in constant time), `400` without `src`.
    private func purge(_ request: Request) async throws(ServiceError) -> Response {
        guard let adminKey = service.configuration.adminKey else { throw ServiceError(.notFound, "no such route (no admin key is configured)") }
        let bearer = "Bearer "
        guard let authorization = request.headers[.authorization], authorization.hasPrefix(bearer),
              URLDialect.signatureMatches(Array(authorization.utf8.dropFirst(bearer.utf8.count)), Array(adminKey.utf8)) else {
            throw ServiceError(.unauthorized, "the admin routes need Authorization: Bearer with the admin key")
        }
        guard let src = ImageService.RequestInfo.parse(request.uri.query)["src"], !src.isEmpty else {
            throw ServiceError(.missingSource, "src is required: the source to purge, as /v1/resize names it")
        }
        let report = try await service.purge(source: src)
        logger.info("purged", metadata: ["src": "\(src)", "dropped": "\(report)"])
        return Response(status: .noContent, headers: [Self.purgedField: report.description, .cacheControl: "no-store"])
    }

    /// `X-Tessera-Purged`: what a purge dropped (``ImageService/PurgeReport``).
    static let purgedField = HTTPFields.Element.Name("X-Tessera-Purged")!

    /// `GET /healthz`'s answer.
    static var healthResponse: Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"status\":\"ok\"}")))
    }

    /// `GET /metrics`'s answer: `registry` in Prometheus' text format.
    public static func metricsResponse(_ registry: PrometheusCollectorRegistry) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }

    /// An image route's answer, through the service's one request path; the service sees the path after
    /// the `mount` path (``add(to:prefix:)``), as it would at the root.
    private func image(_ request: Request, route: ImageService.Route, mount: String) async -> Response {
        await handle(request, route: route.metricsRoute, label: route.label, dialect: route.dialect) { () throws(ServiceError) -> Response in
            let path = request.uri.path
            let info = ImageService.RequestInfo(route: route, path: path.hasPrefix(mount) ? String(path.dropFirst(mount.count)) : path,
                                                rawQuery: request.uri.query,
                                                accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
                                                ifModifiedSince: request.headers[.ifModifiedSince])
            if ImageService.wantsSummary(info) { return Self.response(try await service.summary(of: info)) }
            let image = try await service.respond(to: info)
            return Self.response(image)
        }
    }

    /// The one place where an answer or an error becomes the response, and where every request is
    /// measured and logged.
    func handle(_ request: Request, route: ServiceMetrics.Route, label: String, dialect: URLDialect = .tessera,
                _ body: () async throws(ServiceError) -> Response) async -> Response {
        let start = ContinuousClock.now
        let isImage = route.isImage
        if isImage { service.metrics.inFlight.increment() }   // image requests only: the gauge is the service's load
        defer { if isImage { service.metrics.inFlight.decrement() } }
        var response: Response
        var outcome = "-"
        do throws(ServiceError) {
            response = try await body()
            outcome = response.headers[Self.cacheOutcomeField] ?? "-"
        } catch {
            if error.status.code >= 500 { logger.warning("request failed", metadata: ["error": "\(error)"]) }
            response = error.response(in: dialect)
            outcome = "error"
        }
        if request.method == .head { response = response.createHeadResponse() }   // Content-Length kept
        record(method: request.method.rawValue, path: request.uri.path, route: route, label: label,
               status: response.status.code, outcome: outcome, start: start)
        return response
    }

    /// The response of an image answer.
    static func response(_ image: ImageService.ImageResponse) -> Response {
        var fields = HTTPFields()
        forEachField(of: image) { fields.append(HTTPFields.Element(name: $0, value: $1)) }
        if image.status == 304 { return Response(status: .notModified, headers: fields) }
        return Response(status: HTTPResponse.Status(code: image.status), headers: fields, body: ResponseBody(byteBuffer: image.bodyBuffer))
    }

    /// The JSON answer of `?info`: `{"width":…,"height":…,"format":…,"thumbHash":…}`, cached as long as the
    /// image itself; `Vary: Accept` because the format follows it.
    static func response(_ summary: ImageService.ImageSummary) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(summary)) ?? Data("{}".utf8)
        return Response(status: .ok, headers: [.contentType: "application/json", .vary: "Accept", .cacheControl: summary.cacheControl],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
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
        let elapsed = ContinuousClock.now - start
        let (seconds, attoseconds) = elapsed.components
        service.metrics.duration(route: route, status: status, nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        if route.isImage {
            service.metrics.request(status: status, preset: route != .preset || service.presets[label] != nil ? label : "unknown")
        }
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
