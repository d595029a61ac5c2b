import TesseraImaging
import Foundation

extension UUID {
    /// A stable UUID derived from `string` by hashing its UTF-8 bytes: the same string gives the same
    /// UUID in every process and on every machine (the Fast Image Cache `FICUUIDBytesFromMD5HashOfString`
    /// idea, for entity and source-image ids).
    ///
    /// The hash is two independent 64-bit FNV-1a passes, each finished with the SplitMix64 mixer, and the
    /// version/variant bits of an RFC 9562 version-8 (custom) UUID. It is fast and well distributed but
    /// **not cryptographic**: do not use it where an adversary chooses the strings and a collision matters.
    ///
    /// Hashing costs about a nanosecond per byte. Compute it once when the identifier is set and store
    /// it (a `let` property of your entity, or a lazily computed one), rather than in every lookup.
    public init(hashing string: String) {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4 ^ UInt64(string.utf8.count)
        for byte in string.utf8 {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 ^ (b >> 29)
        }
        let hi = Self.mix(a), lo = Self.mix(b &+ hi)
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: hi >> (56 - 8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: lo >> (56 - 8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC variant
        self.init(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                         bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
