@_spi(Internal) import TesseraImaging
import Foundation

extension ImageTable {
    /// The entity ids of every committed entry, in no particular order.
    public var entityIDs: [UUID] {
        state.withLock { s in
            s.sync()
            return s.index.entries.map(\.id)
        }
    }

    /// Every committed entry, ordered by slot (for tools such as contact sheets and `inspect`).
    public func entries() -> [TableEntry] {
        state.withLock { s in
            s.sync()
            return s.index.entries.map { TableEntry(entityID: $0.id, sourceID: s.records[Int($0.slot)].sourceID, slot: Int($0.slot)) }
                .sorted { $0.slot < $1.slot }
        }
    }

    /// Entity ids from most to least recently used, excluding entries with live images (those cannot
    /// be replaced now). For tests and tools.
    @_spi(Internal) public var recencyOrder: [UUID] {
        state.withLock { s in s.recency.ordered.filter { !s.isReferenced($0) }.compactMap { s.records[$0].entityID } }
    }

    /// File size, allocation and entry counts.
    public var usage: TableUsage {
        state.withLock { s in
            s.sync()
            let st = s.mapping.fileState()
            return TableUsage(bytesOnDisk: st?.allocatedBytes ?? 0, fileSize: st?.size ?? 0, entryCount: s.index.count,
                              capacity: format.maximumCount, slotsInFile: s.records.count,
                              bytesPerRow: format.bytesPerRow, bytesPerEntry: format.bytesPerEntry)
        }
    }

    /// Removes every entry and shrinks the file to its header (or to the last slot an image still
    /// references: those pixels stay untouched until the images are gone). While another process has
    /// the table open, its entries are removed too but the file keeps its size.
    public func reset() throws(TesseraError) {
        try withWritersHeld { s throws(TesseraError) in
            try s.repairIfTruncated()
            for slot in s.index.slotValues { s.discard(Int(slot)) }
            try s.shrink()
        }
    }

    /// Runs `body` on the state holding the writers' lock of its mapping, after taking in what other
    /// processes did.
    func withWritersHeld<T>(_ body: (inout TableState) throws(TesseraError) -> T) throws(TesseraError) -> T {
        while true {
            let mapping = state.withLock { $0.mapping }
            let result = try mapping.withWriters { () throws(TesseraError) -> T? in
                try state.withLock { s throws(TesseraError) -> T? in
                    guard s.mapping === mapping else { return nil }
                    s.writersHeld = true
                    defer { s.writersHeld = false }
                    s.sync(underWriters: true)
                    return try body(&s)
                }
            }
            if let result { return result }
        }
    }

    /// Shrinks the file after deletions: moves committed entries without live images from the
    /// highest slots into the lowest free ones (same commit protocol as a store, see
    /// `TableState/move(_:to:)`), then truncates after the last used slot. Entries with live
    /// images stay where they are and bound the truncation. Holds the table's mutex throughout.
    /// Does nothing while another process has the table open (its images may be in those slots).
    public func compact() throws(TesseraError) {
        try withWritersHeld { s throws(TesseraError) in
            guard !s.mapping.hasOtherParticipants else { return }
            try s.repairIfTruncated()
            var high = s.records.count - 1
            while high >= 0 {
                defer { high -= 1 }
                guard s.records[high].entityID != nil, !s.isReferenced(high) else { continue }
                guard s.header(high).commitWord == s.records[high].commit else { s.discard(high); continue }
                guard let low = s.free.lowest, low < high else { break }
                guard (try? s.allocate(low)) != nil else { break }   // disk full: stop moving, entries intact
                _ = s.free.popLowest()
                s.move(high, to: low)
                s.free.insert(high)
            }
            try s.shrink()
        }
    }

    /// Checks every committed entry: its header against its commit word and its pixels against the
    /// checksum. Read-only (damaged entries are reported, not removed; a lookup removes them). Each
    /// entry is referenced while it is hashed, so concurrent stores never change what is being checked.
    public func verify() -> TableVerification {
        let slots: [(Int, UUID)] = state.withLock { s in
            s.sync()
            return s.index.entries.map { (Int($0.slot), $0.id) }
        }.sorted { $0.0 < $1.0 }
        var damaged: [TableVerification.Damage] = []
        var checked = 0
        for (slot, entity) in slots {
            let held: (TableLease, UInt64)? = state.withLock { s in
                guard slot < s.records.count, s.records[slot].entityID == entity else { return nil }
                let h = s.header(slot)
                guard s.fileCovers(slot) else {
                    damaged.append(.init(slot: slot, entityID: entity, reason: "beyond the end of the file"))
                    return nil
                }
                s.pinIfNeeded(slot)   // before the commit word is read: no other process reuses the slot meanwhile
                let commit = h.commitWord
                if commit != s.records[slot].commit, commit == 0 || h.isValid {
                    s.syncSlot(slot, underWriters: false)   // removed or replaced by another process: not damage
                    return nil
                }
                guard commit == s.records[slot].commit, h.isValid, h.holds(entity) else {
                    damaged.append(.init(slot: slot, entityID: entity, reason: "slot header changed or invalid"))
                    return nil
                }
                return (s.reference(slot), h.pixelChecksum)
            }
            guard let (lease, expected) = held else { continue }
            let sum = PixelChecksum.hash(lease.pointer, count: format.layout.byteCount)
            checked += 1
            state.withLock { s in
                if sum != expected {
                    damaged.append(.init(slot: slot, entityID: entity, reason: "pixel checksum mismatch"))
                } else if s.mapping === lease.mapping, s.records[slot].entityID == entity {
                    s.records[slot].verified = true
                }
            }
            withExtendedLifetime(lease) {}
        }
        let earlier = state.withLock { $0.damage }
        return TableVerification(checkedEntries: checked, damaged: earlier + damaged)
    }

    /// Asks the kernel to write dirty pages to disk: `msync(MS_ASYNC)` (schedule and return) or,
    /// with `synchronously`, `msync(MS_SYNC)` (wait). Stores never do this themselves.
    public func flush(synchronously: Bool = false) throws(TesseraError) {
        try state.withLock { s throws(TesseraError) in
            s.persistRecency()
            guard let st = s.mapping.fileState(), st.size > 0 else { return }
            let length = min(st.size, s.mapping.length)
            guard msync(s.mapping.base, length, synchronously ? MS_SYNC : MS_ASYNC) == 0 else {
                throw TesseraError(.io(operation: "msync", path: s.mapping.path, errno: errno))
            }
        }
    }
}
