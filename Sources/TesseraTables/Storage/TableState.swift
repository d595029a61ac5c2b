@_spi(Internal) import TesseraImaging
import Foundation
import Synchronization

/// Everything an ``ImageTable`` keeps in memory, guarded by its mutex: the mapping, one record per
/// slot in the file, the entity index, recency and free lists, and the logical clock.
///
/// Slot life cycle: **free** (in ``free``; commit word 0, not referenced) → **reserved** by a
/// writer (referenced by the writer's lease, not indexed, commit word 0, in ``unindexed``, its
/// owner byte in the ``TableSharedRegion`` naming this participant) → **committed** (indexed and in
/// ``recency``, referenced or not) → back to free when deleted, replaced or evicted and no
/// ``TableImage`` references it any more. A slot another process has reserved, or that only another
/// process's images still pin, is **foreign** here (in ``foreign``) until the shared state says
/// otherwise. With other processes, all of this is this participant's view, kept current from the
/// shared journal (``sync()``) and checked against the slot headers on every hit.
///
/// **References.** Each slot has one ``TableLease`` object (made on first use); every
/// ``TableImage`` of the slot, and a writer drawing into it, holds that object. The slot is
/// referenced exactly when someone besides this state holds it (`isKnownUniquelyReferenced`). New
/// references are only made under the table's lock (a hit or a reservation), so a slot seen
/// unreferenced under the lock stays so until the lock is released; references end anywhere, without
/// the lock (dropping a ``TableImage`` is a plain release). Slots that are neither indexed nor free
/// wait in ``unindexed`` until ``reclaimUnreferenced()`` finds them unreferenced.
struct TableState {
    /// What the table knows about one slot.
    struct SlotRecord {
        /// The entity stored in the slot, `nil` if no committed entry is indexed there.
        var entityID: UUID?
        /// The entry's source id.
        var sourceID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        /// The commit word written when the entry was committed (checked on every hit).
        var commit: UInt64 = 0
        /// Whether the pixel checksum was verified in this process.
        var verified = false
        /// Logical time of the last hit. Kept here, not in the mapping, so that a hit writes no
        /// page (while no other process shares the table); ``persistRecency()`` copies it to the slot
        /// headers (on flush and close).
        var lastAccess: UInt64 = 0
        /// Whether this participant's pin bit is set for the slot (``TableSharedRegion/pin(_:_:)``).
        var pinned = false

        /// The record of a slot without an entry, keeping the pin flag (the shared bit outlives the entry).
        var cleared: SlotRecord { SlotRecord(pinned: pinned) }
    }

    let format: ImageFormat
    /// The format's ``ImageFormat/headerBytes`` and ``ImageFormat/bytesPerEntry``, computed once
    /// (every hit needs them).
    let geometry: (headerBytes: Int, bytesPerEntry: Int)
    /// The mapping; replaced only with the whole state (``recreate()``), so the raw addresses below stay its own.
    let mapping: TableMapping
    /// `mapping.base` at the first slot header, and the shared region's base: what a hit reads, as raw
    /// addresses (no reference counting on the hit path).
    let slotHeaders: UnsafeMutableRawPointer
    let sharedBase: UnsafeMutableRawPointer
    var records: [SlotRecord] = []
    /// Each slot's lease, shared by every reference to the slot (see "References" above); as many as
    /// ``records``. Kept apart so that records stay plain values (copying one retains nothing).
    var leases: [TableLease?] = []
    var index = EntityIndex()
    var recency = RecencyList()
    var free = FreeSlots()
    /// Slots neither indexed nor free: reserved by a writer, or dropped from the index while referenced.
    var unindexed = Set<Int>()
    /// Slots other processes hold without an entry here: reserved for their stores, or pinned by their
    /// images after the entry went. Checked again on every reservation.
    var foreign = Set<Int>()
    /// The slots whose pin bit this participant has set (as ``SlotRecord/pinned``).
    var pinnedSlots = Set<Int>()
    /// This participant's logical clock: every hit ticks it; stores move it and the shared clock
    /// (``TableSharedRegion/clock``) past each other.
    var clock: UInt64 = 1
    /// The journal records (``TableSharedRegion/sequence``) and sweep requests already applied.
    var journalSeen: UInt64 = 0
    var sweepsSeen: UInt32 = 0
    /// The sweep the last failed reservation asked for, and of whom (a participant bit mask): the
    /// store waits for their answers and tries once more (``ImageTable``).
    var pendingSweep: (request: UInt32, participants: UInt64)?
    /// Whether this participant holds the writers' lock now (then discards are journalled).
    var writersHeld = false
    /// Whether another process had the table open at the last store or open: hits then leave
    /// their time in the slot headers for the others' evictions (``noteAccess(_:)``).
    var othersAttached = false
    var damage: [TableVerification.Damage] = []
    /// Entries evicted (least recently used, to make room for a store) and external truncations
    /// repaired since the file was mapped; ``ImageTable`` reports their growth after each store.
    var evictions = 0
    var truncationRepairs = 0
    /// Hits not yet added to the hits counter (``TableMetrics``).
    var unpublishedHits = 0
    /// How long a lookup trusts the last `fstat` (nanoseconds); see ``ImageTable/init(format:directory:fileCheckInterval:)``.
    var fileCheckInterval: UInt64 = 50_000_000
    /// The last `fstat` result used by lookups and when it was taken (monotonic nanoseconds).
    private var checkedFile: TableMapping.FileState?
    private var checkedAt: UInt64 = 0

