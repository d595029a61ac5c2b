#if Serving
import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera

/// Answers a plain `GET` whose encoded response is in memory (or that gets a `304`) on the connection's
/// event loop, from the socket's bytes, before NIO's HTTP/1 decoder or Hummingbird see it. A hot thumbnail
/// then costs a scan of its head (``PlainRequestHead``), two map lookups and one socket write of two
/// buffers: no `HTTPRequestHead` or `HTTPHeaders` of the request made, no task, no hop between threads, no
/// conversion to swift-http-types, no routing, no resolve, no copy of the body (the cache's `ByteBuffer` is
/// written as it is). Every other request goes on, as its own bytes, to the decoder and the router (see
/// `ImageHTTPChannel`).
///
/// The handler does not route or resolve: it looks the request target (with the format its `Accept`
/// chose) up among the targets the service has resolved before (``ResolvedTargets``), and asks the service
/// for the memory answer of the resolved request (``ImageService/memoryAnswer(to:for:ifNoneMatch:ifModifiedSince:)``), the
/// same answer the router's path gives. A target the service has not resolved yet, or whose answer is not
/// in memory, goes to the router.
///
/// It sits first in the pipeline, before the decoder. Its rules keep HTTP/1.1 correct:
/// - **Framing.** It reads only plain requests (``PlainRequestHead``: a `GET` or `HEAD` without a body,
///   whose head ends at its first empty line, where the decoder ends it too), and hands the decoder each
///   plain request it does not answer as exactly that request's bytes, so the decoder never holds part of
///   a request when the handler answers the next. At the first request that is not plain (a body, an
///   upgrade, `Connection: close`, HTTP/1.0, anything malformed, a head over 16 KiB) it hands the decoder
///   everything from there on, and reads nothing more of that connection.
/// - **Order.** It answers only while no request it passed on is still unanswered (the count the
///   ``ConnectionDeadlines`` keep: they see every passed-on head and every response's `.end`), so
///   pipelined responses leave in request order.
/// - **Back-pressure.** It answers only while the channel is writable; otherwise the request goes on to
///   Hummingbird, whose writer waits for the socket and stops reading, so a client that sends and never
///   reads cannot make the server buffer without bound.
/// - **Connection management** stays with Hummingbird: a `Connection` header other than `keep-alive`
///   (which browsers send, and which asks for what HTTP/1.1 does anyway) makes a request not plain. A
///   graceful shutdown is Hummingbird's connection-state handler's: it closes an idle connection at once
///   and a busy one after its last answer, and while a connection is busy the handler answers nothing.
/// - **Deadlines.** It tells the ``ConnectionDeadlines`` of each answer
///   (``ConnectionDeadlines/answeredFromMemory(context:)``), which count it as a request read and answered:
///   a connection busy with hits is not idle, and a head it answered is not a head still being read. A read
///   whose every byte it answered ends here: the handlers after it saw nothing of it, so they are not told
///   it completed.
/// - **Same answer.** The status, headers, body, metrics and log line are those of the route
///   (`ImageRoutes.forEachField`, `ImageRoutes.record`), plus `Content-Length`, `Date` and `Server` as
///   Hummingbird adds them, written as NIO's HTTP/1 encoder writes a head. The decoder and the encoder
///   never see a hit, so the queue of request methods they share (one per request decoded, one taken per
///   response head encoded) stays in step.
final class MemoryHitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The routes (and through them the service); let go when the connection closes, so that a server that
    /// has stopped holds no table open through a pipeline NIO tears down a moment after the close.
    private var routes: ImageRoutes?
    /// The connection's deadlines, whose count of unanswered passed-on requests orders the answers.
    private let deadlines: ConnectionDeadlines
    /// Bytes read that do not make a whole head yet.
    private var unread: ByteBuffer?
    /// Set at the first request that is not plain: from then on every byte goes on.
    private var passingOn = false
    /// Requests were answered during the current read.
    private var answeredInRead = false
    /// Bytes of the current read went on, or wait in ``unread``: the handlers after this one hear that it
    /// completed (always once ``passingOn``).
    private var passedOnInRead = false
    /// The last `Accept` text and the format it chose (a connection sends the same one again and again).
    private var lastAccept: (text: String, choice: ImageFileFormat?)?
    /// The `Date` field (and the empty line after it) of the last second a hit was answered in.
    private var date = (second: 0, line: ByteBuffer())
    /// The metrics of the last hit's route, label and status (a connection asks for the same thumbnails'
    /// preset again and again), so that a hit takes no lock to find them.
    private var recorders: (route: ServiceMetrics.Route, label: String, status: Int, value: ServiceMetrics.Recorders)?

    /// A handler answering from `routes`' service, in the order `deadlines` keep.
    init(routes: ImageRoutes, deadlines: ConnectionDeadlines) {
        self.routes = routes
        self.deadlines = deadlines
    }

    func channelInactive(context: ChannelHandlerContext) {
        routes = nil
        unread = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !passingOn else {
            passedOnInRead = true
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if var earlier = unread.take() {
            earlier.writeBuffer(&bytes)
            bytes = earlier
        }
        while bytes.readableBytes > 0 {
            switch bytes.withUnsafeReadableBytes(PlainRequestHead.read) {
            case .incomplete:
                unread = bytes
                passedOnInRead = true
                return
            case .other:
                passingOn = true
                passedOnInRead = true
                context.fireChannelRead(wrapInboundOut(bytes))
                return
            case .plain(let request, let length):
                let start = ContinuousClock.now
                if deadlines.unanswered == 0, context.channel.isWritable, let hit = memoryHit(request) {
                    bytes.moveReaderIndex(forwardBy: length)
                    write(hit, context: context)
                    deadlines.answeredFromMemory(context: context)
                    if let routes {
                        routes.record(method: "GET", path: hit.path, route: hit.route.metricsRoute, label: hit.route.label,
                                      status: hit.status, outcome: hit.outcome.rawValue, start: start,
                                      into: recorders(of: hit, in: routes))
                    }
                } else {
                    // Exactly this request's bytes: the decoder ends it where it ends.
                    passedOnInRead = true
                    context.fireChannelRead(wrapInboundOut(bytes.readSlice(length: length)!))
                }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        let answeredAll = answeredInRead && !passedOnInRead
        if answeredInRead { context.flush() }   // the answers of one read (pipelined requests) go out together
        answeredInRead = false
        passedOnInRead = false
        if !answeredAll { context.fireChannelReadComplete() }
    }

    /// A memory answer: what to write, and what its log line and metrics say.
    private struct Hit {
        /// The status line and header fields but `Content-Disposition` and `Date`: a memory hit's as its cache
        /// entry keeps them (``ImageService/ImageResponse/hitHead``), else ``MemoryHitHandler/head(of:)``.
        let head: ByteBuffer
        /// The request's own `Content-Disposition`, if any.
        let disposition: String?
        let body: ByteBuffer
        let status: Int
        let outcome: CacheOutcome
        let path: String
        let route: ImageService.Route
    }

    /// Writes `hit` as NIO's HTTP/1 encoder would (status line, fields, empty line; the body), flushed at
    /// the end of the read: the head as its cache entry keeps it, the `Date` line this handler keeps for the
    /// second, and the body, without a copy of any of them.
    private func write(_ hit: Hit, context: ChannelHandlerContext) {
        answeredInRead = true
        context.write(wrapOutboundOut(hit.head), promise: nil)
        let second = time(nil)
        if date.second != second {
            var line = context.channel.allocator.buffer(capacity: 40)
            line.writeStaticString("Date: ")
            line.writeString(HTTPDate.text(second))
            line.writeStaticString("\r\n\r\n")
            date = (second, line)
        }
        if let disposition = hit.disposition {
            var line = context.channel.allocator.buffer(capacity: disposition.utf8.count + 24)
            Self.writeField("Content-Disposition", disposition, to: &line)
            context.write(wrapOutboundOut(line), promise: nil)
        }
        context.write(wrapOutboundOut(date.line), promise: nil)
        if hit.status != 304 { context.write(wrapOutboundOut(hit.body), promise: nil) }
    }

    /// The metrics `hit` adds to: the last hit's, when it had the same route, label and status.
    private func recorders(of hit: Hit, in routes: ImageRoutes) -> ServiceMetrics.Recorders {
        let route = hit.route.metricsRoute, label = hit.route.label
        if let last = recorders, last.route == route, last.status == hit.status, last.label == label { return last.value }
        let made = routes.recorders(route: route, label: label, status: hit.status)
        recorders = (route, label, hit.status, made)
        return made
    }

    /// The memory answer to `request`, when it is a `GET` of a target the service has resolved before.
    private func memoryHit(_ request: PlainRequestHead) -> Hit? {
        guard request.isGet, let routes else { return nil }
        let service = routes.service
        let key = ResolvedTargets.Key(target: request.target, accepted: accepted(request.accept))
        guard let resolved = service.targets.get(key),
              let image = service.memoryAnswer(to: resolved, for: key, ifNoneMatch: request.ifNoneMatch,
                                               ifModifiedSince: request.ifModifiedSince)
        else { return nil }
        // A cache entry's head is the same for every URL of it; a disposition is the request's own.
        return Hit(head: image.hitHead ?? Self.head(of: image), disposition: image.hitHead == nil ? nil : image.contentDisposition, body: image.bodyBuffer, status: image.status, outcome: image.outcome,
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

    /// The status line and header fields of an image answer but `Date` (and a memory hit's
    /// `Content-Disposition`), as NIO's HTTP/1 encoder writes them: the route's fields
    /// (``ImageRoutes/forEachField(of:_:)``), `Content-Length` (not on a `304`) and `Server`, as Hummingbird
    /// adds them.
    static func head(of image: ImageService.ImageResponse) -> ByteBuffer {
        var head = ByteBuffer()
        head.reserveCapacity(384)
        head.writeStaticString(image.status == 304 ? "HTTP/1.1 304 Not Modified\r\n" : "HTTP/1.1 200 OK\r\n")
        ImageRoutes.forEachField(of: image) { writeField($0.rawName, $1, to: &head) }
        if image.status != 304 { writeField("Content-Length", String(image.bodyBuffer.readableBytes), to: &head) }
        writeField("Server", ImageServer.serverName, to: &head)
        return head
    }

    private static func writeField(_ name: String, _ value: String, to buffer: inout ByteBuffer) {
        buffer.writeString(name)
        buffer.writeStaticString(": ")
        buffer.writeString(value)
        buffer.writeStaticString("\r\n")
    }
}

/// The `Date` header's value (`HTTPCacheInfo.formatHTTPDate`) of a second since 1970.
enum HTTPDate {
    static func text(_ second: Int) -> String {
        HTTPCacheInfo.formatHTTPDate(Date(timeIntervalSince1970: TimeInterval(second)))
    }
}
#endif
