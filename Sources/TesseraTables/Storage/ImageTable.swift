@_spi(Internal) import TesseraImaging
import Foundation
import Logging
import Synchronization

/// A persistent, memory-mapped table of same-sized images: one file per ``ImageFormat``, modelled on
/// Fast Image Cache's `FICImageTable`. Hits hand out ``TableImage`` views straight into the mapping.
///
/// ## File layout (`<directory>/<name>.tesseratable`)
/// - **Page 0**: the file header (`TableFileHeader`: magic `TSRTABL1`, version, style, width,
///   height, bytes per row, bytes per entry, maximum count, name, checksum). If it does not describe
///   exactly the format being opened, the file is truncated to zero and started afresh — a changed
///   format never serves old pixels.
/// - **Slot headers** from offset 4096: `maximumCount × 64` bytes (`SlotHeader`: commit word,
///   entity id, source id, generation, pixel checksum, last access). This region *is* the persisted
///   index; opening reads it in one pass (no separate index file).
/// - **Pixels** from ``ImageFormat/headerBytes``: slot *i* at `headerBytes + i × bytesPerEntry`,
///   page aligned. The file is extended with `ftruncate` about 2 MiB at a time as slots are used;
///   the whole maximum size is mapped once (`MAP_SHARED`), and no page beyond the file is touched.
///
/// ## Commit protocol (crash safety)
/// A store, under the mutex, picks a slot (the lowest free one, else a new one, else the least
/// recently used entry with no live image) and removes its old entry from the index (which stores 0
/// in that entry's commit word). Outside the mutex it gives the slot disk blocks, stores 0 in its
/// commit word again (atomic, with a full fence) **before** any pixel is written, zeroes the pixels,
/// runs the caller's drawing closure and hashes the pixels. Any number of stores may be drawing at
/// once, each in its own reserved slot. Back under the mutex
/// it writes the header fields and publishes them with one release store of the commit word, whose
/// value is a 48-bit hash of the slot index and all identity fields (so a torn header never
/// validates). A `SIGKILL` at any instant therefore leaves every slot committed-and-complete or
/// invalid, which reads as a miss.
///
/// **Power loss**: there is no `msync` per store (it would cost milliseconds each); the kernel writes
/// dirty pages back on its own schedule, and ``flush(synchronously:)`` forces it. Pages may reach
/// the disk in any order, so a committed header can survive with stale pixels: the pixel checksum,
/// verified the first time each slot is read in a process, turns that into a miss (and the slot is
/// freed).
///
/// ## Live images
/// An entry referenced by a live ``TableImage`` is never overwritten, moved or truncated away
/// (Fast Image Cache #29), and the table never holds more than `maximumCount` entries (#54, #121).
/// If every slot holds a live image, ``store(entityID:sourceID:draw:)`` throws
/// ``/TesseraCore/StorageFailure/allEntriesInUse(format:)`` rather than growing past the limit or waiting.
///
/// ## Sharing between processes
/// Any number of processes (up to 64, each `ImageTable` instance counting
/// as one) open the same file and read and store; docs/ARCHITECTURE.md ("Tables shared between
/// processes") has the protocol and its arithmetic. In short: stores take a byte-range lock of the open
/// file description only around reserving and committing a slot; a hit takes no file lock, sets its
/// process's pin bit for the slot in `<file>.shared` (once) and checks the slot's commit word, and a
/// writer clears the commit word before it looks at the pins, so it never overwrites a slot whose image
/// another process may hold; commits and discards are journalled there, and a miss catches up with
/// them. A process killed at any instant loses at most its own uncommitted store.
/// ``/TesseraCore/StorageFailure/locked(path:)`` only when the others have the file open for another
/// format, or all participant slots are taken.
///
/// ## Truncation and unlinking
/// Lookups hand out a slot only if the last `fstat` (at most `fileCheckInterval` old, 50 ms by
/// default) showed that the file still covers it and still has a link; stores check every time.
/// An external `ftruncate` therefore yields misses (the next store re-extends the file, whose
/// zero-filled headers read as free). Inside the interval, or for an image handed out before the
/// truncation, touching a vanished page would raise `SIGBUS`: Tessera's guard (`CTesseraGuard`)
/// catches it for table mappings, maps a zero page there and lets the access complete, and the
/// table abandons that mapping (all misses; the next store remaps the file). So a truncated table
/// never crashes the process; an image held across the truncation may read zeros. Unlinking is
/// harmless (the mapping keeps the inode): lookups miss, and the next store creates a fresh file.
public final class ImageTable: Sendable {
    /// The format of every entry.
    public let format: ImageFormat
    /// The directory holding the table file.
    public let directory: URL
    let state: LockedValue<TableState>
    /// `format.layout`, computed once.
    let layout: BitmapLayout
    /// Where events and metrics go.
    let observability: Observability
    private let metrics: TableMetrics
    /// Answers other processes' sweep requests while this process makes no calls (``TableSweeper``).
    private let sweeper: TableSweeper