    /// Generations and access times read from a file are below this (2⁶²): a table would need
    /// more than 10¹⁸ stores to get there, so larger values are damage, and the logical clock,
    /// which continues from the largest value read, can never overflow.
    static let clockLimit: UInt64 = 1 << 62

    /// Reads the slot headers of the file behind `mapping` and builds the in-memory state. Call
    /// holding the writers' lock (as ``TableMapping/open(format:directory:)`` returns): damaged headers
    /// and duplicate entries are invalidated, which must not race another participant's commit.
    init(format: ImageFormat, mapping: TableMapping) {
        self.format = format
        self.mapping = mapping
        slotHeaders = mapping.base + ImageFormat.pageSize
        sharedBase = mapping.shared.base
        geometry = (format.headerBytes, format.bytesPerEntry)
        let size = mapping.fileState()?.size ?? 0
        let count = size >= format.headerBytes ? min(format.maximumCount, (size - format.headerBytes) / format.bytesPerEntry) : 0
        records = Array(repeating: SlotRecord(), count: count)
        leases = Array(repeating: nil, count: count)
        index.reserveCapacity(count)
        recency.resize(to: count)
        var byAccess: [(access: UInt64, slot: Int)] = []
        var generations: [UInt64] = Array(repeating: 0, count: count)
        var freeSlots: [Int] = []
        var maxClock: UInt64 = 0
        for slot in 0..<count {
            let h = header(slot)
            let commit = h.commitWord
            if commit == 0 {
                if Self.isHeldByOthers(slot, mapping: mapping) { foreign.insert(slot) } else { freeSlots.append(slot) }
                continue
            }
            guard commit == h.expectedCommitWord, h.generation < Self.clockLimit else {
                // A header that fails its own checksum (or claims an impossible generation, which
                // only a forged file can): damaged, never served.
                damage.append(.init(slot: slot, entityID: h.entityID, reason: commit == h.expectedCommitWord
                                    ? "slot generation out of range" : "slot header checksum mismatch"))
                h.invalidate()
                freeSlots.append(slot)
                continue
            }
            let entity = h.entityID
            // The last access is a hint outside the commit word: any value can appear after a
            // bit flip. An out-of-range one falls back to the generation.
            let access = h.lastAccess < Self.clockLimit ? h.lastAccess : h.generation
            maxClock = max(maxClock, h.generation, access)
            if let other = index[entity].map(Int.init) {
                // Two commits for one entity (a crash inside a replacement): the newer one wins.
                let loser = generations[other] > h.generation ? slot : other
                header(loser).invalidate()
                records[loser] = SlotRecord()
                if Self.isHeldByOthers(loser, mapping: mapping) { foreign.insert(loser) } else { freeSlots.append(loser) }
                if loser == slot { continue }
            }
            index[entity] = Int32(slot)
            generations[slot] = h.generation
            records[slot] = SlotRecord(entityID: entity, sourceID: h.sourceID, commit: commit, lastAccess: access)
            byAccess.append((access, slot))
        }
        byAccess.removeAll { records[$0.slot].entityID == nil }
        for (_, slot) in byAccess.sorted(by: { $0.access < $1.access }) { recency.pushFront(slot) }
        free.rebuild(freeSlots.filter { records[$0].entityID == nil })
        clock = mapping.shared.advanceClock(past: maxClock)
        journalSeen = mapping.shared.sequence
        sweepsSeen = mapping.shared.sweepRequests
        othersAttached = mapping.hasOtherParticipants
    }

