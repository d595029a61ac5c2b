import Foundation

/// A TCP connection to 127.0.0.1 that a test holds open and drives byte by byte, for what `RawHTTP`
/// (one request per connection, closed after the answer) cannot do: keep a connection idle, send half a
/// request head, see the server close it.
struct LoopbackSocket: Sendable {
    /// The descriptor.
    let fd: Int32

    /// What a receive saw.
    enum Received: Equatable {
        /// Bytes (possibly part of a response).
        case bytes([UInt8])
        /// The server closed the connection: end of file, or a reset.
        case closed
        /// Nothing within the wait.
        case nothing
    }

    /// Connects to 127.0.0.1:`port` (blocking until the kernel completes the handshake).
    static func connect(port: Int) throws -> LoopbackSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            _ = systemClose(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        return LoopbackSocket(fd: fd)
    }

    /// Sends all of `text`.
    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            sent += n
        }
    }

    /// Waits up to `timeout` for bytes or the end of the connection (`poll`, then one `recv`).
    func receive(timeout: Duration = .zero) -> Received {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        var ready: Int32
        repeat { ready = poll(&entry, 1, milliseconds) } while ready < 0 && errno == EINTR
        guard ready > 0 else { return .nothing }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n > 0 { return .bytes(Array(buffer[..<n])) }
        if n == 0 || errno == ECONNRESET { return .closed }
        return .nothing
    }

    /// Bytes until `complete` says they are whole, the connection ends, or `timeout` passes.
    func receive(until complete: ([UInt8]) -> Bool, timeout: Duration) -> (bytes: [UInt8], closed: Bool) {
        let deadline = ContinuousClock.now + timeout
        var bytes: [UInt8] = []
        while !complete(bytes), ContinuousClock.now < deadline {
            switch receive(timeout: deadline - ContinuousClock.now) {
            case .bytes(let more): bytes += more
            case .closed: return (bytes, true)
            case .nothing: break
            }
        }
        return (bytes, false)
    }

    /// Closes the connection.
    func close() { _ = systemClose(fd) }
}

// The system calls by other names: inside ``LoopbackSocket`` its own methods hide them.
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { connect(fd, address, length) }
private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int { send(fd, bytes, count, flags) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
