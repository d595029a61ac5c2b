#if Serving
import Logging
import NIOCore
import NIOHTTP1

/// Closes the connections of `tessera serve` that hold a descriptor without asking for anything: the idle
/// timeout (`--idle-timeout`) and the header timeout (`--header-timeout`, against slowloris clients).
///
/// It sits right after NIO's HTTP/1 decoder and encoder (`ImageHTTPChannel`), so it sees every request head
/// the decoder completes and the `.end` of every response the router writes; the `MemoryHitHandler`, before
/// the decoder, tells it of the requests it answered itself (``answeredFromMemory(context:)``). A connection is in one of four states, each with its deadline:
///
/// | State | Deadline |
/// |---|---|
/// | **idle**: every request answered, no byte of a new one | the idle timeout after the last answer ended (or after the connection opened) |
/// | **reading a head**: bytes arrived, no complete head yet | the header timeout after the first read of those bytes |
/// | **reading a body**: a head arrived, its `.end` has not | the idle timeout after the last read of its head or body |
/// | **busy**: every request read, an answer not ended yet | none: the request time limit is the route's (`504 timeout`) |
///
/// At its deadline the connection is closed, without an answer (there is no request to answer, and a
/// client too slow to send its headers is not owed one).
///
/// **The timer.** One scheduled callback per connection, not one per request. State changes only write
/// fields of this handler (a count, a flag, a time read from the event loop's clock): a keep-alive
/// connection answering thousands of memory hits a second allocates and schedules nothing for them.
/// When the callback fires it works out the deadline of the state the connection is in *now*: past it,
/// the connection closes; otherwise the callback is scheduled again for that deadline (a busy connection
/// looks again one idle timeout later). Only one change moves the deadline earlier than the scheduled
/// callback, the start of a head (the header timeout is normally shorter than the idle timeout), and only
/// that one cancels the callback and schedules a new one.
///
/// **When a head starts.** The decoder reports a head only once it is complete, so a head in progress is
/// seen as a read (`channelReadComplete`) that completed no head while the connection was idle. The bytes
/// after a complete request in the same read (the start of a pipelined one) are not seen that way: until
/// the next read they count as idle, so such a head may take up to the idle timeout plus the header
/// timeout. A trickling client makes more reads, and its clock starts at the first of them.
final class ConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler, NIOScheduledCallbackHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let idleTimeout: TimeAmount
    private let headerTimeout: TimeAmount
    private let logger: Logger
    /// Set while the handler is in a pipeline, for the timer's callback.
    private var context: ChannelHandlerContext?
    /// Request heads read whose response has not ended (the `MemoryHitHandler` answers only while there
    /// are none).
    private(set) var unanswered = 0
    /// A head was read and its `.end` has not been.
    private var readingBody = false
    /// A head was completed during the current read.
    private var headInThisRead = false
    /// When the first bytes of a head still incomplete arrived.
    private var headStart: NIODeadline?
    /// The last answer's end, the last body part, or the connection's start.
    private var lastActivity = NIODeadline.uptimeNanoseconds(0)
    private var timer: NIOScheduledCallback?
    private var timerDeadline = NIODeadline.distantFuture

    /// A handler closing idle connections after `idleTimeout` and heads still incomplete `headerTimeout`
    /// after their first bytes; it logs each close at debug level to `logger`.
    init(idleTimeout: TimeAmount, headerTimeout: TimeAmount, logger: Logger) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.logger = logger
    }

    /// The handler for `connections`' timeouts.
    convenience init(_ connections: ServerConfiguration.Connections, logger: Logger) {
        self.init(idleTimeout: Self.amount(connections.idleTimeoutSeconds), headerTimeout: Self.amount(connections.headerTimeoutSeconds),
                  logger: logger)
    }

    private static func amount(_ seconds: Double) -> TimeAmount { .nanoseconds(Int64((seconds * 1e9).rounded())) }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimer()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            readingBody = true
            headInThisRead = true
            headStart = nil
        case .body:
            break
        case .end:
            readingBody = false
            if unanswered == 0 { lastActivity = context.eventLoop.now }   // answered before its body ended
        }
        context.fireChannelRead(data)
    }

    /// The `MemoryHitHandler` (on the same event loop, `context` its own) answered a request itself: a
    /// request read and answered, so no head is being read, and the connection was active now.
    func answeredFromMemory(context: ChannelHandlerContext) {
        headStart = nil
        if unanswered == 0, !readingBody { lastActivity = context.eventLoop.now }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if readingBody {
            lastActivity = context.eventLoop.now   // a head or body part arrived: the body's clock restarts
        } else if !headInThisRead, headStart == nil, unanswered == 0 {
            // Bytes arrived on an idle connection and made no complete head: a head has started.
            let now = context.eventLoop.now
            headStart = now
            if now + headerTimeout < timerDeadline { schedule(at: now + headerTimeout, context: context) }
        }
        headInThisRead = false
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), unanswered > 0 {
            unanswered -= 1
            if unanswered == 0, !readingBody { lastActivity = context.eventLoop.now }
        }
        context.write(data, promise: promise)
    }

    /// The timer: closes the connection past its state's deadline, or schedules itself for that deadline.
    func handleScheduledCallback(eventLoop: some EventLoop) {
        timer = nil
        timerDeadline = .distantFuture
        guard let context, context.channel.isActive else { return }
        let now = context.eventLoop.now
        let deadline: NIODeadline
        let reason: String
        if let headStart {
            deadline = headStart + headerTimeout
            reason = "header timeout"
        } else if readingBody || unanswered == 0 {
            deadline = lastActivity + idleTimeout
            reason = "idle timeout"
        } else {
            schedule(at: now + idleTimeout, context: context)   // busy: no deadline, look again later
            return
        }
        guard deadline <= now else {
            schedule(at: deadline, context: context)
            return
        }
        logger.debug("connection closed", metadata: ["reason": "\(reason)", "remote": "\(context.channel.remoteAddress?.description ?? "?")"])
        context.close(promise: nil)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        lastActivity = context.eventLoop.now
        schedule(at: lastActivity + idleTimeout, context: context)
    }

    private func schedule(at deadline: NIODeadline, context: ChannelHandlerContext) {
        timer?.cancel()
        timerDeadline = deadline
        // Fails only on an event loop shutting down, whose connections are closing anyway.
        timer = try? context.eventLoop.assumeIsolated().scheduleCallback(at: deadline, handler: self)
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
        timerDeadline = .distantFuture
    }
}
#endif
