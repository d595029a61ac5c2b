#if Serving
import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
@_spi(Internal) import TesseraImaging
import Tessera

/// Answers `GET /v1/{preset}/…` requests whose encoded response is in memory (or that get a `304`) on the
/// connection's event loop, before Hummingbird's request task sees them. A hot thumbnail then costs the
/// HTTP parse, one cache lookup and one socket write: no task, no hop between threads, no copy of the body
/// (the cache's `ByteBuffer` is written as it is). Every other request goes on to the router unchanged.
///
/// The handler sits after HTTP part decoding (`HTTP1Channel.Configuration.additionalChannelHandlers`), so
/// it sees whole `HTTPRequest` heads. Its rules keep HTTP/1.1 correct:
/// - **Order.** It answers only while no request it passed on is still unanswered (it counts them, and a
///   response's `.end` going out settles one), so pipelined responses leave in request order.
/// - **Back-pressure.** It answers only while the channel is writable; otherwise the request goes on to
///   Hummingbird, whose writer waits for the socket and stops reading, so a client that sends and never
///   reads cannot make the server buffer without bound.
/// - **Connection management** stays with Hummingbird: a request with a `Connection` header, with a body,
///   or arriving after a graceful shutdown began goes on to the router.
/// - **Same answer.** The status, headers, body, metrics and log line are those of the route
///   (`ImageRoutes.fields(for:)`, `ImageRoutes.record`), plus `Content-Length`, `Date` and `Server` as
///   Hummingbird adds them. The answer goes out as typed parts through NIO's HTTP/1 encoder, like the
///   router's: the encoder keeps a queue of the request methods it has seen and removes one per response
///   head it writes, so a response written around it (as raw bytes below it) would leave one entry per hit
///   on a keep-alive connection for as long as it stays open (the soak found 67 MB of them).
final class MemoryHitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let routes: ImageRoutes
    private let serverName: String
    /// Requests passed on to the router whose response has not ended.
    private var unanswered = 0
    /// A request answered from memory whose `.end` has not arrived yet, with its answer.
    private var held: (request: HTTPRequest, hit: Hit, start: ContinuousClock.Instant)?
    private var quiescing = false
    private var needsFlush = false

    init(routes: ImageRoutes, serverName: String) {
        self.routes = routes
        self.serverName = serverName
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let start = ContinuousClock.now
            if unanswered == 0, !quiescing, context.channel.isWritable, let hit = memoryHit(request) {
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
            routes.record(path: held.hit.path, preset: held.hit.preset, status: held.hit.image.status,
                          outcome: held.hit.image.outcome, start: held.start)
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

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { quiescing = true }
        context.fireUserInboundEventTriggered(event)
    }

    private typealias Hit = (path: String, preset: String, image: ImageService.ImageResponse)

    /// The route's memory answer to `request`, when it is a plain `GET` the handler may answer.
    private func memoryHit(_ request: HTTPRequest) -> Hit? {
        guard request.method == .get, request.headerFields[.connection] == nil, let target = request.path,
              target.hasPrefix("/v1/") else { return nil }
        let uri = URI(target)
        let path = uri.path
        return routes.memoryResponse(path: path, rawQuery: uri.query, accept: request.headerFields[.accept],
                                     ifNoneMatch: request.headerFields[.ifNoneMatch]).map { (path, $0.preset, $0.image) }
    }

    /// Writes the response; the flush waits for the end of this read, so pipelined answers go out together.
    private func answer(_ image: ImageService.ImageResponse, context: ChannelHandlerContext) {
        var fields = ImageRoutes.fields(for: image)
        if image.status != 304 { fields[.contentLength] = String(image.bodyBuffer.readableBytes) }
        fields[.date] = HTTPDate.now()
        fields[.server] = serverName
        needsFlush = true
        let status: HTTPResponse.Status = image.status == 304 ? .notModified : .ok
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        if image.status != 304 { context.write(wrapOutboundOut(.body(image.bodyBuffer)), promise: nil) }
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
