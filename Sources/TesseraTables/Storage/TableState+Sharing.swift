@_spi(Internal) import TesseraImaging
import Foundation

/// How one participant keeps its view of a table current while other processes store into it (see
/// ``ImageTable``, "Sharing between processes").
extension TableState {
    /// Slots the file covers at `size`.
    func slots(coveredBy size: Int) -> Int {
        size >= format.headerBytes ? min(format.maximumCount, (size - format.headerBytes) / format.bytesPerEntry) : 0
    }

    /// Whether another live participant has reserved `slot` or may hold an image of it.
    static func isHeldByOthers(_ slot: Int, mapping: TableMapping) -> Bool {
        if let owner = mapping.shared.owner(of: slot), owner != mapping.participant, mapping.isAlive(owner) { return true }
        return livePinners(slot, mapping: mapping) != 0
    }

    /// The other live participants whose pin bit is set for `slot`, as a bit mask. Bits of dead
    /// participants are cleared on the way (their images died with them).
    static func livePinners(_ slot: Int, mapping: TableMapping) -> UInt64 {
        var others = mapping.shared.pins(of: slot) & ~(1 << UInt64(mapping.participant)), live: UInt64 = 0
        while others != 0 {
            let p = others.trailingZeroBitCount
            others &= others - 1
            if mapping.isAlive(p) { live |= 1 << UInt64(p) } else { mapping.shared.unpin(slot, p) }
        }
        return live
    }

    func livePinners(_ slot: Int) -> UInt64 { Self.livePinners(slot, mapping: mapping) }

    /// Whether `slot` is free in the shared state: no commit, no live reservation, no live pin of
    /// another process. Writers' lock held (nobody can commit into it meanwhile).
    func isFreeEverywhere(_ slot: Int) -> Bool {
        header(slot).commitWord == 0 && !Self.isHeldByOthers(slot, mapping: mapping)
    }

    // MARK: Pins

    /// Sets this participant's pin bit for `slot` before a hit hands out an image of it. The bit is
    /// set (sequentially consistent) before the hit loads the commit word; an evicting writer clears
    /// the commit word (sequentially consistent) before it looks at the pins. So either the writer
    /// sees the pin and leaves the pixels alone, or the reader sees the cleared commit word and
    /// misses: never an image of pixels being overwritten.
    @inline(__always)
    mutating func pinIfNeeded(_ slot: Int) {
        if !records[slot].pinned { pin(slot) }
    }

    @inline(never)
    private mutating func pin(_ slot: Int) {
        mapping.shared.pin(slot, mapping.participant)
        records[slot].pinned = true
        pinnedSlots.insert(slot)
    }

    /// Clears the pin bits of slots this process no longer holds images of (so other processes may
    /// evict them). References are only made under the table's lock, so a slot seen unreferenced
    /// here stays so until the lock is released.
    @inline(never)
    mutating func sweepPins() {
        let request = mapping.shared.sweepRequests
        for slot in pinnedSlots where slot >= records.count || !isReferenced(slot) {
            pinnedSlots.remove(slot)
            if slot < records.count { records[slot].pinned = false }
            mapping.shared.unpin(slot, mapping.participant)
        }
        if request != sweepsSeen {
            sweepsSeen = request
            mapping.shared.acknowledgeSweep(mapping.participant, request: request)
        }
    }

    /// Sweeps if another process asked since the last sweep (one relaxed load otherwise).
    @inline(__always)
    mutating func sweepPinsIfAsked() {
        if TableSharedRegion.sweepRequests(at: sharedBase) != sweepsSeen { sweepPins() }
    }

    /// Whether other processes committed or discarded entries this participant has not caught up with.
    @inline(__always)
    var journalMoved: Bool { TableSharedRegion.sequence(at: sharedBase) != journalSeen }

    /// Leaves a hit's time in the slot header for other processes' evictions, when others share the
    /// table and the header's time is more than ``accessHintSlack`` ticks old (so a hot entry's
    /// header is written about once per that many hits, and a table used by one process not at all).
    @inline(__always)
    mutating func noteAccess(_ slot: Int) {
        if othersAttached { leaveAccessHint(slot) }
    }

    @inline(never)
    private func leaveAccessHint(_ slot: Int) {
        let h = header(slot), now = records[slot].lastAccess
        if h.lastAccess &+ accessHintSlack < now { h.lastAccess = now }
    }

    /// Ticks a header's last access may lag behind its hits: an eighth of the table, at least 64.
    var accessHintSlack: UInt64 { UInt64(max(64, format.maximumCount / 8)) }

    // MARK: Catching up

