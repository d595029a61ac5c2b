import Foundation
import Hummingbird
import Logging
import NIOCore

/// A real HTTP origin for tests, the demo and benchmarks: Hummingbird listening on 127.0.0.1 (only
/// loopback) on an ephemeral port.
///
/// Every path answers with the ``Resource`` set for it with ``set(_:_:)``; a path without one is
/// answered by the ``Generator`` given to ``start(latency:logsArrivals:generator:)``, then by the
/// resource set for `"*"`, and otherwise with `404 Not Found`. Every request is counted per path and,
/// unless turned off, logged in arrival order with its validators.
public final class Origin: Sendable {
    /// The port the origin listens on, on 127.0.0.1.
    public let port: Int
    private let ledger: OriginLedger
    private let server: Task<Void, any Error>

    private init(port: Int, ledger: OriginLedger, server: Task<Void, any Error>) {
        self.port = port
        self.ledger = ledger
        self.server = server
    }

    /// The error thrown when the server cannot start listening.
    public struct StartFailure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// Starts an origin on 127.0.0.1 and an ephemeral port, and returns once it accepts connections.
    ///
    /// - Parameters:
    ///   - latency: A delay added to every response, after the request is counted.
    ///   - logsArrivals: Whether ``arrivals`` records every request. Counts per path are kept either
    ///     way; long-running load turns the log off so that memory stays flat.
    ///   - generator: Produces resources for paths that have none set.
    public static func start(latency: Duration = .zero, logsArrivals: Bool = true,
                             generator: Generator? = nil) async throws -> Origin {
        let ledger = OriginLedger(latency: latency, logsArrivals: logsArrivals, generator: generator)
        let router = Router()
        router.get("**") { request, _ -> Response in try await ledger.respond(to: request) }
        // HEAD answers as GET would, without the body (an S3 source's first look at an object).
        router.head("**") { request, _ -> Response in try await ledger.respond(to: request).createHeadResponse() }
        var logger = Logger(label: "tessera.origin")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in
                                  continuation.yield(channel.localAddress?.port ?? 0)
                                  continuation.finish()
                              }, logger: logger)
        let server = Task {
            // Ends the port stream too if the server stops before it listens (a failed bind).
            defer { continuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            server.cancel()
            throw StartFailure(description: "the origin could not start listening on 127.0.0.1")
        }
        return Origin(port: port, ledger: ledger, server: server)
    }

    /// Starts an origin, runs `body` with it, then opens every gate so that no response stays waiting.
    ///
    /// The server is not stopped: it listens until the process exits. Stopping a Hummingbird server
    /// while an AsyncHTTPClient pool is still connecting to it makes NIO trap ("Deinited
    /// NIOAsyncWriter without calling finish()"), and a test cannot always know that its client has
    /// finished; an idle listener costs nothing.
    public static func with<R>(latency: Duration = .zero, _ body: (Origin) async throws -> R) async throws -> R {
        let origin = try await start(latency: latency)
        defer { origin.openGates() }
        return try await body(origin)
    }

    /// Opens every gate, then stops the server and returns once it has stopped. Shut down the HTTP
    /// clients that use the origin first (see ``with(latency:_:)``).
    public func stop() async {
        openGates()
        server.cancel()
        _ = await server.result
    }

    /// The URL of `path` (which starts with `/`) on this origin.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Serves `resource` at `path` from now on; `"*"` answers every path that has no resource and no
    /// generated one.
    public func set(_ path: String, _ resource: Resource) { ledger.set(path, resource) }

    /// Opens every gate of every resource set so far, releasing the responses that wait on them.
    public func openGates() { ledger.openGates() }

    /// How many requests reached `path`.
    public func count(_ path: String) -> Int { ledger.count(path) }

    /// Requests per path, for every path that starts with `prefix`.
    public func requests(under prefix: String) -> [String: Int] { ledger.requests(under: prefix) }

    /// Every request so far, in arrival order (empty when the origin does not log arrivals).
    public var arrivals: [Arrival] { ledger.arrivals }

    /// The paths of ``arrivals``, in arrival order.
    public var paths: [String] { arrivals.map(\.path) }

    /// Returns once `path` has been requested at least `count` times.
    public func waitForArrivals(_ path: String, count: Int = 1) async { await ledger.waitForArrivals(path, count: count) }
}
