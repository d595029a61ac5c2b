import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Origin {
    /// A loopback port that nobody listens on: the port of a socket bound to 127.0.0.1 and closed at
    /// once, so connecting to it is refused (unless another process takes it in between).
    public static func unusedPort() throws -> Int {
        let (fd, port) = try boundSocket()
        close(fd)
        return port
    }

    /// A TCP socket bound to an unused port of 127.0.0.1, not listening, and its port.
    static func boundSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else {
            close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A loopback port that refuses every connection for as long as this value lives: a socket bound to it
/// and never listening, so that, unlike ``Origin/unusedPort()``, no other test or process can take the port
/// in between (tests run in parallel). Closed when released.
public final class ClosedPort: Sendable {
    /// The port.
    public let port: Int
    private let fd: Int32

    /// Binds an unused port of 127.0.0.1.
    public init() throws {
        (fd, port) = try Origin.boundSocket()
    }

    deinit { close(fd) }
}
