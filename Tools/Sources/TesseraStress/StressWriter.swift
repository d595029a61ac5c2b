import Foundation
import Tessera
import TesseraTestSupport

/// The writer half of the crash test: stores, looks up and deletes entries of the stress table
/// until killed (or for `count` operations), journalling what it does so that ``StressVerifier``
/// can tell which entries must have survived.
///
/// Journal lines, each one unbuffered `write(2)` to a file opened with `O_APPEND` (so everything
/// written before a SIGKILL is in the file):
/// - `b K SERIAL` before storing entity K with source serial SERIAL, `c` once that store returned;
/// - `x K` before deleting entity K, `c` once the delete returned;
/// - `l K` after a lookup of K that hit (it made K the most recently used entry).
struct StressWriter {
    let table: ImageTable
    var random: SplitMix
    /// The journal descriptor, or -1 for none.
    let journal: Int32

    /// Runs `count` operations (0 = until killed), printing "progress N" before every `every`-th store.
    /// Returns false if a lookup returned wrong pixels.
    mutating func run(count: Int, every: Int) throws -> Bool {
        var serial = UInt64(Date().timeIntervalSince1970 * 1000) << 16   // distinct across runs
        var stores = 0
        var operation = 0
        while count == 0 || operation < count {
            operation += 1
            let k = random.next(StressPattern.entityCount)
            let entity = StressPattern.entityID(k)
            switch random.next(10) {
            case 0:
                note("x \(k)")
                table.delete(entityID: entity)
                note("c")
            case 1, 2:
                if let image = table.image(for: entity) {
                    if !StressPattern.isExact(image) { say("wrong pixels for \(entity)"); return false }
                    note("l \(k)")
                }
            default:
                serial += 1
                let source = StressPattern.sourceID(entity: k, serial: serial)
                stores += 1
                // Announce the store *before* making it, so a parent that kills on reading this line
                // tends to land inside the store (mostly inside the drawing closure).
                if stores % every == 0 { say("progress \(stores)") }
                note("b \(k) \(serial)")
                try table.store(entityID: entity, sourceID: source) { StressPattern.fill($0, entity: entity, source: source) }
                note("c")
            }
        }
        return true
    }

    private func note(_ line: String) {
        if journal >= 0 { say(line, to: journal) }
    }
}
