import Foundation
import Tessera
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

/// The parallel half of the crash test: `threads` threads store into one stress table at once
/// (`TesseraStress --parallel --dir D --threads T --journal J`) until killed. Thread `t` owns the
/// entities `k` with `k % T == t`, so the operations on one entity are sequential and its journal
/// lines are in order, while the table sees overlapping stores, evictions and hits from every thread.
///
/// Several processes share the table the same way (`--lanes L --lane T0`): thread `t` of this process
/// is lane `T0 + t` of `L` and owns the entities `k % L == T0 + t`; all of them append to one journal
/// (each line is one `O_APPEND` write, so lines never interleave).
///
/// Journal (one `write(2)` per line, `O_APPEND`, never emptied): `b K SERIAL` before a store,
/// `c K SERIAL` after it returned.
struct StressParallelWriter {
    let table: ImageTable
    let threads: Int
    let seed: UInt64
    let journal: Int32
    /// Thread 0 prints `progress N` before every `every`-th of its stores.
    let every: Int
    /// This process's first lane and the lanes of every process sharing the table.
    var firstLane = 0
    var lanes: Int { max(totalLanes, firstLane + threads) }
    var totalLanes = 0
    /// The threads stop (and the process reports) once a file exists at this path.
    var stopFile: String?

    /// Runs until killed (or `count` stores per thread when `count > 0`). Returns false if a hit or a
    /// stored image had wrong pixels.
    func run(count: Int) -> Bool {
        let wrong = LockedValue(0)
        let group = DispatchGroup()
        for t in 0..<threads {
            group.enter()
            Thread { [table, journal, seed, every, firstLane, lanes, stopFile] in
                defer { group.leave() }
                var random = SplitMix(state: seed &+ UInt64(t) &* 0x9E37_79B9)
                // Milliseconds since 1970, the thread and a store count: distinct across runs and threads.
                let lane = firstLane + t
                var serial = (UInt64(Date().timeIntervalSince1970 * 1000) & (1 << 40 - 1)) << 20 | UInt64(lane & 0xF) << 16
                let mine = Array(stride(from: lane, to: StressPattern.entityCount, by: lanes))
                var stores = 0
                while count == 0 || stores < count {
                    if let stopFile, access(stopFile, F_OK) == 0 { break }
                    let k = mine[random.next(mine.count)]
                    let entity = StressPattern.entityID(k)
                    if random.next(4) == 0 {
                        if let image = table.image(for: entity), !StressPattern.isExact(image) { wrong.withLock { $0 += 1 } }
                        continue
                    }
                    serial += 1
                    let source = StressPattern.sourceID(entity: k, serial: serial)
                    if t == 0, (stores + 1) % every == 0 { say("progress \(stores + 1)") }
                    say("b \(k) \(serial)", to: journal)
                    do {
                        let image = try table.store(entityID: entity, sourceID: source) { StressPattern.fill($0, entity: entity, source: source) }
                        if !StressPattern.isExact(image) { wrong.withLock { $0 += 1 } }
                        say("c \(k) \(serial)", to: journal)
                    } catch {
                        say("store failed: \(error)")   // every slot referenced (allowed): try again
                    }
                    stores += 1
                }
            }.start()
        }
        group.wait()
        return wrong.withLock { $0 } == 0
    }
}

/// Checks the parallel table after a SIGKILL (`TesseraStress --parallel-verify --dir D --journal J`):
///
/// - every entry is byte-exact for its ids (**wrong** otherwise) and its source is the entity's last
///   completed store or a store begun after it (**stale** otherwise: an older version came back);
/// - an entity whose last journal line is a completed store and whose entry is missing was evicted
///   by another thread's store or lost; the table never holds more than its limit (**over**), and it
///   holds at least as many entries as the previous verification found, less one per thread (each
///   thread's interrupted store may have dropped one entry): fewer is **lost**;
/// - ``ImageTable/verify()`` is clean (**damaged** otherwise).
///
/// With `--live-lanes L0,L1,… --lanes L`, the writers of those lanes (entities `k % L` in the list) are
/// still storing while this runs: their entries may show a store begun after the journal was read, so
/// for them only a version the journal shows superseded counts as **stale**.
///
/// Prints `parallel-verify committed=C present=P inflight=I stale=S wrong=W damaged=D over=O lost=L` and
/// exits 2 if any of stale, wrong, damaged, over or lost is non-zero. The count it found is kept in
/// `J.count` for the next round.
struct StressParallelVerifier {
    let directory: URL
    let journalPath: String
    let threads: Int
    /// Lanes whose writers still run, and the lane count.
    var liveLanes: Set<Int> = []
    var lanes = 1

    func run() throws -> Bool {
        var completed: [Int: UInt64] = [:], begun: [Int: UInt64] = [:]
        var superseded: [Int: Set<UInt64>] = [:], sinceCompleted: [Int: [UInt64]] = [:]
        var committed = 0
        let text = FileManager.default.contents(atPath: journalPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 3, let k = Int(f[1]), let s = UInt64(f[2]) else { continue }   // a line cut short by the kill
            if f[0] == "b" {
                begun[k] = s
                sinceCompleted[k, default: []].append(s)
            }
            if f[0] == "c" {
                if let previous = completed[k] { superseded[k, default: []].insert(previous) }
                superseded[k, default: []].formUnion(sinceCompleted[k, default: []].filter { $0 != s })
                sinceCompleted[k] = []
                completed[k] = s
                committed += 1
            }
        }
        let countPath = journalPath + ".count"
        let previous = FileManager.default.contents(atPath: countPath).flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0

        let table = try ImageTable(format: StressPattern.format, directory: directory)
        var present = 0, inflight = 0, stale = 0, wrong = 0, foreign = 0, gone = 0
        for entity in table.entityIDs {
            guard let k = StressPattern.entityIndex(entity) else { foreign += 1; continue }
            present += 1
            guard let image = table.image(for: entity) else {
                // Listed, then evicted or replaced by a writer that still runs before it was looked up.
                if liveLanes.isEmpty { foreign += 1 } else { gone += 1 }
                continue
            }
            guard StressPattern.sourceEntityIndex(image.sourceID) == k else { foreign += 1; continue }
            if !StressPattern.isExact(image) { wrong += 1; continue }
            if liveLanes.contains(k % lanes) {
                let old = superseded[k, default: []].contains { image.sourceID == StressPattern.sourceID(entity: k, serial: $0) }
                if old { stale += 1 }
                continue
            }
            if let s = completed[k], image.sourceID == StressPattern.sourceID(entity: k, serial: s) { continue }
            // Only a store begun after the last completed one (the one the kill interrupted) may show instead.
            if let b = begun[k], b != completed[k], image.sourceID == StressPattern.sourceID(entity: k, serial: b) {
                inflight += 1
            } else {
                stale += 1
            }
        }
        let report = table.verify()
        let over = max(0, present - StressPattern.format.maximumCount)
        let lost = max(0, (min(previous, StressPattern.format.maximumCount) - threads) - present)
        try Data(String(present).utf8).write(to: URL(fileURLWithPath: countPath))
        let damaged = report.damaged.count + foreign
        say("parallel-verify committed=\(committed) present=\(present) inflight=\(inflight) stale=\(stale) wrong=\(wrong) "
            + "damaged=\(damaged) over=\(over) lost=\(lost)" + (liveLanes.isEmpty ? "" : " gone=\(gone)"))
        for d in report.damaged { say("  damaged: \(d)") }
        return stale == 0 && wrong == 0 && damaged == 0 && over == 0 && lost == 0
    }
}
