import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 origin on 127.0.0.1 serving the demo's source files as `GET /items/<n>`
/// (one thread per connection, `Connection: close`), so that the table method's fill path goes over
/// a real socket. Files are read from disk on every request, as a static file server would.
final class LoopbackOrigin: Sendable {
    /// The port the origin listens on.
    let port: UInt16
    private let listener: Int32
    private let files: [String]
    private let stopped = Atomic<Bool>(false)
    /// Requests served.
    let served = Atomic<Int>(0)

    init(files: [String]) throws {
        self.files = files
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// The URL of grid item `index`.
    func url(forItem index: Int) -> URL { URL(string: "http://127.0.0.1:\(port)/items/\(index)")! }

    /// Stops accepting connections.
    func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 { if errno == EINTR { continue } else { return } }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var request = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeaderEnd, request.count < 65536 {
            let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            request += chunk[0..<n]
        }
        let line = String(decoding: request.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self).split(separator: " ")
        var status = "404 Not Found", body = Data()
        if line.count >= 2, line[0] == "GET", line[1].hasPrefix("/items/"), let index = Int(line[1].dropFirst(7)),
           files.indices.contains(index), let data = FileManager.default.contents(atPath: files[index]) {
            status = "200 OK"
            body = data
        }
        let header = "HTTP/1.1 \(status)\r\nContent-Length: \(body.count)\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
        send(all: Data(header.utf8) + body, to: client)
        served.add(1, ordering: .relaxed)
    }

    private func send(all data: Data, to client: Int32) {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.send(client, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

private extension [UInt8] {
    var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 { return true }
        return false
    }
}
