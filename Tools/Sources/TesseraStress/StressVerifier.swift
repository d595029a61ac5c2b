import Foundation
import Tessera
import TesseraTestSupport
@_spi(Internal) import TesseraTables

/// The checking half of the crash test (`TesseraStress --verify --dir D --journal J`), run after
/// every SIGKILL of the writer:
///
/// 1. Builds the expected contents: the baseline `J.baseline` (what the previous verification
///    found, most recently used first) plus the journal's completed operations (``StressModel``).
///    An operation begun but not completed (`b`/`x` without `c`) may or may not have happened.
/// 2. Opens the table and reads every entry, least recently used first (which keeps the
///    persisted recency order), checking each byte against the pattern for its ids.
/// 3. Runs ``ImageTable/verify()``.
/// 4. Compares: an expected entry that is missing, and not explained by the interrupted
///    operation (its own entity, or the entry its store would evict), is **lost**; an entry with a
///    source other than the expected one or the interrupted store's is **stale**; an entry that
///    should not exist is **resurrected**.
/// 5. Writes the entries found as the new baseline and empties the journal.
///
/// Prints one line, `verify committed=C expected=E present=P lost=L explained=X inflight=I stale=S
/// resurrected=R wrong=W damaged=D` (C: stores the
/// writer completed since the last verification), and exits 2 if anything but `lost`/`explained` is non-zero
/// (lost entries are reported, and the crash test's summary totals them).
struct StressVerifier {
    let directory: URL
    let journalPath: String

    var baselinePath: String { journalPath + ".baseline" }

    func run() throws -> Bool {
        var model = StressModel(capacity: StressPattern.format.maximumCount)
        for line in lines(baselinePath) {
            let f = line.split(separator: " ")
            if f.count == 2, let k = Int(f[0]), let s = UInt64(f[1]) { model.appendLeastRecent(k, serial: s) }
        }
        var pending: (op: Character, k: Int, serial: UInt64)?
        var committed = 0
        for line in lines(journalPath) {
            let f = line.split(separator: " ")
            guard let op = f.first?.first else { continue }
            switch op {
            case "b": if f.count == 3, let k = Int(f[1]), let s = UInt64(f[2]) { pending = ("b", k, s) }
            case "x": if f.count == 2, let k = Int(f[1]) { pending = ("x", k, 0) }
            case "c":
                if let p = pending {
                    if p.op == "b" { model.store(p.k, serial: p.serial); committed += 1 } else { model.delete(p.k) }
                }
                pending = nil
            case "l": if f.count == 2, let k = Int(f[1]) { model.touch(k) }
            default: break   // a line cut short by the kill
            }
        }

        let table = try ImageTable(format: StressPattern.format, directory: directory)
        let persistedOrder = table.recencyOrder   // most recent first, as the file's access times say
        var found: [Int: UInt64] = [:], foundOrder: [Int] = [], foreign = 0, wrong = 0
        for entity in persistedOrder.reversed() {
            guard let k = StressPattern.entityIndex(entity), let image = table.image(for: entity) else { foreign += 1; continue }
            guard StressPattern.sourceEntityIndex(image.sourceID) == k, StressPattern.isExact(image) else { wrong += 1; continue }
            found[k] = serial(of: image.sourceID, entity: k, candidates: model, pending: pending)
            foundOrder.insert(k, at: 0)
        }
        let report = table.verify()

        let inflightStore = pending?.op == "b" ? pending : nil
        let victim = inflightStore.flatMap { p in model.contains(p.k) ? nil : model.victim }
        var lost = 0, explained = 0, stale = 0, resurrected = 0, inflight = 0
        for k in model.order {
            guard let got = found[k] else {
                if k == pending?.k || k == victim { explained += 1 } else { lost += 1 }
                continue
            }
            if got == model.serials[k] { continue }
            if let p = inflightStore, p.k == k, got == p.serial { inflight += 1 } else { stale += 1 }
        }
        for (k, got) in found where !model.contains(k) {
            if let p = inflightStore, p.k == k, got == p.serial { inflight += 1 } else { resurrected += 1 }
        }

        let baseline = foundOrder.compactMap { k in found[k].map { "\(k) \($0)" } }.joined(separator: "\n")
        try Data((baseline.isEmpty ? "" : baseline + "\n").utf8).write(to: URL(fileURLWithPath: baselinePath))
        try Data().write(to: URL(fileURLWithPath: journalPath))
        let damaged = report.damaged.count + foreign
        say("verify committed=\(committed) expected=\(model.count) present=\(found.count) lost=\(lost) explained=\(explained) inflight=\(inflight) "
            + "stale=\(stale) resurrected=\(resurrected) wrong=\(wrong) damaged=\(damaged)")
        for d in report.damaged { say("  damaged: \(d)") }
        return stale == 0 && resurrected == 0 && wrong == 0 && damaged == 0
    }

    /// The serial behind `source` among the ones it can be (expected, in flight); `UInt64.max` if none
    /// matches (the entry is then counted stale or resurrected).
    private func serial(of source: UUID, entity k: Int, candidates model: StressModel,
                        pending: (op: Character, k: Int, serial: UInt64)?) -> UInt64 {
        if let s = model.serials[k], StressPattern.sourceID(entity: k, serial: s) == source { return s }
        if let p = pending, p.op == "b", p.k == k, StressPattern.sourceID(entity: k, serial: p.serial) == source { return p.serial }
        return UInt64.max
    }

    private func lines(_ path: String) -> [Substring] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }
}
