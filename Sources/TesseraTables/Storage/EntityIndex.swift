import Foundation

/// A table's entity index: entity id → slot, the first step of every hit.
///
/// An open-addressing hash table of the id's two 64-bit halves and the slot, in one array of 24-byte
/// buckets probed linearly, at most half full, deletions shifting later buckets back (no tombstones). A
/// lookup hashes the id with two rounds of a 64-bit mixer (murmur3's finaliser) keyed by a per-process
/// random seed and usually reads one cache line; `Dictionary`'s SipHash of the same id cost more than
/// the rest of a hit together. The seed makes the bucket of an id unpredictable from outside the process,
/// so ids chosen to collide cannot be made without it (each half goes through the mixer with the seed
/// before the halves are combined).
struct EntityIndex {
    private struct Bucket {
        var high: UInt64
        var low: UInt64
        /// The slot; -1: an empty bucket.
        var slot: Int32
    }

    /// Per process, like `Hasher`'s seed.
    private static let seed = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))

    private var buckets = ContiguousArray(repeating: Bucket(high: 0, low: 0, slot: -1), count: 16)
    /// Occupied buckets.
    private(set) var count = 0

    /// The slot of `id`'s entry.
    subscript(id: UUID) -> Int32? {
        get {
            let (high, low) = Self.halves(id)
            let mask = buckets.count - 1
            var i = Self.hash(high, low) & mask
            while true {
                let bucket = buckets[i]
                if bucket.slot < 0 { return nil }
                if bucket.high == high, bucket.low == low { return bucket.slot }
                i = (i + 1) & mask
            }
        }
        set {
            let (high, low) = Self.halves(id)
            if let newValue {
                insert(high, low, newValue)
            } else {
                remove(high, low)
            }
        }
    }

    /// Every indexed entity with its slot.
    var entries: [(id: UUID, slot: Int32)] {
        buckets.filter { $0.slot >= 0 }.map { (Self.id($0.high, $0.low), $0.slot) }
    }

    /// Every indexed slot.
    var slotValues: [Int32] { buckets.compactMap { $0.slot >= 0 ? $0.slot : nil } }

    /// Makes room for `n` entries without growing.
    mutating func reserveCapacity(_ n: Int) {
        var size = buckets.count
        while size < 2 * n { size *= 2 }
        if size > buckets.count { rehash(to: size) }
    }

    private mutating func insert(_ high: UInt64, _ low: UInt64, _ slot: Int32) {
        if 2 * (count + 1) > buckets.count { rehash(to: buckets.count * 2) }
        let mask = buckets.count - 1
        var i = Self.hash(high, low) & mask
        while buckets[i].slot >= 0 {
            if buckets[i].high == high, buckets[i].low == low {
                buckets[i].slot = slot
                return
            }
            i = (i + 1) & mask
        }
        buckets[i] = Bucket(high: high, low: low, slot: slot)
        count += 1
    }

    /// Removes the entry, then moves each later bucket of the same run back into the gap when its home
    /// bucket does not lie between the gap and it (so every entry stays reachable from its home bucket).
    private mutating func remove(_ high: UInt64, _ low: UInt64) {
        let mask = buckets.count - 1
        var gap = Self.hash(high, low) & mask
        while true {
            if buckets[gap].slot < 0 { return }
            if buckets[gap].high == high, buckets[gap].low == low { break }
            gap = (gap + 1) & mask
        }
        buckets[gap].slot = -1
        count -= 1
        var i = gap
        while true {
            i = (i + 1) & mask
            let bucket = buckets[i]
            if bucket.slot < 0 { return }
            let home = Self.hash(bucket.high, bucket.low) & mask
            // The bucket stays when its home lies cyclically in (gap, i].
            let stays = gap <= i ? (gap < home && home <= i) : (gap < home || home <= i)
            if !stays {
                buckets[gap] = bucket
                buckets[i].slot = -1
                gap = i
            }
        }
    }

    private mutating func rehash(to size: Int) {
        let old = buckets
        buckets = ContiguousArray(repeating: Bucket(high: 0, low: 0, slot: -1), count: size)
        count = 0
        for bucket in old where bucket.slot >= 0 { insert(bucket.high, bucket.low, bucket.slot) }
    }

    private static func halves(_ id: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: id.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    }

    private static func id(_ high: UInt64, _ low: UInt64) -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) {
            $0.storeBytes(of: high, as: UInt64.self)
            $0.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: uuid)
    }

    /// The bucket number of an id (before masking): murmur3's finaliser (``PixelChecksum/mix(_:)``, every
    /// input bit moving about half the output bits) of the seeded high half, then of that with the low half.
    private static func hash(_ high: UInt64, _ low: UInt64) -> Int {
        Int(truncatingIfNeeded: PixelChecksum.mix(PixelChecksum.mix(high ^ seed.0) ^ low ^ seed.1))
    }
}
