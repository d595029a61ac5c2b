#if Serving
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The HTTP/1.1 connection of `tessera serve`, from socket bytes to Hummingbird's router:
///
/// ```
/// MemoryHitHandler ─ NIO HTTP/1 decoder + encoder ─ ConnectionDeadlines ─ HTTP1ToHTTPServerCodec ─ HTTPConnectionStateHandler ─ router
/// ```
///
/// Hummingbird's `HTTP1Channel` is the same stack from the decoder on, except that it adds extra handlers
/// only after the conversion to swift-http-types. The `MemoryHitHandler` sits before all of it, so a hot
/// thumbnail is read and answered from the socket's bytes: no request head, header storage or conversion
/// is made for it. Everything the handler passes on reaches the router exactly as through `HTTP1Channel`.
///
/// The connection limits of ``ServerConfiguration/Connections`` are kept here too: a ``ConnectionLimit``
/// refuses the connections above `--max-connections` before they are set up, and ``ConnectionDeadlines``,
/// after the HTTP/1 codec (told of the `MemoryHitHandler`'s answers by an event), closes idle connections
/// and heads that take too long.
struct ImageHTTPChannel: HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: Responder
    let routes: ImageRoutes
    /// The idle and header timeouts.
    let connections: ServerConfiguration.Connections
    /// The count of open connections, shared by every connection of the listener; `nil`: no limit.
    let limit: ConnectionLimit?

    /// The channel of one listener: `connections`' timeouts on every connection, and its connection limit,
    /// if any, counted by a ``ConnectionLimit`` of its own.
    init(responder: @escaping Responder, routes: ImageRoutes, connections: ServerConfiguration.Connections) {
        self.responder = responder
        self.routes = routes
        self.connections = connections
        limit = connections.maximumConnections.map { ConnectionLimit(maximum: $0) }
    }

    /// A connection above the limit is closed here and never set up: the failed future makes NIO drop it
    /// (it is not registered, so nothing is read) and Hummingbird never sees it.
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if let limit, !limit.admit(channel) {
            logger.debug("connection refused", metadata: ["maximum": "\(limit.maximum)", "remote": "\(channel.remoteAddress?.description ?? "?")"])
            return channel.eventLoop.makeFailedFuture(ConnectionRefused())
        }
        return channel.eventLoop.makeCompletedFuture {
            try Self.addHandlers(to: channel.pipeline.syncOperations, routes: routes, logger: logger, connections: connections)
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    /// Why a connection above the limit was not set up.
    struct ConnectionRefused: Error {}

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }

    /// Adds the stack above to a connection's pipeline (the tests build theirs with it too). Pipelined
    /// requests are ordered by the `MemoryHitHandler` and by the router's async channel, so NIO's pipelining
    /// assistance stays off; headers are validated where they are made (swift-http-types), so the
    /// encoder's outbound validation stays off, as in Hummingbird's own stack; the decoder's limits are
    /// Hummingbird's defaults. `connections` sets the ``ConnectionDeadlines`` (by default 60 s idle, 10 s
    /// for a head).
    static func addHandlers(to operations: ChannelPipeline.SynchronousOperations, routes: ImageRoutes, logger: Logger,
                            connections: ServerConfiguration.Connections = .init()) throws {
        try operations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false,
                                                   withOutboundHeaderValidation: false, withEncoderConfiguration: .init(),
                                                   withDecoderLimitConfiguration: decoderLimits)
        let deadlines = ConnectionDeadlines(connections, logger: logger)
        try operations.addHandler(deadlines)
        try operations.addHandler(MemoryHitHandler(routes: routes, deadlines: deadlines), position: .first)
        try operations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try operations.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
    }

    /// Hummingbird's default HTTP/1 decoder limits, in NIO's type (read once, not per connection).
    private static let decoderLimits: NIOHTTPDecoderLimitConfiguration = {
        let defaults = HTTP1Channel.Configuration().httpDecoder
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = defaults.maxHeaderFieldSize
        limits.maxHeaderListSize = defaults.maxHeaderListSize
        limits.maxHeaderFieldCount = defaults.maxHeaderFieldCount
        return limits
    }()
}
#endif
