import Foundation

/// A table's entity index: entity id → slot. A dictionary keyed by the id's two 64-bit halves, which
/// `Hasher` takes as two words instead of hashing a 16-byte buffer byte-wise (the costliest part of
/// a hit with a plain `[UUID: Int32]`). Seeded per process like every Swift `Hasher`.
struct EntityIndex {
    private struct Key: Hashable {
        let high: UInt64
        let low: UInt64

        init(_ id: UUID) {
            let u = id.uuid
            high = UInt64(u.0) << 56 | UInt64(u.1) << 48 | UInt64(u.2) << 40 | UInt64(u.3) << 32
                | UInt64(u.4) << 24 | UInt64(u.5) << 16 | UInt64(u.6) << 8 | UInt64(u.7)
            low = UInt64(u.8) << 56 | UInt64(u.9) << 48 | UInt64(u.10) << 40 | UInt64(u.11) << 32
                | UInt64(u.12) << 24 | UInt64(u.13) << 16 | UInt64(u.14) << 8 | UInt64(u.15)
        }

        var id: UUID {
            UUID(uuid: (UInt8(truncatingIfNeeded: high >> 56), UInt8(truncatingIfNeeded: high >> 48),
                        UInt8(truncatingIfNeeded: high >> 40), UInt8(truncatingIfNeeded: high >> 32),
                        UInt8(truncatingIfNeeded: high >> 24), UInt8(truncatingIfNeeded: high >> 16),
                        UInt8(truncatingIfNeeded: high >> 8), UInt8(truncatingIfNeeded: high),
                        UInt8(truncatingIfNeeded: low >> 56), UInt8(truncatingIfNeeded: low >> 48),
                        UInt8(truncatingIfNeeded: low >> 40), UInt8(truncatingIfNeeded: low >> 32),
                        UInt8(truncatingIfNeeded: low >> 24), UInt8(truncatingIfNeeded: low >> 16),
                        UInt8(truncatingIfNeeded: low >> 8), UInt8(truncatingIfNeeded: low)))
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(high)
            hasher.combine(low)
        }
    }

    private var slots: [Key: Int32] = [:]

    /// The slot of `id`'s entry.
    subscript(id: UUID) -> Int32? {
        get { slots[Key(id)] }
        set { slots[Key(id)] = newValue }
    }

    /// Entries indexed.
    var count: Int { slots.count }

    /// Every indexed entity with its slot.
    var entries: [(id: UUID, slot: Int32)] { slots.map { ($0.key.id, $0.value) } }

    /// Every indexed slot.
    var slotValues: [Int32] { Array(slots.values) }

    mutating func reserveCapacity(_ n: Int) { slots.reserveCapacity(n) }
}
