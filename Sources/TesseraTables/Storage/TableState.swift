@_spi(Internal) import TesseraImaging
import Foundation
import Synchronization

/// Everything an ``ImageTable`` keeps in memory, guarded by its mutex: the mapping, one record per
/// slot in the file, the entity index, recency and free lists, and the logical clock.
///
/// Slot life cycle: **free** (in ``free``; commit word 0, not referenced) → **reserved** by a
/// writer (referenced by the writer's lease, not indexed, commit word 0, in ``unindexed``) →
/// **committed** (indexed and in ``recency``, referenced or not) → back to free when deleted,
/// replaced or evicted and no ``TableImage`` references it any more.
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
        /// page; ``persistRecency()`` copies it to the slot headers (on flush and close).
        var lastAccess: UInt64 = 0
    }

    let format: ImageFormat
    /// The format's ``ImageFormat/headerBytes`` and ``ImageFormat/bytesPerEntry``, computed once
    /// (every hit needs them).
    let geometry: (headerBytes: Int, bytesPerEntry: Int)
    var mapping: TableMapping
    var records: [SlotRecord] = []
    /// Each slot's lease, shared by every reference to the slot (see "References" above); as many as
    /// ``records``. Kept apart so that records stay plain values (copying one retains nothing).
    var leases: [TableLease?] = []
    var index = EntityIndex()
    var recency = RecencyList()
    var free = FreeSlots()
    /// Slots neither indexed nor free: reserved by a writer, or dropped from the index while referenced.
    var unindexed = Set<Int>()
    var clock: UInt64 = 1
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

    /// Reads the slot headers of the file behind `mapping` and builds the in-memory state.
    init(format: ImageFormat, mapping: TableMapping) {
        self.format = format
        self.mapping = mapping
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
            if commit == 0 { freeSlots.append(slot); continue }
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
                freeSlots.append(loser)
                if loser == slot { continue }
            }
            index[entity] = Int32(slot)
            generations[slot] = h.generation
            records[slot] = SlotRecord(entityID: entity, sourceID: h.sourceID, commit: commit, lastAccess: access)
            byAccess.append((access, slot))
        }
        byAccess.removeAll { records[$0.slot].entityID == nil }
        for (_, slot) in byAccess.sorted(by: { $0.access < $1.access }) { recency.pushFront(slot) }
        free.rebuild(freeSlots)
        clock = maxClock + 1
    }

    // MARK: Geometry

    func header(_ slot: Int) -> SlotHeader {
        SlotHeader(pointer: mapping.base + ImageFormat.pageSize + slot * ImageFormat.slotHeaderSize, slot: slot)
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
            if h.lastAccess != records[slot].lastAccess { h.lastAccess = records[slot].lastAccess }
        }
    }

    mutating func tick() -> UInt64 {
        clock += 1
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
            if slot < records.count { free.insert(slot) }
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
        if let st = fileState ?? mapping.fileState(), st.size >= format.headerBytes { header(slot).invalidate() }
        records[slot].entityID = nil
        records[slot].commit = 0
        records[slot].verified = false
        recency.remove(slot)
        if isReferenced(slot) { unindexed.insert(slot) } else { free.insert(slot) }
    }

    // MARK: Slots and file size

    /// Reserves a slot for a new entry (in ``unindexed``; the caller takes its reference before
    /// releasing the lock, then gives it disk blocks and invalidates its header outside the lock with
    /// ``TableMapping/prepareSlot(_:format:)``): the lowest free slot, else a new one from growing the
    /// file, else the least recently used entry without live images. Entries with live images that
    /// the search passes over move to the most recent end (they are in use). `fileState` is an
    /// `fstat` the caller just took, if any.
    mutating func reserveSlot(fileState: TableMapping.FileState? = nil) throws(TesseraError) -> Int {
        try repairIfTruncated(fileState: fileState)
        reclaimUnreferenced()
        if free.count == 0 && records.count < format.maximumCount { try grow() }
        var slot = free.popLowest()
        if slot == nil {
            for _ in 0..<recency.count {
                guard let lru = recency.leastRecent else { break }
                if isReferenced(lru) { recency.pushFront(lru); continue }
                discard(lru, fileState: fileState)   // `free` was empty, so it now holds exactly `lru`
                evictions += 1
                slot = free.popLowest()
                break
            }
        }
        guard let slot else { throw TesseraError(.storage(.allEntriesInUse(format: format.name))) }
        // Free slots and discarded entries already have commit word 0; the writer invalidates the
        // header again after allocating its blocks. If that fails (disk full), the slot returns to
        // the free slots once the writer's reference is gone, every other entry untouched.
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

    /// Adds a chunk of slots (about 2 MiB, at least one) to the end of the file.
    mutating func grow() throws(TesseraError) {
        let chunk = max(1, (2 << 20) / format.bytesPerEntry)
        let old = records.count
        let new = min(format.maximumCount, old + chunk)
        guard new > old else { return }
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

    /// Truncates the file after the last slot that holds an entry or a live image.
    mutating func shrink() throws(TesseraError) {
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
        let commit = target.commit(entityID: entity, sourceID: records[from].sourceID, generation: tick(),
                                   pixelChecksum: source.pixelChecksum, lastAccess: records[from].lastAccess)
        source.invalidate()
        records[to] = records[from]
        records[to].commit = commit
        records[from] = SlotRecord()
        index[entity] = Int32(to)
        recency.replace(from, with: to)
    }
}