    /// Opens (or creates) the table for `format` in `directory`, creating the directory with mode
    /// `0o700` if needed.
    /// - Throws: ``/TesseraCore/TesseraError`` with `.storage(.locked)` if other processes have the file
    ///   open for another format (see "Sharing between processes"), `.storage(.invalidFormat)` for an
    ///   unusable format, or `.io`.
    ///
    /// `fileCheckInterval` bounds how long lookups trust the last `fstat` of the file (see
    /// "Truncation and unlinking"); `.zero` checks on every lookup (about 0.35 µs more per hit here).
    ///
    /// `observability` receives the table's metrics (hits, misses, stores, evictions, store time,
    /// labelled with the format's name) and its events: damaged entries found on opening or on a first
    /// read (error), repaired truncations and replaced files (warning), evictions (debug). A hit logs
    /// nothing.
    public init(format: ImageFormat, directory: URL, fileCheckInterval: Duration = .milliseconds(50),
                observability: Observability = .default) throws(TesseraError) {
        try format.validate()
        self.format = format
        self.directory = directory
        self.observability = observability
        metrics = TableMetrics(format: format.name, observability: observability)
        layout = format.layout
        let mapping = try TableMapping.open(format: format, directory: directory)
        var state = TableState(format: format, mapping: mapping)
        mapping.releaseWritersAfterOpen()
        let (seconds, attoseconds) = fileCheckInterval.components
        state.fileCheckInterval = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        if !state.damage.isEmpty {
            observability.logger.error("image table opened with damaged entries; they read as misses", metadata: [
                "table": "\(mapping.path)", "damaged": "\(state.damage.count)", "first": "\(state.damage[0].reason)",
            ])
        }
        let locked = LockedValue(state)
        self.state = locked
        sweeper = TableSweeper(locked)
        sweeper.start(mapping.shared)
    }

    deinit {
        sweeper.stop(state.withLock { $0.mapping.shared })
        let hits = state.withLock { s in
            s.persistRecency()
            s.sweepPins()   // images that outlive the table keep their pins (and the mapping its participant slot)
            return s.takeUnpublishedHits()
        }
        if hits > 0 { metrics.hits.increment(by: hits) }
    }

    /// The table file's path.
    public var path: String { state.withLock { $0.mapping.path } }

    /// `$XDG_CACHE_HOME/<appName>/ImageTables`, or `~/.cache/<appName>/ImageTables` when the variable
    /// is unset or not absolute. Tables create it with mode `0o700`.
    public static func defaultDirectory(appName: String) -> URL {
        let env = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = env["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = env["HOME"] ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".cache", isDirectory: true)
        }
        return base.appendingPathComponent(appName, isDirectory: true).appendingPathComponent("ImageTables", isDirectory: true)
    }

    // MARK: Lookup