    // MARK: Geometry

    func header(_ slot: Int) -> SlotHeader {
        SlotHeader(pointer: slotHeaders + slot * ImageFormat.slotHeaderSize, slot: slot)
    }

    func pixelOffset(_ slot: Int) -> Int { geometry.headerBytes + slot * geometry.bytesPerEntry }

    func pixels(_ slot: Int) -> UnsafeMutableRawPointer { mapping.base + pixelOffset(slot) }

    /// The file offset just past `slot`'s pixels.
    func slotEnd(_ slot: Int) -> Int { pixelOffset(slot) + geometry.bytesPerEntry }

    /// Whether the file (still) covers `slot` and has not been unlinked. One `fstat`.
    func fileCovers(_ slot: Int) -> Bool {
        guard let st = mapping.fileState() else { return false }
        return st.links > 0 && st.size >= slotEnd(slot)
    }

    /// Whether lookups may hand out `slot`: the mapping has not faulted, and the file covered the
    /// slot and was linked at the last `fstat`, taken at most ``fileCheckInterval`` ago.
    mutating func coversForLookup(_ slot: Int) -> Bool {
        if mapping.faulted { return false }
        let now = Self.coarseNanoseconds()
        if checkedFile == nil || now &- checkedAt >= fileCheckInterval {
            checkedFile = mapping.fileState()
            checkedAt = now
            if let st = checkedFile { forgetSlots(notCoveredBy: st.size) }
        }
        guard let st = checkedFile else { return false }
        return st.links > 0 && st.size >= slotEnd(slot)
    }

    /// Drops every entry the file no longer covers (someone truncated it): their pixels and headers
    /// are gone, and must not be served from memory even if the file grows again.
    mutating func forgetSlots(notCoveredBy size: Int) {
        guard size < format.headerBytes + records.count * format.bytesPerEntry else { return }
        for slot in records.indices where records[slot].entityID != nil && (size < format.headerBytes || slotEnd(slot) > size) {
            damage.append(.init(slot: slot, entityID: records[slot].entityID, reason: "the file was truncated before this entry"))
            discard(slot)
        }
    }

