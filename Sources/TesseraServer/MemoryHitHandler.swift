#if Serving
import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
@_spi(Internal) import TesseraImaging
import Tessera

/// Answers `GET /v1/…` requests (a preset, or `/v1/resize` of a local source) whose encoded response is in memory (or that get a `304`) on the
/// connection's event loop, before Hummingbird's request task sees them. A hot thumbnail then costs the
/// HTTP parse, one cache lookup and one socket write: no task, no hop between threads, no conversion to
/// swift-http-types, no copy of the body (the cache's `ByteBuffer` is written as it is). Every other
/// request goes on unchanged to the conversion and the router (see ``ImageHTTPChannel``).
///
/// The handler sits right after NIO's HTTP/1 decoder and encoder, so it sees whole `HTTPRequestHead`s. Its
/// rules keep HTTP/1.1 correct:
/// - **Order.** It answers only while no request it passed on is still unanswered (it counts them, and a
///   response's `.end` going out settles one), so pipelined responses leave in request order.
/// - **Back-pressure.** It answers only while the channel is writable; otherwise the request goes on to
///   Hummingbird, whose writer waits for the socket and stops reading, so a client that sends and never
///   reads cannot make the server buffer without bound.
/// - **Connection management** stays with Hummingbird: a request with a `Connection` header, with a body
///   or of another version than HTTP/1.1 goes on to the router. A graceful shutdown is Hummingbird's
///   connection-state handler's: it closes an idle connection at once and a busy one after its last
///   answer, and while a connection is busy the handler answers nothing (the order rule).
/// - **Same answer.** The status, headers, body, metrics and log line are those of the route
///   (`ImageRoutes.forEachField`, `ImageRoutes.record`), plus `Content-Length`, `Date` and `Server` as
///   Hummingbird adds them. The answer goes out as typed parts through NIO's HTTP/1 encoder, like the
///   router's: the decoder tells the encoder the method of every request it decodes, and the encoder
///   takes one off that queue per response head it writes, so a response written around it (as raw bytes
///   below it) would leave one entry per hit on a keep-alive connection for as long as it stays open.
final class MemoryHitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The routes (and through them the service); let go when the connection closes, so that a server that
    /// has stopped holds no table open through a pipeline NIO tears down a moment after the close.
    private var routes: ImageRoutes?
    /// Requests passed on to the router whose response has not ended.
    private var unanswered = 0
    /// A request answered from memory whose `.end` has not arrived yet, with its answer.
    private var held: (request: HTTPRequestHead, hit: Hit, start: ContinuousClock.Instant)?
    private var needsFlush = false

    init(routes: ImageRoutes) {
        self.routes = routes
    }

    func channelInactive(context: ChannelHandlerContext) {
        routes = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let start = ContinuousClock.now
            if unanswered == 0, context.channel.isWritable, let hit = memoryHit(request) {
                held = (request, hit, start)
            } else {
                unanswered += 1
                context.fireChannelRead(data)
            }
        case .body:
            if let held {   // a GET with a body: the router decides
                self.held = nil
                unanswered += 1
                context.fireChannelRead(wrapInboundOut(.head(held.request)))
            }
            context.fireChannelRead(data)
        case .end:
            guard let held else { context.fireChannelRead(data); return }
            self.held = nil
            answer(held.hit.image, context: context)
            routes?.record(method: "GET", path: held.hit.path, route: held.hit.route == .resize ? .resize : .preset,
                          label: held.hit.route.label, status: held.hit.image.status, outcome: held.hit.image.outcome.rawValue,
                          start: held.start)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    private typealias Hit = (path: String, route: ImageService.Route, image: ImageService.ImageResponse)

    /// The route's memory answer to `request`, when it is a plain HTTP/1.1 `GET` the handler may answer.
    private func memoryHit(_ request: HTTPRequestHead) -> Hit? {
        guard request.method == .GET, request.version == .http1_1, request.uri.hasPrefix("/v1/"),
              !request.headers.contains(name: "connection") else { return nil }
        let uri = URI(request.uri)
        let path = uri.path
        guard let route = ImageRoutes.route(forPath: path) else { return nil }
        let info = ImageService.RequestInfo(route: route, path: path, rawQuery: uri.query, accept: request.headers.first(name: "accept"),
                                            ifNoneMatch: request.headers.first(name: "if-none-match"))
        return routes?.service.cachedResponse(to: info).map { (path, route, $0) }
    }

    /// Writes the response; the flush waits for the end of this read, so pipelined answers go out together.
    private func answer(_ image: ImageService.ImageResponse, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(8)
        ImageRoutes.forEachField(of: image) { headers.add(name: $0.rawName, value: $1) }
        if image.status != 304 { headers.add(name: "Content-Length", value: String(image.bodyBuffer.readableBytes)) }
        headers.add(name: "Date", value: HTTPDate.now())
        headers.add(name: "Server", value: ImageServer.serverName)
        needsFlush = true
        let head = HTTPResponseHead(version: .http1_1, status: image.status == 304 ? .notModified : .ok, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if image.status != 304 { context.write(wrapOutboundOut(.body(.byteBuffer(image.bodyBuffer))), promise: nil) }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// The `Date` header's value (`HTTPCacheInfo.formatHTTPDate`), formatted at most once a second.
enum HTTPDate {
    private static let cache = LockedValue((second: 0, text: ""))

    static func now() -> String {
        let second = time(nil)
        return cache.withLock { cached in
            if cached.second != second {
                cached = (second, HTTPCacheInfo.formatHTTPDate(Date(timeIntervalSince1970: TimeInterval(second))))
            }
            return cached.text
        }
    }
}
#endif
