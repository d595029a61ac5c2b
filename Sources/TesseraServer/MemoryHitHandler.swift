#if Serving
import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
@_spi(Internal) import TesseraImaging
import Tessera

/// Answers a plain `GET` whose encoded response is in memory (or that gets a `304`) on the connection's
/// event loop, before Hummingbird's request task sees it. A hot thumbnail then costs the HTTP parse, two
/// map lookups and one socket write: no task, no hop between threads, no conversion to swift-http-types,
/// no routing, no resolve, no copy of the body (the cache's `ByteBuffer` is written as it is). Every other
/// request goes on unchanged to the conversion and the router (see `ImageHTTPChannel`).
///
/// The handler does not route or resolve: it looks the request target (with the format its `Accept`
/// chose) up among the targets the service has resolved before (``ResolvedTargets``), and asks the service
/// for the memory answer of the resolved request (``ImageService/memoryAnswer(to:for:ifNoneMatch:ifModifiedSince:)``), the
/// same answer the router's path gives. A target the service has not resolved yet, or whose answer is not
/// in memory, goes to the router.
///
/// The handler sits right after NIO's HTTP/1 decoder and encoder, so it sees whole `HTTPRequestHead`s. Its
/// rules keep HTTP/1.1 correct:
/// - **Order.** It answers only while no request it passed on is still unanswered (it counts them, and a
///   response's `.end` going out settles one), so pipelined responses leave in request order.
/// - **Back-pressure.** It answers only while the channel is writable; otherwise the request goes on to
///   Hummingbird, whose writer waits for the socket and stops reading, so a client that sends and never
///   reads cannot make the server buffer without bound.
/// - **Connection management** stays with Hummingbird: a request with a `Connection` header other than
///   `keep-alive` (which browsers send, and which asks for what HTTP/1.1 does anyway), with a body or of
///   another version than HTTP/1.1 goes on to the router. A graceful shutdown is Hummingbird's
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
    /// The last `Accept` text and the format it chose (a connection sends the same one again and again).
    private var lastAccept: (text: String, choice: ImageFileFormat?)?
    /// The `Date` text of the last second a head was made in.
    private var date = (second: 0, text: "")

    /// A handler answering from `routes`' service.
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
            let hit = held.hit
            needsFlush = true   // the flush waits for the end of this read, so pipelined answers go out together
            context.write(wrapOutboundOut(.head(hit.head)), promise: nil)
            if hit.status != 304 { context.write(wrapOutboundOut(.body(.byteBuffer(hit.body))), promise: nil) }
            context.write(wrapOutboundOut(.end(nil)), promise: nil)
            routes?.record(method: "GET", path: hit.path, route: hit.route.metricsRoute,
                           label: hit.route.label, status: hit.status, outcome: hit.outcome.rawValue, start: held.start)
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

    /// Whether `headers` have no `Connection` field, or one saying only `keep-alive` (any case).
    private static func keepsAlive(_ headers: HTTPHeaders) -> Bool {
        guard headers.contains(name: "connection") else { return true }
        let values = headers[canonicalForm: "connection"]
        return values.count == 1 && values[0].lowercased() == "keep-alive"
    }

    /// A memory answer: what to write, and what its log line and metrics say.
    private struct Hit {
        let head: HTTPResponseHead
        let body: ByteBuffer
        let status: Int
        let outcome: CacheOutcome
        let path: String
        let route: ImageService.Route
    }

    /// The memory answer to `request`, when it is a plain HTTP/1.1 `GET` the handler may answer, of a target
    /// the service has resolved before.
    private func memoryHit(_ request: HTTPRequestHead) -> Hit? {
        guard request.method == .GET, request.version == .http1_1, Self.keepsAlive(request.headers), let routes else { return nil }
        let service = routes.service
        let key = ResolvedTargets.Key(target: request.uri, accepted: accepted(request.headers.first(name: "accept")))
        guard let resolved = service.targets.get(key),
              let image = service.memoryAnswer(to: resolved, for: key, ifNoneMatch: request.headers.first(name: "if-none-match"),
                                               ifModifiedSince: request.headers.first(name: "if-modified-since"))
        else { return nil }
        return Hit(head: head(of: image), body: image.bodyBuffer, status: image.status, outcome: image.outcome,
                   path: resolved.path, route: resolved.route)
    }

    /// The format `accept` chooses (``OutputChoice/bestAccepted(_:)``), worked out again only when the
    /// connection's `Accept` text changes.
    private func accepted(_ accept: String?) -> ImageFileFormat? {
        guard let accept else { return nil }
        if let last = lastAccept, last.text == accept { return last.choice }
        let choice = OutputChoice.bestAccepted(accept)
        lastAccept = (accept, choice)
        return choice
    }

    /// The head of an image answer: its fields (``fields(of:)``; a memory hit's as its cache entry keeps
    /// them) and `Date`.
    private func head(of image: ImageService.ImageResponse) -> HTTPResponseHead {
        var headers = image.hitFields.isEmpty ? Self.fields(of: image) : image.hitFields
        // A cache entry's fields are the same for every URL of it; a disposition is the request's own.
        if !image.hitFields.isEmpty, let disposition = image.contentDisposition { headers.add(name: "Content-Disposition", value: disposition) }
        let second = time(nil)
        if date.second != second { date = (second, HTTPDate.text(second)) }
        headers.add(name: "Date", value: date.text)
        return HTTPResponseHead(version: .http1_1, status: image.status == 304 ? .notModified : .ok, headers: headers)
    }

    /// The header fields of an image answer but `Date`: the route's (``ImageRoutes/forEachField(of:_:)``),
    /// `Content-Length` (not on a `304`) and `Server`, as Hummingbird adds them.
    static func fields(of image: ImageService.ImageResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(9)
        ImageRoutes.forEachField(of: image) { headers.add(name: $0.rawName, value: $1) }
        if image.status != 304 { headers.add(name: "Content-Length", value: String(image.bodyBuffer.readableBytes)) }
        headers.add(name: "Server", value: ImageServer.serverName)
        return headers
    }
}

/// The `Date` header's value (`HTTPCacheInfo.formatHTTPDate`) of a second since 1970.
enum HTTPDate {
    static func text(_ second: Int) -> String {
        HTTPCacheInfo.formatHTTPDate(Date(timeIntervalSince1970: TimeInterval(second)))
    }
}
#endif