    /// The entry for `entityID`, or `nil` on a miss. With a `sourceID`, an entry made from another
    /// source is a miss too (and is deleted unless an image of it is live).
    ///
    /// Constant time: a dictionary lookup, a move to the front of the recency list and a reference to
    /// the slot's lease, under one short mutex hold (no allocation, no system call while the last
    /// `fstat` is recent). Dropping the image later is a plain release, without the mutex. The first
    /// read of a slot in this process also verifies its pixel checksum (outside the mutex); a
    /// mismatch is a miss and frees the slot.
    public func image(for entityID: UUID, sourceID: UUID? = nil) -> TableImage? {
        // The reference is taken under the lock (+1) and handed out as a trivial value, so the lock's
        // generic result is copied without reference counting. Hits are counted under the lock and
        // handed to the metrics backend in batches (``TableMetrics``).
        let found = state.withLock { s -> Lookup in
            s.sweepPinsIfAsked()
            guard let slot = s.lookup(entityID, sourceID: sourceID) ?? s.lookupAfterCatchingUp(entityID, sourceID: sourceID) else {
                return Lookup(lease: nil, source: entityID, verified: false, publishHits: s.takeUnpublishedHits())
            }
            s.recency.pushFront(slot)
            s.records[slot].lastAccess = s.tick()
            s.noteAccess(slot)
            let verified = s.records[slot].verified
            if verified { s.unpublishedHits += 1 }
            return Lookup(lease: Unmanaged.passRetained(s.reference(slot)), source: s.records[slot].sourceID, verified: verified,
                          publishHits: s.unpublishedHits >= TableMetrics.hitBatch ? s.takeUnpublishedHits() : 0)
        }
        if found.publishHits > 0 { metrics.hits.increment(by: found.publishHits) }
        guard let unmanaged = found.lease else {
            metrics.misses.increment()
            if let sourceID { dropEntry(of: entityID, unlessFrom: sourceID) }
            return nil
        }
        let lease = unmanaged.takeRetainedValue()
        if !found.verified {
            let sum = PixelChecksum.hash(lease.pointer, count: layout.byteCount)
            let ok = state.withLock { s -> Bool in
                guard s.mapping === lease.mapping else { return false }
                if sum == s.header(lease.slot).pixelChecksum {
                    if s.records[lease.slot].entityID == entityID { s.records[lease.slot].verified = true }
                    return true
                }
                s.damage.append(.init(slot: lease.slot, entityID: entityID, reason: "pixel checksum mismatch"))
                s.discard(lease.slot)
                return false
            }
            if !ok {   // the slot is freed once this lease reference is dropped
                observability.logger.error("image table entry failed its pixel checksum; dropped", metadata: [
                    "format": "\(format.name)", "entity": "\(entityID)", "slot": "\(lease.slot)",
                ])
                metrics.misses.increment()
                return nil
            }
            metrics.hits.increment()   // a first read, verified: counted at once (see the lookup above)
        }
        return TableImage(layout: layout, entityID: entityID, sourceID: found.source, lease: lease)
    }

    /// Removes the entry of `entityID` when it was made from another source than `sourceID` (a lookup
    /// for the new source missed it) and no image of it is live here: its slot is free for the new one.
    /// Under the writers' lock, like every discard other processes must learn of.
    private func dropEntry(of entityID: UUID, unlessFrom sourceID: UUID) {
        let stale = state.withLock { s in s.index[entityID].map { s.records[Int($0)].sourceID != sourceID } ?? false }
        guard stale else { return }
        _ = try? withWritersHeld { s in
            if let slot = s.index[entityID].map(Int.init), s.records[slot].sourceID != sourceID, !s.isReferenced(slot) { s.discard(slot) }
        }
    }

    /// What a lookup found under the lock, as trivial values.
    private struct Lookup {
        /// The slot's lease, referenced once for the caller; `nil` on a miss.
        var lease: Unmanaged<TableLease>?
        /// The entry's source id (on a miss, any id: unused).
        var source: UUID
        var verified: Bool
        /// Hits to hand to the metrics backend now.
        var publishHits: Int
    }

    /// Whether an entry for `entityID` (and `sourceID`, if given) exists. Does not change recency
    /// or verify pixels.
    public func contains(entityID: UUID, sourceID: UUID? = nil) -> Bool {
        state.withLock { s in (s.lookup(entityID, sourceID: sourceID) ?? s.lookupAfterCatchingUp(entityID, sourceID: sourceID)) != nil }
    }

