import TesseraImaging
import Foundation
import Synchronization

/// The 64-byte header of one slot, read and written in place in the mapping.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | commit word (atomic; 0 = invalid/free) |
/// | 8 | 16 | entity id (UUID bytes) |
/// | 24 | 16 | source id (UUID bytes) |
/// | 40 | 8 | generation (table-wide commit counter) |
/// | 48 | 8 | pixel checksum (``PixelChecksum``) |
/// | 56 | 8 | last access (logical clock; a recency hint, not covered by the commit word) |
///
/// The commit word is `0x5453 << 48 | hash48(slot, entity, source, generation, pixel checksum)`:
/// it is non-zero, and it only validates together with exactly the header fields it was computed
/// from, so it doubles as the header checksum. All fields little-endian (the host order on every
/// platform Tessera supports).
struct SlotHeader {
    /// The first byte of the header.
    let pointer: UnsafeMutableRawPointer
    /// The slot's index (part of the commit hash, so a header copied to another slot is invalid).
    let slot: Int

    static let commitTag: UInt64 = 0x5453 << 48

    private var commitAtomic: UnsafeMutablePointer<Atomic<UInt64>> {
        pointer.assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// The commit word, loaded with acquire ordering.
    var commitWord: UInt64 { commitAtomic.pointee.load(ordering: .acquiring) }

    /// Marks the slot invalid. Sequentially consistent, and followed by a full fence, so the store
    /// is ordered before any later write to the slot's pixels.
    func invalidate() {
        commitAtomic.pointee.store(0, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }

    /// Marks the slot invalid if its commit word is still `commit` (compare-and-exchange, sequentially
    /// consistent, then a full fence): another process may have replaced the entry meanwhile, and its
    /// commit must stand. Returns whether the word was cleared.
    @discardableResult
    func invalidate(expecting commit: UInt64) -> Bool {
        guard commit != 0 else { return false }
        let cleared = commitAtomic.pointee.compareExchange(expected: commit, desired: 0, ordering: .sequentiallyConsistent).exchanged
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return cleared
    }

    var entityID: UUID { UUID(uuid: pointer.loadUnaligned(fromByteOffset: 8, as: uuid_t.self)) }
    var sourceID: UUID { UUID(uuid: pointer.loadUnaligned(fromByteOffset: 24, as: uuid_t.self)) }
    var generation: UInt64 { pointer.load(fromByteOffset: 40, as: UInt64.self) }
    var pixelChecksum: UInt64 { pointer.load(fromByteOffset: 48, as: UInt64.self) }
    var lastAccess: UInt64 {
        get { pointer.load(fromByteOffset: 56, as: UInt64.self) }
        nonmutating set { pointer.storeBytes(of: newValue, toByteOffset: 56, as: UInt64.self) }
    }

    /// Whether the entity bytes equal `id` (no UUID construction).
    func holds(_ id: UUID) -> Bool {
        var u = id.uuid
        return withUnsafeBytes(of: &u) { memcmp($0.baseAddress!, pointer + 8, 16) == 0 }
    }

    /// The commit word the current field values call for.
    var expectedCommitWord: UInt64 {
        let w = (UInt64(truncatingIfNeeded: slot),
                 pointer.load(fromByteOffset: 8, as: UInt64.self), pointer.load(fromByteOffset: 16, as: UInt64.self),
                 pointer.load(fromByteOffset: 24, as: UInt64.self), pointer.load(fromByteOffset: 32, as: UInt64.self),
                 generation, pixelChecksum, 0x5445_5353_4552_4131 as UInt64)
        return Self.commitTag | (PixelChecksum.hash(w) & 0xFFFF_FFFF_FFFF)
    }

    /// Whether the header is committed and consistent.
    var isValid: Bool {
        let c = commitWord
        return c != 0 && c == expectedCommitWord
    }

    /// Writes every field, then publishes them with one release store of the commit word.
    /// Returns the commit word. The caller has invalidated the slot before writing its pixels.
    @discardableResult
    func commit(entityID: UUID, sourceID: UUID, generation: UInt64, pixelChecksum: UInt64, lastAccess: UInt64) -> UInt64 {
        pointer.storeBytes(of: entityID.uuid, toByteOffset: 8, as: uuid_t.self)
        pointer.storeBytes(of: sourceID.uuid, toByteOffset: 24, as: uuid_t.self)
        pointer.storeBytes(of: generation, toByteOffset: 40, as: UInt64.self)
        pointer.storeBytes(of: pixelChecksum, toByteOffset: 48, as: UInt64.self)
        pointer.storeBytes(of: lastAccess, toByteOffset: 56, as: UInt64.self)
        let word = expectedCommitWord
        commitAtomic.pointee.store(word, ordering: .releasing)
        return word
    }
}
