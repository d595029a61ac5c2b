import Foundation
import Tessera

/// The disk cache half of the stress tools: the URL of each key and the bytes stored for it, a pure
/// function of (key, serial), so a verifier can recompute any entry exactly from the bytes alone.
///
/// A body is `TSDK`, the key (UInt32 LE), the serial (UInt64 LE), then 500…16 883 bytes of a
/// SplitMix64 stream seeded by both; its length also depends on both, so a file cut short or
/// spliced from two versions never matches.
enum StressDiskPattern {
    static let keyCount = 100

    /// Large enough that the stress workload (≤ 100 entries of ≤ 17 KB) never evicts: every entry the
    /// journal expects must be there.
    static let sizeLimit = 64 << 20

    static func configuration(_ directory: URL) -> DiskCache.Configuration {
        DiskCache.Configuration(directory: directory, sizeLimit: sizeLimit, ageLimit: nil)
    }

    static func url(_ k: Int) -> URL { URL(string: "http://stress.invalid/images/\(k).png?v=1")! }

    static func info(_ k: Int, now: Date) -> HTTPCacheInfo {
        HTTPCacheInfo(url: url(k).absoluteString, etag: "\"\(k)\"", storedAt: now, expiresAt: now.addingTimeInterval(3600))
    }

    static func body(_ k: Int, serial: UInt64) -> Data {
        var seed = (UInt64(k) &* 0x9E37_79B9_7F4A_7C15) ^ serial
        let length = 500 + Int(mix(&seed) % 16_384)
        var data = Data("TSDK".utf8)
        withUnsafeBytes(of: UInt32(k).littleEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: serial.littleEndian) { data.append(contentsOf: $0) }
        var stream = [UInt8]()
        stream.reserveCapacity(length)
        while stream.count < length {
            withUnsafeBytes(of: mix(&seed)) { stream.append(contentsOf: $0.prefix(length - stream.count)) }
        }
        data.append(contentsOf: stream)
        return data
    }

    /// The (key, serial) a body claims, if it has the pattern's header.
    static func identity(of data: Data) -> (k: Int, serial: UInt64)? {
        guard data.count >= 16, data.prefix(4) == Data("TSDK".utf8) else { return nil }
        let bytes = [UInt8](data.prefix(16))
        let k = bytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
        let serial = bytes[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (k, serial)
    }

    /// Whether `data` is exactly the body for key `k` with some serial; returns that serial.
    static func exactSerial(_ data: Data, key k: Int) -> UInt64? {
        guard let id = identity(of: data), id.k == k, body(k, serial: id.serial) == data else { return nil }
        return id.serial
    }

    private static func mix(_ state: inout UInt64) -> UInt64 {
        state = state &+ 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
