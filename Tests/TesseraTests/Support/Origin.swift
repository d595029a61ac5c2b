import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A gate a route waits on until the test opens it: explicit synchronisation, never a sleep.
final class OriginGate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if ready { continuation.resume() }
        }
    }
}

/// A real HTTP origin on 127.0.0.1 (Hummingbird, an ephemeral port) for the fetch tests. Every path is
/// a ``Resource`` the test sets; every request is recorded in arrival order with its validators.
final class Origin: Sendable {
    struct Resource: Sendable {
        var status = 200
        var body: [UInt8] = []
        var cacheControl: String?
        var etag: String?
        var lastModified: String?
        /// The response waits until this gate opens.
        var gate: OriginGate?
        /// Stream the body in chunks of this size without `Content-Length`.
        var chunkSize: Int?
        /// Answer `302` to this location.
        var redirect: String?
        /// Send the head (with the full `Content-Length`) and the first ``stallAfter`` bytes, then wait for
        /// this gate before the rest: a body that stops trickling (slow-loris).
        var stall: OriginGate?
        var stallAfter = 0
    }

    struct Arrival: Sendable {
        var path: String
        var ifNoneMatch: String?
        var ifModifiedSince: String?
    }

    let port: Int
    private let resources = Mutex<[String: Resource]>([:])
    private let log = Mutex<[Arrival]>([])
    private let arrivalWaiters = Mutex<[(path: String, count: Int, continuation: CheckedContinuation<Void, Never>)]>([])
    private let gates = Mutex<[OriginGate]>([])

    private init(port: Int) { self.port = port }

    /// Starts a server and runs `body` with it, then releases every request still waiting on a gate.
    ///
    /// The server is left running until the test process exits: cancelling a Hummingbird server while
    /// a client (AsyncHTTPClient's pool) is still connecting makes NIO trap ("Deinited NIOAsyncWriter
    /// without calling finish()"), and an idle listener per test costs nothing.
    static func with<R>(_ body: (Origin) async throws -> R) async throws -> R {
        let origin = try await start()
        defer { origin.openGates() }
        return try await body(origin)
    }

    /// A loopback port nobody listens on (bound, then closed at once): connecting is refused.
    static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw POSIXError(.EADDRNOTAVAIL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func start() async throws -> Origin {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let box = Mutex<Origin?>(nil)
        let router = Router()
        router.get("**") { request, _ -> Response in
            guard let origin = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return await origin.respond(to: request)
        }
        var logger = Logger(label: "tessera.test.origin")
        logger.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in
                                  continuation.yield(channel.localAddress?.port ?? 0)
                                  continuation.finish()
                              }, logger: logger)
        let running = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            running.cancel()
            throw POSIXError(.EADDRNOTAVAIL)
        }
        let origin = Origin(port: port)
        box.withLock { $0 = origin }
        _ = running   // runs until the process exits (see `with`)
        return origin
    }

    /// Opens every gate, releasing the requests that wait on them.
    func openGates() {
        for gate in gates.withLock({ $0 }) { gate.open() }
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func set(_ path: String, _ resource: Resource) {
        for gate in [resource.gate, resource.stall].compactMap({ $0 }) { gates.withLock { $0.append(gate) } }
        resources.withLock { $0[path] = resource }
    }

    /// How many requests reached `path`.
    func count(_ path: String) -> Int { log.withLock { $0.filter { $0.path == path }.count } }
    /// Every request so far, in arrival order.
    var arrivals: [Arrival] { log.withLock { $0 } }
    /// Paths in arrival order.
    var paths: [String] { arrivals.map(\.path) }

    /// Returns once `path` has been requested at least `count` times.
    func waitForArrivals(_ path: String, count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let ready = arrivalWaiters.withLock { waiters in
                if self.count(path) >= count { return true }
                waiters.append((path, count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func respond(to request: Request) async -> Response {
        let path = request.uri.path
        let arrival = Arrival(path: path, ifNoneMatch: request.headers[.ifNoneMatch], ifModifiedSince: request.headers[.ifModifiedSince])
        log.withLock { $0.append(arrival) }
        let ready = arrivalWaiters.withLock { waiters in
            let total = self.count(path)
            let (done, rest) = (waiters.filter { $0.path == path && total >= $0.count }, waiters.filter { !($0.path == path && total >= $0.count) })
            waiters = rest
            return done.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }

        // "*" answers every path that has no resource of its own.
        guard let resource = resources.withLock({ $0[path] ?? $0["*"] }) else { return Response(status: .notFound) }
        await resource.gate?.wait()
        var headers = HTTPFields()
        if let value = resource.cacheControl { headers[.cacheControl] = value }
        if let value = resource.etag { headers[.eTag] = value }
        if let value = resource.lastModified { headers[.lastModified] = value }
        if let location = resource.redirect {
            headers[.location] = location
            return Response(status: .found, headers: headers)
        }
        let notModified = (resource.etag != nil && arrival.ifNoneMatch == resource.etag)
            || (resource.etag == nil && resource.lastModified != nil && arrival.ifModifiedSince == resource.lastModified)
        if notModified { return Response(status: .notModified, headers: headers) }
        let status = HTTPResponse.Status(code: resource.status)
        if let stall = resource.stall {
            let body = resource.body, first = min(resource.stallAfter, resource.body.count)
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: body.count) { writer in
                try await writer.write(ByteBuffer(bytes: body[..<first]))
                await stall.wait()
                try await writer.write(ByteBuffer(bytes: body[first...]))
                try await writer.finish(nil)
            })
        }
        if let chunkSize = resource.chunkSize {
            let body = resource.body
            return Response(status: status, headers: headers, body: ResponseBody { writer in
                for start in stride(from: 0, to: body.count, by: chunkSize) {
                    try await writer.write(ByteBuffer(bytes: body[start..<min(body.count, start + chunkSize)]))
                }
                try await writer.finish(nil)
            })
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: resource.body)))
    }
}