    // MARK: Store

    /// Stores a new entry for `entityID`, replacing any previous one, and returns it.
    ///
    /// `draw` receives a zeroed bitmap of the table's layout, valid during the call, whose pixels
    /// become the slot's when it returns; it runs outside the table's mutex, so other lookups and
    /// stores proceed meanwhile. The entry becomes visible only after its pixels are in the file; if
    /// `draw` throws, the slot stays invalid and free and the error is rethrown.
    ///
    /// The drawing goes to process memory and reaches the file in one `pwrite`: written through the
    /// mapping, each of a fresh slot's pages would take its own write fault (a 200×200 slot is 40
    /// pages, each read into the page cache, zeroed and made writable one at a time), which cost a
    /// cold thumbnail request about 0.3 ms of its 1.6 ms outside the codecs.
    /// - Throws: ``/TesseraCore/StorageFailure/allEntriesInUse(format:)`` when every slot has a live image,
    ///   `.io` if the file cannot grow or take the pixels, or whatever `draw` throws.
    @discardableResult
    public func store(entityID: UUID, sourceID: UUID, draw: (MutableBitmapView) throws -> Void) throws -> TableImage {
        let start = ContinuousClock.now
        let (lease, events) = try reserve(entityID)
        report(events)
        defer { metrics.storeTime.recordSince(start) }
        let slot = lease.slot, mapping = lease.mapping
        // Outside the lock: disk blocks for the slot and its commit word cleared (on a throw the
        // reference ends and the slot returns to the free slots).
        try mapping.prepareSlot(slot, format: format)
        let pixels = UnsafeMutableRawPointer.allocate(byteCount: layout.byteCount, alignment: PixelStyle.rowAlignment)
        defer { pixels.deallocate() }
        let view = MutableBitmapView(layout: layout, baseAddress: pixels)
        view.clear()
        try draw(view)   // on throw the reference ends: the reserved slot returns to the free slots later
        try mapping.write(pixels, count: layout.byteCount, at: lease.offset)
        if format.storesThumbHash {
            writeThumbHash(of: TableImage(layout: layout, entityID: entityID, sourceID: sourceID, lease: lease),
                           entityID: entityID, sourceID: sourceID)
        }
        let sum = PixelChecksum.hash(pixels, count: layout.byteCount)
        mapping.withWriters { state.withLock { s in
            guard s.mapping === mapping else { return }   // the file was replaced meanwhile: not indexed
            s.writersHeld = true
            defer { s.writersHeld = false }
            s.sync(underWriters: true)
            if let other = s.index[entityID] { s.discard(Int(other)) }   // a concurrent store won the race
            let now = s.tickShared()
            let commit = s.header(slot).commit(entityID: entityID, sourceID: sourceID, generation: now,
                                               pixelChecksum: sum, lastAccess: now)
            s.records[slot].entityID = entityID
            s.records[slot].sourceID = sourceID
            s.records[slot].commit = commit
            s.records[slot].verified = true
            s.records[slot].lastAccess = now
            s.index[entityID] = Int32(slot)
            s.unindexed.remove(slot)
            s.recency.pushFront(slot)
            // The returned image needs the pin before the reservation ends; then others learn of the entry.
            s.pinIfNeeded(slot)
            mapping.shared.setOwner(slot, nil)
            s.appendJournal(slot)
        } }
        metrics.stores.increment()
        return TableImage(layout: layout, entityID: entityID, sourceID: sourceID, lease: lease)
    }

