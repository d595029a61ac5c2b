import TesseraImaging
import Foundation
import Hummingbird
import Logging

/// A local HTTP origin for `tessera bench fetch`: Hummingbird on 127.0.0.1 (an ephemeral port) that
/// answers every GET with the same image after an injected delay, and counts requests per path.
final class LatencyOrigin: Sendable {
    let port: Int
    private let counter: Counter
    private let task: Task<Void, any Error>

    private init(port: Int, counter: Counter, task: Task<Void, any Error>) {
        self.port = port
        self.counter = counter
        self.task = task
    }

    /// Starts serving `body` after `latency` per request.
    static func start(body: [UInt8], latency: Duration) async throws -> LatencyOrigin {
        let shared = Counter()
        let router = Router()
        router.get("**") { request, _ -> Response in
            shared.record(request.uri.path)
            try await Task.sleep(for: latency)
            return Response(status: .ok, headers: [.contentType: "image/png"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        var logger = Logger(label: "tessera.bench.origin")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in
                                  continuation.yield(channel.localAddress?.port ?? 0)
                                  continuation.finish()
                              }, logger: logger)
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw ValidationErrorText("the benchmark origin could not start")
        }
        return LatencyOrigin(port: port, counter: shared, task: task)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Requests per path whose path starts with `prefix`.
    func requests(under prefix: String) -> [String: Int] {
        counter.counts.withLock { $0.filter { $0.key.hasPrefix(prefix) } }
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }

    /// The request counter the route closure shares with the origin.
    final class Counter: Sendable {
        let counts = LockedValue<[String: Int]>([:])
        func record(_ path: String) { counts.withLock { $0[path, default: 0] += 1 } }
    }
}

/// A plain error message.
struct ValidationErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