    /// `CLOCK_MONOTONIC_COARSE` in nanoseconds: a few ns to read (no clock source access), a few ms
    /// resolution, which is plenty against ``fileCheckInterval``.
    static func coarseNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Forgets the cached `fstat` (after this process changed the file's size).
    mutating func fileSizeChanged() { checkedFile = nil }

    /// Writes each entry's in-memory last-access time into its slot header, so the next process
    /// restores the same recency order. Skipped when the file no longer covers the headers.
    mutating func persistRecency() {
        guard !mapping.faulted, let st = mapping.fileState(), st.links > 0 else { return }
        for slot in records.indices where records[slot].entityID != nil && st.size >= slotEnd(slot) {
            let h = header(slot)
            if h.lastAccess < records[slot].lastAccess { h.lastAccess = records[slot].lastAccess }
        }
    }

    /// The next local time (a hit).
    mutating func tick() -> UInt64 {
        clock += 1
        return clock
    }

    /// The next shared time (a commit's generation; writers' lock held): past every participant's.
    mutating func tickShared() -> UInt64 {
        clock = mapping.shared.advanceClock(past: clock)
        return clock
    }

    // MARK: References

    /// Whether anyone besides this state holds `slot`'s lease (a ``TableImage`` or a writer).
    mutating func isReferenced(_ slot: Int) -> Bool {
        guard leases[slot] != nil else { return false }
        if isKnownUniquelyReferenced(&leases[slot]) {
            // Pairs with the release of the last other reference: its reads of the pixels happen
            // before anything this thread writes into the slot next.
            atomicMemoryFence(ordering: .acquiring)
            return false
        }
        return true
    }

    /// A new reference to `slot` (its one lease object, made on first use). Call under the lock.
    mutating func reference(_ slot: Int) -> TableLease {
        if let lease = leases[slot] { return lease }
        let lease = TableLease(mapping: mapping, slot: slot, offset: pixelOffset(slot))
        leases[slot] = lease
        return lease
    }

    /// Returns every slot of ``unindexed`` that nobody references any more to the free slots.
    mutating func reclaimUnreferenced() {
        guard !unindexed.isEmpty else { return }
        for slot in unindexed where slot >= records.count || !isReferenced(slot) {
            unindexed.remove(slot)
            guard slot < records.count else { continue }
            // A reservation that ended without a commit (its writer threw): no longer ours.
            if mapping.shared.owner(of: slot) == mapping.participant { mapping.shared.setOwner(slot, nil) }
            free.insert(slot)
        }
    }

    /// Removes the entry in `slot` from the index and invalidates its header. Pixels are untouched,
    /// so live images keep reading them; the slot becomes free when the last one ends. `fileState`
    /// is an `fstat` the caller just took under this lock, if any (else one is taken).
    mutating func discard(_ slot: Int, fileState: TableMapping.FileState? = nil) {
        guard slot < records.count, let entity = records[slot].entityID else { return }
        if index[entity] == Int32(slot) { index[entity] = nil }
        // After an external truncation of the header region there is nothing to invalidate (the
        // region reads as zeros once re-extended), and touching it would fault.
        // Only the commit this participant knows: another process may have replaced it meanwhile.
        if let st = fileState ?? mapping.fileState(), st.size >= format.headerBytes,
           header(slot).invalidate(expecting: records[slot].commit), writersHeld {
            appendJournal(slot)
        }
        records[slot] = records[slot].cleared
        recency.remove(slot)
        if isReferenced(slot) { unindexed.insert(slot) } else { free.insert(slot) }
    }

    // MARK: Slots and file size

    /// Reserves a slot for a new entry (in ``unindexed``, its shared owner byte naming this
    /// participant; the caller takes its reference before releasing the lock, then gives it disk
    /// blocks and invalidates its header outside the lock with ``TableMapping/prepareSlot(_:format:)``):
    /// the lowest free slot, else a new one from growing the file, else the least recently used entry
    /// that no image of any process holds. Call holding the writers' lock, after ``sync()``.
    ///
    /// A free slot is checked against the shared state first (``isFreeEverywhere(_:)``). Entries with
    /// live images here, or pinned by another live process, move to the most recent end (they are in
    /// use; the others are asked to sweep their pins); an entry another process hit more recently
    /// than this one knows (its header's last access) gets a second chance. `fileState` is an
    /// `fstat` the caller just took, if any.
    mutating func reserveSlot(fileState: TableMapping.FileState? = nil) throws(TesseraError) -> Int {
        try repairIfTruncated(fileState: fileState)
        reclaimUnreferenced()
        recheckForeign()
        while true {
            if free.count == 0 && records.count < format.maximumCount { try grow() }
            guard let candidate = free.popLowest() else { break }
            if isFreeEverywhere(candidate) { return reserve(candidate) }
            syncSlot(candidate, underWriters: true)   // not free after all: learn what it holds
        }
        var pinners: UInt64 = 0   // other live participants whose pins kept an entry
        defer { if pinners != 0 { pendingSweep = (mapping.shared.requestSweep(), pinners) } }
        for _ in 0..<(2 * recency.count) {
            guard let lru = recency.leastRecent else { break }
            if isReferenced(lru) { recency.pushFront(lru); continue }
            let h = header(lru)
            guard h.commitWord == records[lru].commit else {
                syncSlot(lru, underWriters: true)
                if free.contains(lru), isFreeEverywhere(lru) {
                    free.remove(lru)
                    return reserve(lru)
                }
                continue
            }
            if othersAttached, h.lastAccess > records[lru].lastAccess, h.lastAccess < Self.clockLimit {
                records[lru].lastAccess = h.lastAccess   // used by another process since: a second chance
                recency.pushFront(lru)
                continue
            }
            let pinnedBy = livePinners(lru)
            if pinnedBy != 0 {
                pinners |= pinnedBy
                recency.pushFront(lru)
                continue
            }
            discard(lru, fileState: fileState)   // `free` was empty, so it now holds exactly `lru`
            free.remove(lru)
            evictions += 1
            // A reader of another process may have pinned the entry between the check above and the
            // invalidation (it then saw the commit word before it was cleared): its image stays
            // intact, and the slot waits until it is unpinned.
            let lateBy = livePinners(lru)
            if lateBy != 0 {
                foreign.insert(lru)
                pinners |= lateBy
                continue
            }
            return reserve(lru)
        }
        throw TesseraError(.storage(.allEntriesInUse(format: format.name)))
    }

    /// Marks a checked free `slot` reserved by this participant. Free slots and discarded entries
    /// already have commit word 0; the writer invalidates the header again after allocating its
    /// blocks. If that fails (disk full), the slot returns to the free slots once the writer's
    /// reference is gone, every other entry untouched.
    private mutating func reserve(_ slot: Int) -> Int {
        mapping.shared.setOwner(slot, mapping.participant)
        foreign.remove(slot)
        unindexed.insert(slot)
        return slot
    }

    /// Gives `slot`'s header and pixels disk blocks before anything writes them (see
    /// ``TableMapping/allocate(offset:length:)``): a full disk is a thrown `.io` error, not `SIGBUS`.
    func allocate(_ slot: Int) throws(TesseraError) {
        try mapping.allocateSlot(slot, format: format)
    }

    /// Invalidates `slot`'s header only if it is not already zero. Reading a hole is safe; writing
    /// one may need a disk block, which a full disk turns into `SIGBUS`.
    func clearHeader(_ slot: Int) {
        let h = header(slot)
        if h.commitWord != 0 { h.invalidate() }
    }

    /// Adds a chunk of slots (about 2 MiB, at least one) to the end of the file (writers' lock held,
    /// after ``sync()``, which took in any growth by other processes).
    mutating func grow() throws(TesseraError) {
        let chunk = max(1, (2 << 20) / format.bytesPerEntry)
        let old = records.count
        let new = min(format.maximumCount, old + chunk)
        guard new > old else { return }
        if let st = mapping.fileState(), slots(coveredBy: st.size) > old {
            extendToFile()   // grown by another process since the sync: never shrink it
            return
        }
        try mapping.setSize(format.headerBytes + new * format.bytesPerEntry)
        fileSizeChanged()
        records.append(contentsOf: repeatElement(SlotRecord(), count: new - old))
        leases.append(contentsOf: repeatElement(nil, count: new - old))
        recency.resize(to: new)
        for slot in old..<new {
            clearHeader(slot)   // a header left over from before a truncation must not revive
            free.insert(slot)
        }
    }

    /// Re-extends the file to cover every slot the table knows of, after an external truncation
    /// (one `fstat` when nothing is wrong). The lost slots' headers read as zero — free — so
    /// nothing stale is served; a lost file header page is rewritten. Call before touching slots.
    mutating func repairIfTruncated(fileState: TableMapping.FileState? = nil) throws(TesseraError) {
        guard let st = fileState ?? mapping.fileState() else { throw TesseraError(.io(operation: "fstat", path: mapping.path, errno: errno)) }
        let needed = format.headerBytes + records.count * format.bytesPerEntry
        guard st.size < needed else { return }
        truncationRepairs += 1
        forgetSlots(notCoveredBy: st.size)
        try mapping.setSize(needed)
        fileSizeChanged()
        if st.size < ImageFormat.pageSize { try mapping.writeHeader(format) }
    }

    /// Truncates the file after the last slot that holds an entry or a live image; nothing while
    /// another process has the table open.
    mutating func shrink() throws(TesseraError) {
        // Another process's images may lie in the slots that would be cut off.
        guard !mapping.hasOtherParticipants else { return }
        reclaimUnreferenced()
        var keep = records.count
        while keep > 0, records[keep - 1].entityID == nil, !isReferenced(keep - 1) { keep -= 1 }
        guard keep < records.count else { return }
        for slot in keep..<records.count { clearHeader(slot) }
        try mapping.setSize(format.headerBytes + keep * format.bytesPerEntry)
        fileSizeChanged()
        records.removeLast(records.count - keep)
        leases.removeLast(leases.count - keep)
        recency.resize(to: keep)
        free.rebuild(records.indices.filter { records[$0].entityID == nil && !unindexed.contains($0) })
    }

    /// Moves the committed entry in `from` (no live images) to the free slot `to`, with the same
    /// protocol as a store: `to` is invalid while its pixels are written, then committed with a new
    /// generation, and only then is `from` invalidated. A crash in between leaves two valid copies;
    /// opening keeps the newer generation.
    mutating func move(_ from: Int, to: Int) {
        guard let entity = records[from].entityID else { return }
        let source = header(from), target = header(to)
        target.invalidate()
        memcpy(pixels(to), pixels(from), format.bytesPerEntry)
        let commit = target.commit(entityID: entity, sourceID: records[from].sourceID, generation: tickShared(),
                                   pixelChecksum: source.pixelChecksum, lastAccess: records[from].lastAccess)
        source.invalidate()
        let pinnedTo = records[to].pinned
        records[to] = records[from]
        records[to].commit = commit
        records[to].pinned = pinnedTo
        records[from] = records[from].cleared
        index[entity] = Int32(to)
        recency.replace(from, with: to)
    }
}