    /// Reserves a slot for `entityID` under the writers' lock and the mutex (the lease referenced for
    /// the caller), after taking in what other processes did. A replaced file (unlinked, or its
    /// mapping faulted) is reopened and the reservation tried again on it, under its own lock.
    private func reserve(_ entityID: UUID) throws(TesseraError) -> (TableLease, StoreEvents) {
        var events = StoreEvents()
        var waits = 0
        for _ in 0..<6 {
            let mapping = state.withLock { $0.mapping }
            let attempt = try mapping.withWriters { () throws(TesseraError) -> Attempt in
                try state.withLock { s throws(TesseraError) -> Attempt in
                    guard s.mapping === mapping else { return .again }
                    if s.mapping.faulted {
                        try s.recreate()
                        events.replacedFile = "its mapping faulted (the file was truncated under it)"
                        return .again
                    }
                    let st = s.mapping.fileState()
                    if let known = st, known.links == 0 {
                        try s.recreate()
                        events.replacedFile = "the file was unlinked"
                        return .again
                    }
                    s.writersHeld = true
                    defer { s.writersHeld = false }
                    s.othersAttached = mapping.hasOtherParticipants
                    s.sync(underWriters: true)
                    s.sweepPinsIfAsked()
                    if let old = s.index[entityID] { s.discard(Int(old), fileState: st) }
                    events.publishHits += s.takeUnpublishedHits()
                    let (evictions, repairs) = (s.evictions, s.truncationRepairs)
                    s.pendingSweep = nil
                    var slot: Int
                    do throws(TesseraError) {
                        slot = try s.reserveSlot(fileState: st)
                    } catch {
                        // Every entry pinned: perhaps by this process's own idle pins too.
                        s.sweepPins()
                        do throws(TesseraError) {
                            slot = try s.reserveSlot(fileState: st)
                        } catch {
                            // Pinned by other processes too: they were asked to sweep; wait for them.
                            guard waits < 2, let pending = s.pendingSweep else { throw error }
                            return .waitForSweep(pending.request, pending.participants)
                        }
                    }
                    events.evictions += s.evictions - evictions
                    events.repairedTruncation = events.repairedTruncation || s.truncationRepairs > repairs
                    return .reserved(s.reference(slot))
                }
            }
            switch attempt {
            case .reserved(let lease): return (lease, events)
            case .again: continue
            case .waitForSweep(let request, let participants):
                // Outside every lock: the others' sweepers take their table mutex and answer within
                // microseconds; a stopped or hung process is waited for 100 ms at most.
                waits += 1
                _ = mapping.shared.waitForSweeps(request, of: participants, timeout: .milliseconds(100), isAlive: mapping.isAlive)
            }
        }
        let path = state.withLock { $0.mapping.path }
        throw TesseraError(.io(operation: "open (file keeps being replaced)", path: path, errno: EAGAIN))
    }

    /// How one try to reserve a slot ended.
    private enum Attempt {
        case reserved(TableLease)
        /// The file was replaced (or the state's mapping changed): try again on the current one.
        case again
        /// Every candidate was pinned, some by other processes, which were asked to sweep.
        case waitForSweep(UInt32, UInt64)
    }

    /// What a store's reservation did besides reserving a slot, reported outside the lock.
    private struct StoreEvents {
        var publishHits = 0
        var replacedFile: String?
        var evictions = 0
        var repairedTruncation = false
    }

    /// Logs and counts a store's `events`.
    private func report(_ events: StoreEvents) {
        if events.publishHits > 0 { metrics.hits.increment(by: events.publishHits) }
        let logger = observability.logger
        if let why = events.replacedFile {
            logger.warning("image table file replaced by a fresh one", metadata: ["format": "\(format.name)", "reason": "\(why)"])
        }
        if events.repairedTruncation {
            logger.warning("image table file was truncated by another program; re-extended, lost entries read as misses",
                           metadata: ["format": "\(format.name)"])
        }
        if events.evictions > 0 {
            metrics.evictions.increment(by: events.evictions)
            logger.debug("image table evicted its least recently used entry", metadata: ["format": "\(format.name)"])
        }
    }

    /// If the table file was unlinked, creates a fresh one at the path now (a store would do it
    /// too); otherwise does nothing. Images of the old file stay valid.
    /// - Throws: what ``init(format:directory:fileCheckInterval:observability:)`` throws.
    public func reopen() throws(TesseraError) {
        try state.withLock { s throws(TesseraError) in
            if let st = s.mapping.fileState(), st.links > 0 { return }
            try s.recreate()
        }
    }

