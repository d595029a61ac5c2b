import TesseraImaging
import CTesseraFileLocks
import CTesseraGuard
import Foundation
import Synchronization

/// What the processes sharing one table file tell each other: a small file beside the table
/// (`<table file>.shared`, mapped `MAP_SHARED` by every participant), holding nothing that must
/// survive the last participant: it is rebuilt, zeroed in place, by the first process that opens the
/// table while nobody else has it open.
///
/// ## Layout
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `"TSRSHRD1"` (written last when the file is rebuilt) |
/// | 8 | 8 | the table's maximum count |
/// | 16 | 8 | the table file's device, 24 its inode: which file these facts are about |
/// | 40 | 8 | journal sequence (atomic): records appended so far |
/// | 48 | 8 | logical clock (atomic): generations and access times of every participant |
/// | 56 | 4 | sweep requests (atomic, a futex word): bumped by a writer that found entries pinned by other processes |
/// | 60 | 4 | sweeps done (atomic, a futex word): bumped by a participant after each sweep it was asked for |
/// | 128 | 4 × 64 | per participant: the last sweep request it answered |
/// | 4096 | 16 KiB | the journal: a ring of ``journalCapacity`` slot numbers (UInt32) |
/// | ``ownersOffset`` | `maximumCount` | per slot: the participant that reserved it for a store, plus one; 0 for none |
/// | ``pinsOffset`` | `8 × maximumCount` | per slot: one bit per participant that may hold a live image of it |
///
/// For the server's default table of 10,000 entries that is 20,480 + 12,288 (owners, page-rounded) +
/// 80,000 bytes ≈ 110 KiB, allocated once when the file is rebuilt (so no later write needs a disk
/// block: a full disk cannot turn a pin into `SIGBUS`).
///
/// `@unchecked Sendable` is safe because every stored property is immutable after `init`; the mapped
/// words are only accessed through atomics (or, for the journal ring, under the writers' lock and
/// read back with a sequence check, see ``ImageTable``'s "Sharing between processes").
final class TableSharedRegion: @unchecked Sendable {
    static let magic: UInt64 = 0x3144_5248_5352_5354   // "TSRSHRD1", little-endian
    /// Slot numbers the journal ring holds: a participant that fell further behind rescans every header.
    static let journalCapacity = 4096
    static let journalOffset = 4096
    static let ownersOffset = journalOffset + journalCapacity * 4

    let fd: Int32
    let base: UnsafeMutableRawPointer
    let length: Int
    let pinsOffset: Int
    /// The mapping's entry in the SIGBUS guard: a region truncated by another program reads zeros.
    private let guardHandle: Int32

    private init(fd: Int32, base: UnsafeMutableRawPointer, length: Int, pinsOffset: Int) {
        self.fd = fd
        self.base = base
        self.length = length
        self.pinsOffset = pinsOffset
        guardHandle = tessera_guard_register(base, length)
    }

    deinit {
        tessera_guard_unregister(guardHandle)
        munmap(base, length)
        close(fd)
    }

    /// The region's size for `maximumCount` slots, and where the pins start.
    static func geometry(maximumCount: Int) -> (length: Int, pinsOffset: Int) {
        let pins = ImageFormat.roundToPage(ownersOffset + maximumCount)
        return (ImageFormat.roundToPage(pins + 8 * maximumCount), pins)
    }

