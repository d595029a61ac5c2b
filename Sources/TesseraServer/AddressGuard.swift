#if Serving
import Foundation

/// An IP address (4 or 16 bytes) parsed from a literal or from `getaddrinfo`.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Parses `10.0.0.1`, `::1`, `[fd00::1]`, `::ffff:127.0.0.1`; `nil` for anything else (host names).
    public init?(_ literal: String) {
        var text = literal
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }   // zone id
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Whether this is an IPv4 address (4 bytes; IPv6 has 16).
    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible (`::a.b.c.d`) IPv6 address.
    var embeddedIPv4: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }) else { return nil }
        if bytes[10] == 0xff, bytes[11] == 0xff { return IPAddress(bytes: Array(bytes[12..<16])) }
        if bytes[10] == 0, bytes[11] == 0, bytes[12..<16].contains(where: { $0 != 0 }), !(bytes[12..<15].allSatisfy { $0 == 0 } && bytes[15] <= 1) {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        return nil
    }

    /// Dotted decimal for IPv4, the standard text form (`inet_ntop`) for IPv6.
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why the SSRF guard refuses an address; `nil` from ``AddressClassifier/classify(_:)`` means a public address.
public enum AddressClass: String, Sendable, Hashable {
    /// 127.0.0.0/8 and ::1.
    case loopback
    /// 10/8, 172.16/12, 192.168/16 and the shared address space 100.64/10.
    case privateNetwork = "private"
    /// 169.254/16 (cloud metadata at 169.254.169.254 among them) and fe80::/10.
    case linkLocal = "link-local"
    /// 224/4 and ff00::/8.
    case multicast
    /// 0/8 and ::.
    case unspecified
    /// fc00::/7 and the deprecated site-local fec0::/10.
    case uniqueLocal = "unique-local"
    /// Other special-purpose ranges: 192.0.0/24, documentation (192.0.2/24, 198.51.100/24, 203.0.113/24,
    /// 2001:db8::/32), benchmarking (198.18/15) and 240/4 with the broadcast address.
    case reserved
}

/// Classifies addresses for the SSRF guard (docs/SERVING.md): everything that is not a public unicast
/// address is refused unless an explicitly allowed range contains it.
public enum AddressClassifier {
    /// The class of a non-public address, or `nil` for a public one. IPv4-mapped and IPv4-compatible
    /// IPv6 addresses are classified as the IPv4 address they carry.
    public static func classify(_ address: IPAddress) -> AddressClass? {
        if let v4 = address.embeddedIPv4 { return classify(v4) }
        let b = address.bytes
        if address.isIPv4 {
            switch (b[0], b[1]) {
            case (0, _): return .unspecified                      // 0.0.0.0/8 ("this network")
            case (127, _): return .loopback
            case (10, _), (172, 16...31), (192, 168): return .privateNetwork
            case (100, 64...127): return .privateNetwork            // carrier-grade NAT 100.64/10
            case (169, 254): return .linkLocal                      // includes 169.254.169.254 (cloud metadata)
            case (224...239, _): return .multicast
            case (240...255, _): return .reserved                   // includes 255.255.255.255
            case (192, 0) where b[2] == 0 || b[2] == 2: return .reserved   // 192.0.0/24, TEST-NET-1
            case (198, 18...19): return .reserved                   // benchmarking
            case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return .reserved
            default: return nil
            }
        }
        if b.allSatisfy({ $0 == 0 }) { return .unspecified }                         // ::
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return .loopback }       // ::1
        if b[0] == 0xff { return .multicast }                                        // ff00::/8
        if b[0] == 0xfe && (b[1] & 0xc0) == 0x80 { return .linkLocal }               // fe80::/10
        if b[0] == 0xfe && (b[1] & 0xc0) == 0xc0 { return .uniqueLocal }             // fec0::/10 (old site-local)
        if (b[0] & 0xfe) == 0xfc { return .uniqueLocal }                             // fc00::/7, including fd00::/8
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0d, b[3] == 0xb8 { return .reserved } // 2001:db8::/32 documentation
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b {             // 64:ff9b::/96 NAT64
            return classify(IPAddress(bytes: Array(b[12..<16])))
        }
        if b[0] == 0x20, b[1] == 0x02 { return classify(IPAddress(bytes: Array(b[2..<6]))) }  // 6to4 carries an IPv4 address
        return nil
    }
}

/// A CIDR range such as `127.0.0.0/8` or `fd00::/8`.
public struct AddressRange: Sendable, Hashable {
    let base: IPAddress
    let prefix: Int