    /// Journals a commit or discard of `slot` (writers' lock held); this participant stays caught up
    /// when it was.
    mutating func appendJournal(_ slot: Int) {
        let before = TableSharedRegion.sequence(at: sharedBase)
        let after = mapping.shared.append(slot)
        if journalSeen == before { journalSeen = after }
    }

    /// Applies what other processes did since the last call: the file's growth, then every slot the
    /// journal names (or, if this participant fell more than ``TableSharedRegion/journalCapacity``
    /// records behind, every slot). Without the writers' lock this reads headers that may change
    /// under it: each read is validated by the commit word, and what does not validate waits as
    /// ``foreign`` for the next look.
    @inline(never)
    mutating func sync(underWriters: Bool = false) {
        let shared = mapping.shared
        let sequence = shared.sequence
        guard sequence != journalSeen else { return }
        extendToFile(underWriters: underWriters)
        var slots: [Int] = []
        var all = sequence &- journalSeen > UInt64(TableSharedRegion.journalCapacity)
        if !all {
            slots.reserveCapacity(Int(sequence &- journalSeen))
            var n = journalSeen
            while n != sequence {
                slots.append(shared.journalEntry(n))
                n &+= 1
            }
            // Writers may have gone round the ring while it was read.
            all = shared.sequence &- journalSeen > UInt64(TableSharedRegion.journalCapacity)
        }
        if all { slots = Array(records.indices) }
        for slot in slots { syncSlot(slot, underWriters: underWriters) }
        journalSeen = sequence
    }

    /// Takes in slots another process added to the file (their headers read as by ``syncSlot(_:underWriters:)``).
    @inline(never)
    mutating func extendToFile(underWriters: Bool = false) {
        guard let st = mapping.fileState() else { return }
        let old = records.count, new = slots(coveredBy: st.size)
        guard new > old else { return }
        fileSizeChanged()
        records.append(contentsOf: repeatElement(SlotRecord(), count: new - old))
        leases.append(contentsOf: repeatElement(nil, count: new - old))
        recency.resize(to: new)
        for slot in old..<new { syncSlot(slot, underWriters: underWriters) }
    }

    /// Brings this participant's record of `slot` in line with its header: a changed commit drops
    /// the entry known here and takes in the one found (the newer generation wins when an entity is
    /// found in two slots); an empty slot becomes free, or foreign while another process holds it.
    /// Slots referenced here (``unindexed``) are left alone: this process's pin keeps others out.
    @inline(never)
    mutating func syncSlot(_ slot: Int, underWriters: Bool) {
        guard slot < records.count, !unindexed.contains(slot) else { return }
        let h = header(slot)
        let commit = h.commitWord
        if commit != 0, commit == records[slot].commit, records[slot].entityID != nil { return }
        if let entity = records[slot].entityID {
            if index[entity] == Int32(slot) { index[entity] = nil }
            records[slot] = records[slot].cleared
            recency.remove(slot)
            if isReferenced(slot) {
                unindexed.insert(slot)
                return
            }
        }
        free.remove(slot)
        foreign.remove(slot)
        if commit == 0 {
            if Self.isHeldByOthers(slot, mapping: mapping) { foreign.insert(slot) } else { free.insert(slot) }
            return
        }
        guard commit == h.expectedCommitWord, h.generation < Self.clockLimit, h.commitWord == commit else {
            // Under the writers' lock nobody is committing: damage, as on opening. Without it, a
            // header being rewritten: look again later.
            if underWriters {
                damage.append(.init(slot: slot, entityID: h.entityID, reason: "slot header checksum mismatch"))
                h.invalidate()
                free.insert(slot)
            } else {
                foreign.insert(slot)
            }
            return
        }
        let entity = h.entityID
        if let other = index[entity].map(Int.init), other != slot {
            guard header(other).generation < h.generation else {
                foreign.insert(slot)   // an older copy another process is about to discard
                return
            }
            index[entity] = nil
            records[other] = records[other].cleared
            recency.remove(other)
            if isReferenced(other) { unindexed.insert(other) } else { foreign.insert(other) }
        }
        let access = h.lastAccess < Self.clockLimit ? h.lastAccess : h.generation
        records[slot] = SlotRecord(entityID: entity, sourceID: h.sourceID, commit: commit, lastAccess: access,
                                   pinned: records[slot].pinned)
        index[entity] = Int32(slot)
        recency.pushFront(slot)
        clock = max(clock, access)
    }

    /// Looks again at every foreign slot (writers' lock held, so the shared state is still).
    mutating func recheckForeign() {
        guard !foreign.isEmpty else { return }
        for slot in foreign {
            foreign.remove(slot)
            syncSlot(slot, underWriters: true)
        }
    }
}
