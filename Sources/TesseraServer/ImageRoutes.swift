#if Serving
import Foundation
import Hummingbird
import Logging
import Prometheus

/// The service's HTTP face: `GET /v1/{preset}/{path…}`, `GET /v1/resize`, `GET /healthz`, `GET /metrics`.
/// Mount it in any Hummingbird router:
///
/// ```swift
/// let service = try ImageService(configuration: ServerConfiguration(root: "/srv/images"))
/// let router = Router()
/// ImageRoutes(service: service).add(to: router)
/// ```
///
/// Every response of the service goes through `respond(_:_:)`: request time limit, in-flight gauge,
/// requests counter by status and preset, and one log line per request with its latency and cache outcome.
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

    /// Adds the routes to `router`.
    public func add<Context: RequestContext>(to router: Router<Context>) {
        router.get("/healthz") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"status\":\"ok\"}")))
        }
        if let registry {
            router.get("/metrics") { _, _ -> Response in
                Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                         body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
            }
        }
        router.get("/v1/**") { request, _ -> Response in
            await self.respondToImageRequest(request)
        }
    }

    /// `/v1/resize` and `/v1/{preset}/{path…}`. A preset request answered from the encoded-response memory
    /// cache (or with a `304`) is answered at once, without the timed task group, whose two child tasks and
    /// timer would cost more than the hit itself; everything else runs under the request time limit.
    func respondToImageRequest(_ request: Request) async -> Response {
        let path = request.uri.path
        if path == "/v1/resize" { return await respond(request) { info in ("resize", try await service.resizedImage(request: info)) } }
        guard let (preset, rawPath) = Self.presetRoute(path) else {
            return await respond(request) { _ in throw ServiceError(404, "not_found", "no such route") }
        }
        let start = ContinuousClock.now
        service.metrics.inFlight.increment()
        defer { service.metrics.inFlight.decrement() }
        let info = Self.requestInfo(request)
        do {
            let (resolved, cached) = try service.cachedPresetImage(preset: preset, rawPath: rawPath, request: info)
            if let cached { return finish(request, start: start, .success((preset, cached))) }
            return finish(request, start: start, await timed(info) { _ in (preset, try await service.producePresetImage(resolved)) })
        } catch {
            return finish(request, start: start, .failure(error))
        }
    }

    /// The answer to `GET /v1/{preset}/{path…}` when it needs no waiting: an encoded-response memory hit or
    /// a `304`. `nil` for every other request, errors included: the route answers those. The
    /// `MemoryHitHandler` calls this on the connection's event loop.
    func memoryResponse(path: String, rawQuery: String?, accept: String?, ifNoneMatch: String?)
        -> (preset: String, image: ImageService.ImageResponse)? {
        guard let (preset, rawPath) = Self.presetRoute(path) else { return nil }
        let info = ImageService.RequestInfo(path: path, rawQuery: rawQuery, accept: accept, ifNoneMatch: ifNoneMatch)
        guard let (_, cached) = try? service.cachedPresetImage(preset: preset, rawPath: rawPath, request: info), let cached else { return nil }
        return (preset, cached)
    }

    /// `/v1/{preset}/{rest}` split into the preset's name (percent-decoded) and the still-encoded rest.
    private static func presetRoute(_ path: String) -> (preset: String, rawPath: String)? {
        guard path.hasPrefix("/v1/") else { return nil }
        let rest = path.dropFirst(4)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let name = rest[..<slash]
        let preset = name.utf8.contains(UInt8(ascii: "%")) ? String(name).removingPercentEncoding ?? "" : String(name)
        return (preset, String(rest[rest.index(after: slash)...]))
    }

    /// Runs one image request with the request time limit, and turns its result or error into a response.
    func respond(_ request: Request,
                 _ body: @escaping @Sendable (ImageService.RequestInfo) async throws -> (String, ImageService.ImageResponse)) async -> Response {
        let start = ContinuousClock.now
        service.metrics.inFlight.increment()
        defer { service.metrics.inFlight.decrement() }
        return finish(request, start: start, await timed(Self.requestInfo(request), body))
    }

    private static func requestInfo(_ request: Request) -> ImageService.RequestInfo {
        ImageService.RequestInfo(path: request.uri.path, rawQuery: request.uri.query,
                                 accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch])
    }

    /// `body` raced against the request time limit (`503 timeout` when the limit comes first).
    private func timed(_ info: ImageService.RequestInfo,
                       _ body: @escaping @Sendable (ImageService.RequestInfo) async throws -> (String, ImageService.ImageResponse)) async
        -> Result<(String, ImageService.ImageResponse), ServiceError> {
        let limit = Duration.seconds(service.configuration.limits.requestTimeoutSeconds)
        return await withTaskGroup(of: Result<(String, ImageService.ImageResponse), ServiceError>?.self) { group in
            group.addTask {
                do { return .success(try await body(info)) } catch { return .failure(ServiceError.from(error)) }
            }
            group.addTask {
                await RequestTimer.sleep(for: limit)
                return Task.isCancelled ? nil : .failure(ServiceError(503, "timeout", "the request took longer than the limit"))
            }
            var first: Result<(String, ImageService.ImageResponse), ServiceError>?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .failure(ServiceError(503, "cancelled", "the request was cancelled"))
        }
    }

    /// The response for a result: headers, the requests counter by status and preset, one log line.
    private func finish(_ request: Request, start: ContinuousClock.Instant,
                        _ result: Result<(String, ImageService.ImageResponse), ServiceError>) -> Response {
        switch result {
        case .success(let (preset, image)):
            record(path: request.uri.path, preset: preset, status: image.status, outcome: image.outcome, start: start)
            if image.status == 304 { return Response(status: .notModified, headers: Self.fields(for: image)) }
            return Response(status: .ok, headers: Self.fields(for: image), body: ResponseBody(byteBuffer: image.bodyBuffer))
        case .failure(let error):
            if error.status >= 500 { logger.warning("request failed", metadata: ["error": "\(error)"]) }
            record(path: request.uri.path, preset: Self.presetLabel(request.uri.path), status: error.status, outcome: "error", start: start)
            return Response(status: HTTPResponse.Status(code: error.status),
                            headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: error.jsonBody)))
        }
    }

    /// The headers of an image response or `304` (without `Content-Length`, `Date` and `Server`).
    static func fields(for image: ImageService.ImageResponse) -> HTTPFields {
        var fields = HTTPFields()
        forEachField(of: image) { fields.append(HTTPFields.Element(name: $0, value: $1)) }
        return fields
    }

    /// Calls `body` with each header of an image response or `304` (without `Content-Length`, `Date` and
    /// `Server`), in order: the one list both the route and the `MemoryHitHandler` (in NIO's types) answer with.
    static func forEachField(of image: ImageService.ImageResponse, _ body: (HTTPFields.Element.Name, String) -> Void) {
        body(.vary, "Accept")
        body(.eTag, image.etag)
        body(.cacheControl, image.cacheControl)
        body(cacheOutcomeField, image.outcome)
        if image.status != 304 { body(.contentType, image.contentType) }
    }

    /// Counts a finished request by status and preset and writes its log line.
    func record(path: String, preset: String, status: Int, outcome: String, start: ContinuousClock.Instant) {
        service.metrics.request(status: status, preset: service.presets[preset] == nil && preset != "resize" ? "unknown" : preset)
        logger.info("request", metadata: [
            "method": "GET", "path": "\(path)", "status": "\(status)", "preset": "\(preset)",
            "cache": "\(outcome)", "latency_ms": "\(Self.milliseconds(since: start))",
        ])
    }

    /// `X-Tessera-Cache`.
    private static let cacheOutcomeField = HTTPFields.Element.Name("X-Tessera-Cache")!

    /// Milliseconds since `start`, with two decimals.
    private static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = (ContinuousClock.now - start).components
        return String(format: "%.2f", Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15)
    }

    /// The preset a path names, for errors' labels (unknown names are counted as `unknown`).
    private static func presetLabel(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count > 2 ? String(parts[2]) : "unknown"
    }
}
#endif
