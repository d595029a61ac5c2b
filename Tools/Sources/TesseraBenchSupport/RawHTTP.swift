import Foundation

/// A minimal HTTP/1.1 client for tests of `tessera serve`: sends the request target exactly as given (no
/// normalisation of `..` or percent-encoding, unlike URL-based clients), over one connection to
/// 127.0.0.1 closed after the response. The blocking socket calls of the async forms run on a thread of
/// their own (``onOwnThread(_:)``), so that many requests at once do not starve an in-process server. A server that stops
/// sending or reading for ``stallLimit`` fails the request instead of holding the test forever.
public enum RawHTTP {
    /// How long a send or a receive may wait for the server: far above any server's own time limit in
    /// the tests, so it only ends a request that would otherwise never end.
    public static let stallLimit = 120
    /// A response: status, headers with lower-cased names, body.
    public struct Response: Sendable, CustomStringConvertible {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]

        public var text: String { String(decoding: body, as: UTF8.self) }
        public var description: String { "\(status) \(headers) \(body.count) bytes" }
    }

    /// A failure to connect or a malformed response.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// `GET target` on 127.0.0.1:`port` with extra `headers`.
    public static func get(port: Int, _ target: String, headers: [String: String] = [:]) async throws -> Response {
        try await onOwnThread { try getBlocking(port: port, target, headers: headers) }
    }

    /// `HEAD target` on 127.0.0.1:`port` with extra `headers`: the response has no body, whatever its
    /// `Content-Length` says.
    public static func head(port: Int, _ target: String, headers: [String: String] = [:]) async throws -> Response {
        try await onOwnThread { try requestBlocking(port: port, method: "HEAD", target, headers: headers, body: nil) }
    }

    /// `POST target` on 127.0.0.1:`port` with `body` and extra `headers` (`Content-Length` is added).
    public static func post(port: Int, _ target: String, body: [UInt8], headers: [String: String] = [:]) async throws -> Response {
        try await onOwnThread { try requestBlocking(port: port, method: "POST", target, headers: headers, body: body) }
    }

    /// The blocking form of ``get(port:_:headers:)``.
    public static func getBlocking(port: Int, _ target: String, headers: [String: String] = [:]) throws -> Response {
        try requestBlocking(port: port, method: "GET", target, headers: headers, body: nil)
    }

    /// One request with `method`; with a `body`, a `Content-Length` header is sent too.
    static func requestBlocking(port: Int, method: String, _ target: String, headers: [String: String], body: [UInt8]?) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var limit = timeval(tv_sec: stallLimit, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)") }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw Failure(description: "\(method) \(target.prefix(200)): no answer from 127.0.0.1:\(port) within \(stallLimit) s")
            }
            if n <= 0 { break }
            response += buffer[..<n]
        }
        return try parse(response, hasBody: method != "HEAD")
    }

    static func parse(_ bytes: [UInt8], hasBody: Bool = true) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw Failure(description: "no complete response head in \(bytes.count) bytes")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        var body = Array(bytes[(end + 4)...])
        if !hasBody {
            guard body.isEmpty else { throw Failure(description: "\(body.count) bytes after the head of a response without a body") }
        } else if let length = headers["content-length"].flatMap(Int.init) {
            guard body.count >= length else { throw Failure(description: "body of \(body.count) bytes, expected \(length)") }
            body = Array(body.prefix(length))
        } else if headers["transfer-encoding"]?.lowercased() == "chunked" {
            body = try dechunk(body)
        }
        return Response(status: status, headers: headers, body: body)
    }

    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard let lineEnd = (index..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16) else {
                throw Failure(description: "bad chunk")
            }
            if size == 0 { break }
            let start = lineEnd + 2
            guard start + size <= bytes.count else { throw Failure(description: "short chunk") }
            result += bytes[start..<start + size]
            index = start + size + 2
        }
        return result
    }
}
