import Foundation
import TesseraImaging
import TesseraTables

/// The stress table's format and the pixels of every entry: a pure function of (entity id, source
/// id), and every source id encodes its entity and a serial, so a verifier can recompute any entry
/// exactly. The `TesseraStress` crash and load tools write and check entries with it, and the tests
/// check what those tools leave behind.
public enum StressPattern {
    /// The format of the stress table: 64×64 BGRA, 40 entries.
    public static let format = ImageFormat(name: "stress", family: "stress", style: .bgra32,
                                           size: PixelSize(width: 64, height: 64), maximumCount: 40)
    /// How many distinct entities the stress tools use.
    public static let entityCount = 100

    /// The entity id of stress entity `k`.
    public static func entityID(_ k: Int) -> UUID {
        UUID(uuid: (0x7E, 0x57, UInt8(k & 0xFF), UInt8(k >> 8 & 0xFF), 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))
    }

    /// The entity index a stress entity id encodes, if it is one.
    public static func entityIndex(_ id: UUID) -> Int? {
        let u = id.uuid
        guard u.0 == 0x7E, u.1 == 0x57 else { return nil }
        return Int(u.2) | Int(u.3) << 8
    }

    /// The source id of version `n` of stress entity `k`: both numbers are encoded in the id.
    public static func sourceID(entity k: Int, serial n: UInt64) -> UUID {
        let b = withUnsafeBytes(of: n.littleEndian) { Array($0) }
        return UUID(uuid: (0x50, 0x43, UInt8(k & 0xFF), UInt8(k >> 8 & 0xFF), b[0], b[1], 0x40 | (b[2] & 0x0F), b[3],
                           0x80 | (b[4] & 0x3F), b[5], b[6], b[7], 0, 0, 0, 2))
    }

    /// The entity index a stress source id encodes, if it is one.
    public static func sourceEntityIndex(_ id: UUID) -> Int? {
        let u = id.uuid
        guard u.0 == 0x50, u.1 == 0x43 else { return nil }
        return Int(u.2) | Int(u.3) << 8
    }

    /// Fills every byte of `view` (row padding included) with pseudo-random words seeded from both ids.
    public static func fill(_ view: MutableBitmapView, entity: UUID, source: UUID) {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for byte in withUnsafeBytes(of: entity.uuid, { Array($0) }) + withUnsafeBytes(of: source.uuid, { Array($0) }) {
            seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        let words = view.layout.byteCount / 8
        let p = view.baseAddress.assumingMemoryBound(to: UInt64.self)
        for i in 0..<words {
            var z = seed &+ UInt64(i) &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            p[i] = z ^ (z >> 31)
        }
    }

    /// Whether `image` holds exactly (every byte, row padding included) the pattern for its ids.
    public static func isExact(_ image: TableImage) -> Bool {
        let expected = Bitmap(layout: image.layout) { fill($0, entity: image.entityID, source: image.sourceID) }
        return image.withUnsafeBytes { a in
            expected.withUnsafeBytes { b in a.count == b.count && memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }
}