    // MARK: Delete

    /// Removes the entry for `entityID`, if any, and returns whether there was one. Live images of it keep
    /// their pixels; its slot is reused once they are gone.
    @discardableResult
    public func delete(entityID: UUID) -> Bool {
        let deleted = try? withWritersHeld { s -> Bool in   // the body throws nothing
            guard let slot = s.index[entityID] else { return false }
            s.discard(Int(slot))
            return true
        }
        return deleted ?? false
    }

}

extension TableState {
    /// The slot of a valid entry for `entity` (and `source`, else a miss that leaves the entry for the
    /// store that replaces it), pinned for this participant, checking the file still covers it.
    ///
    /// No system call while the last `fstat` is recent enough. A verified, pinned entry is answered
    /// from memory when the shared journal has not moved since this process last caught up: then no
    /// process has committed or discarded anything (both are journalled before a writer looks at the
    /// pins, see ``ImageTable``). Otherwise ``checkedLookup(_:_:)`` pins the slot and compares its
    /// commit word.
    @inline(__always)
    mutating func lookup(_ entity: UUID, sourceID: UUID?) -> Int? {
        guard let s = index[entity].map(Int.init), s < records.count else { return nil }
        if let sourceID, records[s].sourceID != sourceID { return nil }
        guard coversForLookup(s) else { return nil }
        if records[s].pinned, records[s].verified, !journalMoved { return s }
        return checkedLookup(s, entity)
    }

    /// After a miss: when the journal moved, catches up with what other processes stored (``sync()``)
    /// and looks again.
    @inline(never)
    mutating func lookupAfterCatchingUp(_ entity: UUID, sourceID: UUID?) -> Int? {
        guard journalMoved else { return nil }
        sync()
        return lookup(entity, sourceID: sourceID)
    }

    /// The slow half of ``lookup(_:sourceID:)``: the pin bit set (an atomic or, sequentially consistent)
    /// before the slot's commit word is loaded and compared with the one indexed; an entry another
    /// process replaced or removed is forgotten here and its slot read again
    /// (``syncSlot(_:underWriters:)``). The first read in this process also checks the header's entity,
    /// together with the pixel checksum.
    @inline(never)
    mutating func checkedLookup(_ s: Int, _ entity: UUID) -> Int? {
        pinIfNeeded(s)
        let h = header(s)
        guard h.commitWord == records[s].commit else {
            syncSlot(s, underWriters: false)
            return nil
        }
        if !records[s].verified, !h.holds(entity) { return nil }   // damage: the pixel check and `verify()` report it
        return s
    }

    /// Replaces an unlinked file with a fresh one at the same path. Images of the old file keep it
    /// mapped; their leases no longer count here.
    ///
    /// A mapping that faulted (its file was truncated under it) is replaced by a fresh mapping of
    /// the same file through a `dup` of the descriptor: the same participant, locks and pins (the
    /// caller holds the writers' lock). A new file is opened as a new participant.
    mutating func recreate() throws(TesseraError) {
        let interval = fileCheckInterval
        let fresh: TableMapping
        var keptPins: Set<Int> = [], remapped = false
        if mapping.faulted, let st = mapping.fileState(), st.links > 0 {
            fresh = try TableMapping.remap(mapping, format: format)   // same participant: its pins stay set
            keptPins = pinnedSlots
            remapped = true
        } else {
            fresh = try TableMapping.open(format: format, directory: URL(fileURLWithPath: (mapping.path as NSString).deletingLastPathComponent,
                                                                          isDirectory: true))
        }
        let hits = unpublishedHits
        self = TableState(format: format, mapping: fresh)
        if !remapped { fresh.releaseWritersAfterOpen() }   // a remap shares the caller's lock
        for slot in keptPins where slot < records.count {
            records[slot].pinned = true
            pinnedSlots.insert(slot)
        }
        fileCheckInterval = interval
        unpublishedHits = hits
    }
}
