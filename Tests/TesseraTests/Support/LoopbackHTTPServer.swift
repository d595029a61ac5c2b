import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A small real HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for tests: POSIX sockets, one
/// thread per connection, `Connection: close`. Routes are closures; every request is counted per path.
/// A route can block on a ``Gate`` so that a test controls exactly when a response leaves — the
/// synchronisation is explicit, never a sleep.
final class LoopbackHTTPServer: Sendable {
    struct Response: Sendable {
        var status: Int = 200
        var body: [UInt8] = []
        var contentType = "application/octet-stream"
    }

    typealias Route = @Sendable (_ path: String) -> Response

    let port: UInt16
    private let listener: Int32
    private let route: Route
    private let counts = Mutex<[String: Int]>([:])

    init(route: @escaping Route) throws {
        self.route = route
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// `http://127.0.0.1:PORT/path`.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// How many requests reached `path`.
    func requestCount(_ path: String) -> Int { counts.withLock { $0[path, default: 0] } }

    /// Stops accepting connections.
    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            let thread = Thread { [self] in handle(client) }
            thread.start()
        }
    }

    private func handle(_ client: Int32) {
        defer { close(client) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.contains(sequence: Array("\r\n\r\n".utf8)) && request.count < 65536 {
            let n = read(client, &buffer, buffer.count)
            if n <= 0 { return }
            request += buffer[0..<n]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2 else { return }
        let path = String(parts[1])
        counts.withLock { $0[path, default: 0] += 1 }
        let response = route(path)
        let reason = response.status == 200 ? "OK" : "Error"
        let head = "HTTP/1.1 \(response.status) \(reason)\r\nContent-Type: \(response.contentType)\r\nContent-Length: \(response.body.count)\r\nConnection: close\r\n\r\n"
        var bytes = Array(head.utf8) + response.body
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(client, $0.baseAddress! + sent, $0.count - sent) }
            if n <= 0 { return }
            sent += n
        }
    }
}

/// A one-shot gate: `wait()` blocks (a server thread) until `open()`.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Mutex(false)
    func wait() { semaphore.wait(); semaphore.signal() }
    func open() {
        let first = opened.withLock { was in defer { was = true }; return !was }
        if first { semaphore.signal() }
    }
}

extension Array where Element == UInt8 {
    func contains(sequence: [UInt8]) -> Bool {
        guard count >= sequence.count else { return false }
        for i in 0...(count - sequence.count) where self[i..<i + sequence.count].elementsEqual(sequence) { return true }
        return false
    }
}