    /// Opens and maps `<tablePath>.shared`. Call with the table's writers' lock held. When `alone`
    /// (no other participant has the table open), or when the file describes another table, it is
    /// rebuilt: zeroed in place, given its blocks, and stamped for this table file. A mismatch while
    /// others participate means they use another file of that name: ``/TesseraCore/StorageFailure/locked(path:)``.
    static func open(tablePath: String, table: stat, maximumCount: Int, mode: mode_t, alone: Bool) throws(TesseraError) -> TableSharedRegion {
        let path = tablePath + ".shared"
        let fd = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode)
        guard fd >= 0 else { throw TesseraError(.io(operation: "open", path: path, errno: errno)) }
        func fail(_ operation: String, _ code: Int32 = errno) -> TesseraError {
            close(fd)
            return TesseraError(.io(operation: operation, path: path, errno: code))
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw fail("fstat") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw fail("open (not a regular file)", EINVAL) }
        let (length, pinsOffset) = geometry(maximumCount: maximumCount)
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), base != MAP_FAILED else { throw fail("mmap") }
        let region = TableSharedRegion(fd: fd, base: base, length: length, pinsOffset: pinsOffset)
        let current = Int(st.st_size) >= length
            && base.load(as: UInt64.self) == magic
            && base.load(fromByteOffset: 8, as: UInt64.self) == UInt64(maximumCount)
            && base.load(fromByteOffset: 16, as: UInt64.self) == UInt64(table.st_dev)
            && base.load(fromByteOffset: 24, as: UInt64.self) == UInt64(table.st_ino)
        if current && !alone { return region }
        guard alone else { throw TesseraError(.storage(.locked(path: tablePath))) }
        try region.rebuild(path: path, maximumCount: maximumCount, table: table)
        return region
    }

    /// Zeroes the region in place (never shorter: a participant that just left may still read its old
    /// mapping, and a truncated page would raise `SIGBUS` there), gives it its blocks, and stamps it.
    private func rebuild(path: String, maximumCount: Int, table: stat) throws(TesseraError) {
        let code = tessera_zero_file_range(fd, Int64(length))
        guard code == 0 else { throw TesseraError(.io(operation: "fallocate", path: path, errno: code)) }
        base.storeBytes(of: UInt64(maximumCount), toByteOffset: 8, as: UInt64.self)
        base.storeBytes(of: UInt64(table.st_dev), toByteOffset: 16, as: UInt64.self)
        base.storeBytes(of: UInt64(table.st_ino), toByteOffset: 24, as: UInt64.self)
        atomic(40).pointee.store(0, ordering: .relaxed)
        atomic(48).pointee.store(0, ordering: .relaxed)
        word(56).pointee.store(0, ordering: .relaxed)
        word(60).pointee.store(0, ordering: .relaxed)
        for p in 0..<TableMapping.participantLimit { word(128 + 4 * p).pointee.store(0, ordering: .relaxed) }
        atomic(0).pointee.store(Self.magic, ordering: .sequentiallyConsistent)
    }

    private func atomic(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (base + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    // MARK: Journal, clock, sweep requests

    /// Journal records appended so far (acquire: the ring entries they count are visible).
    var sequence: UInt64 { atomic(40).pointee.load(ordering: .acquiring) }

    /// The slot number of journal record `n` (valid while `sequence - n <= journalCapacity`).
    func journalEntry(_ n: UInt64) -> Int {
        Int((base + Self.journalOffset + Int(n % UInt64(Self.journalCapacity)) * 4).load(as: UInt32.self))
    }

    /// Appends `slot` to the journal and returns the new sequence. Writers' lock held: the ring entry is
    /// written before the sequence that publishes it, and the store is sequentially consistent: a writer
    /// that discarded an entry publishes that before it looks at the slot's pins (see ``ImageTable``).
    @discardableResult
    func append(_ slot: Int) -> UInt64 {
        let n = atomic(40).pointee.load(ordering: .relaxed)
        (base + Self.journalOffset + Int(n % UInt64(Self.journalCapacity)) * 4).storeBytes(of: UInt32(slot), as: UInt32.self)
        atomic(40).pointee.store(n &+ 1, ordering: .sequentiallyConsistent)
        return n &+ 1
    }

    /// The shared logical clock.
    var clock: UInt64 { atomic(48).pointee.load(ordering: .relaxed) }

    /// Moves the clock to at least `value + 1` and returns the new value (writers' lock held).
    func advanceClock(past value: UInt64) -> UInt64 {
        let next = max(clock, value) + 1
        atomic(48).pointee.store(next, ordering: .relaxed)
        return next
    }

    private func word(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt32>> {
        (base + offset).assumingMemoryBound(to: Atomic<UInt32>.self)
    }

    private func rawWord(_ offset: Int) -> UnsafeMutablePointer<UInt32> {
        (base + offset).assumingMemoryBound(to: UInt32.self)
    }

    /// Sweep requests so far.
    var sweepRequests: UInt32 { Self.sweepRequests(at: base) }

    /// The sweep requests of the region mapped at `base` (for the hit path, without a reference to the region).
    @inline(__always)
    static func sweepRequests(at base: UnsafeMutableRawPointer) -> UInt32 {
        (base + 56).assumingMemoryBound(to: Atomic<UInt32>.self).pointee.load(ordering: .relaxed)
    }

    /// The journal sequence of the region mapped at `base`.
    @inline(__always)
    static func sequence(at base: UnsafeMutableRawPointer) -> UInt64 {
        (base + 40).assumingMemoryBound(to: Atomic<UInt64>.self).pointee.load(ordering: .sequentiallyConsistent)
    }

    /// Asks every participant to release the pins of images it no longer holds, waking their sweepers;
    /// returns the request's number.
    func requestSweep() -> UInt32 {
        let request = word(56).pointee.add(1, ordering: .sequentiallyConsistent).newValue
        tessera_word_wake(rawWord(56))
        return request
    }

    /// Records that `participant` has answered sweep requests up to `request`, waking waiting writers.
    func acknowledgeSweep(_ participant: Int, request: UInt32) {
        word(128 + 4 * participant).pointee.store(request, ordering: .releasing)
        word(60).pointee.add(1, ordering: .sequentiallyConsistent)
        tessera_word_wake(rawWord(60))
    }

    /// The last request `participant` answered.
    func answeredSweep(_ participant: Int) -> UInt32 { word(128 + 4 * participant).pointee.load(ordering: .acquiring) }

    /// Waits until every participant of `participants` (a bit mask) that `isAlive` answered sweep
    /// `request`, or until `timeout` passes. Returns whether they all did.
    func waitForSweeps(_ request: UInt32, of participants: UInt64, timeout: Duration, isAlive: (Int) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let done = word(60).pointee.load(ordering: .acquiring)
            var pending = participants, all = true
            while pending != 0 {
                let p = pending.trailingZeroBitCount
                pending &= pending - 1
                if Int32(bitPattern: answeredSweep(p) &- request) < 0, isAlive(p) { all = false }
            }
            if all { return true }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            tessera_word_wait(rawWord(60), done, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// Waits (at most `timeout`) for the sweep request count to differ from `seen`.
    func waitForSweepRequest(after seen: UInt32, timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        tessera_word_wait(rawWord(56), seen, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Wakes every sweeper (of every process) waiting on the request word, e.g. for one to stop.
    func wakeSweepers() { tessera_word_wake(rawWord(56)) }

    // MARK: Owners and pins

    private func ownerByte(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt8>> {
        (base + Self.ownersOffset + slot).assumingMemoryBound(to: Atomic<UInt8>.self)
    }

    /// The participant that reserved `slot` for a store, if any.
    func owner(of slot: Int) -> Int? {
        let byte = ownerByte(slot).pointee.load(ordering: .acquiring)
        return byte == 0 ? nil : Int(byte) - 1
    }

    func setOwner(_ slot: Int, _ participant: Int?) {
        ownerByte(slot).pointee.store(participant.map { UInt8($0 + 1) } ?? 0, ordering: .releasing)
    }

    private func pinWord(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (base + pinsOffset + slot * 8).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// The participants that may hold a live image of `slot`, as a bit mask.
    func pins(of slot: Int) -> UInt64 { pinWord(slot).pointee.load(ordering: .sequentiallyConsistent) }

    /// Sets `participant`'s pin bit (sequentially consistent: ordered before the reader's following
    /// load of the slot's commit word, see "Sharing between processes").
    func pin(_ slot: Int, _ participant: Int) {
        pinWord(slot).pointee.bitwiseOr(1 << UInt64(participant), ordering: .sequentiallyConsistent)
    }

    func unpin(_ slot: Int, _ participant: Int) {
        pinWord(slot).pointee.bitwiseAnd(~(1 << UInt64(participant)), ordering: .sequentiallyConsistent)
    }

    /// Clears what a dead participant left: its pins and reservations among the first `slots` slots.
    func clearLeftovers(of participant: Int, slots: Int) {
        for slot in 0..<slots {
            if pins(of: slot) & (1 << UInt64(participant)) != 0 { unpin(slot, participant) }
            if owner(of: slot) == participant { setOwner(slot, nil) }
        }
    }
}