    /// Parses `ADDRESS/PREFIX` (`10.0.0.0/8`, `fd00::/8`), or a single address as a range of one (prefix 32
    /// or 128); `nil` for anything else or a prefix longer than the address.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let base = IPAddress(parts[0]) else { return nil }
        let bits = base.bytes.count * 8
        let prefix = parts.count == 2 ? Int(parts[1]) : bits
        guard let prefix, (0...bits).contains(prefix) else { return nil }
        self.base = base
        self.prefix = prefix
    }

    /// Whether `address` (or the IPv4 address an IPv4-mapped one carries) is inside the range.
    public func contains(_ address: IPAddress) -> Bool {
        let candidate = (base.isIPv4 && !address.isIPv4) ? address.embeddedIPv4 : address
        guard let candidate, candidate.bytes.count == base.bytes.count else { return false }
        var remaining = prefix
        for (a, b) in zip(candidate.bytes, base.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : UInt8(0xff) << (8 - remaining)
            if a & mask != b & mask { return false }
            remaining -= 8
        }
        return true
    }
}

/// The SSRF guard: host allow-list, then every address the host resolves to must be public or inside an
/// allowed range. ``check(_:)`` runs before the first request and before following each redirect.
public struct RemoteSourceGuard: Sendable {
    /// Allowed host names (lower-cased; `*.example.com` for subdomains).
    public let allowedHosts: [String]
    /// Ranges let through although not public.
    public let allowedRanges: [AddressRange]

    /// A guard allowing `allowedHosts` (matched case-insensitively) and the addresses in `allowedRanges`.
    public init(allowedHosts: [String], allowedRanges: [AddressRange]) {
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
        self.allowedRanges = allowedRanges
    }

    /// Whether remote sources are on at all.
    public var isEnabled: Bool { !allowedHosts.isEmpty }

    /// Whether `host` is on the allow-list.
    public func allows(host: String) -> Bool {
        let host = host.lowercased()
        return allowedHosts.contains { pattern in
            if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) && host.count > pattern.count - 1 }
            return pattern == host
        }
    }

    /// Whether `address` may be connected to.
    public func allows(address: IPAddress) -> Bool {
        AddressClassifier.classify(address) == nil || allowedRanges.contains { $0.contains(address) }
    }

    /// ``check(_:)``, then the address to connect to for a plain `http` URL: the first IPv4 address the
    /// check accepted (else the first one), so that `HTTPDataLoader` connects to the address that was
    /// checked rather than resolving the name again. `nil` for `https` (see `HTTPDataLoader.init`).
    public func checkedAddress(_ url: URL) async throws -> String? {
        let addresses = try await check(url)
        guard url.scheme?.lowercased() == "http" else { return nil }
        return (addresses.first(where: \.isIPv4) ?? addresses.first)?.description
    }

    /// Refuses `url` unless it is http(s), its host is allowed, and every address it resolves to is
    /// allowed; returns those addresses.
    @discardableResult
    public func check(_ url: URL) async throws -> [IPAddress] {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw RemoteRefusal(message: "only http and https sources are served")
        }
        guard allows(host: host) else { throw RemoteRefusal(message: "host '\(host)' is not allowed") }
        let addresses = try await Self.resolve(host)
        guard !addresses.isEmpty else { throw RemoteRefusal(message: "host '\(host)' does not resolve") }
        for address in addresses where !allows(address: address) {
            throw RemoteRefusal(message: "host '\(host)' resolves to a \(AddressClassifier.classify(address)?.rawValue ?? "refused") address")
        }
        return addresses
    }

    /// Every address of `host` (a literal is its own address), through `getaddrinfo` on a thread of its own
    /// (it blocks; Dispatch's pool on Linux grows slowly while its threads block).
    static func resolve(_ host: String) async throws -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                let status = getaddrinfo(host, nil, &hints, &list)
                guard status == 0 else {
                    continuation.resume(throwing: RemoteRefusal(message: "host '\(host)' does not resolve"))
                    return
                }
                defer { freeaddrinfo(list) }
                var found: [IPAddress] = []
                var node = list
                while let entry = node {
                    if entry.pointee.ai_family == AF_INET, let raw = entry.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                            var a = sin.pointee.sin_addr
                            found.append(IPAddress(bytes: withUnsafeBytes(of: &a) { Array($0) }))
                        }
                    } else if entry.pointee.ai_family == AF_INET6, let raw = entry.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin in
                            var a = sin.pointee.sin6_addr
                            found.append(IPAddress(bytes: withUnsafeBytes(of: &a) { Array($0) }))
                        }
                    }
                    node = entry.pointee.ai_next
                }
                continuation.resume(returning: found)
            }
            thread.start()
        }
    }
}

/// A remote source the guard refused (answered with 403).
public struct RemoteRefusal: Error, CustomStringConvertible, Sendable {
    /// Why the source was refused (the host, or the address that is not public).
    public let message: String
    /// The ``message``.
    public var description: String { message }
}
#endif
