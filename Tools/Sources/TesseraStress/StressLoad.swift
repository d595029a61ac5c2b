import Foundation
import Synchronization
import Tessera
import TesseraTestSupport

/// `TesseraStress --load --dir D [--seconds S | --operations N] [--tasks T]`: T tasks hammer two
/// shared tables (a small bgra32 one and a gray8 one) with lookups, stores and deletes, holding
/// some images for a while, for S seconds or N operations per task. Invariants checked throughout:
/// every hit and every stored image holds exactly the pattern for its ids, and each table stays
/// within its maximum count. Once a second (or at the end) it prints
/// `load t=SECONDS rss=MB ops=N hits=H stores=S deletes=D full=F entries=E wrong=W` and, at the
/// end, runs ``ImageTable/verify()`` on both tables. Exits 2 on any violation.
struct StressLoad {
    let directory: URL
    let seconds: Double
    let operationsPerTask: Int
    let tasks: Int

    static let formats = [
        ImageFormat(name: "load-thumbs", style: .bgra32, size: PixelSize(width: 48, height: 48), maximumCount: 64),
        ImageFormat(name: "load-tiny", style: .gray8, size: PixelSize(width: 16, height: 16), maximumCount: 32),
    ]

    /// Counters shared by the tasks.
    final class Counters: Sendable {
        let ops = Atomic<Int>(0), hits = Atomic<Int>(0), stores = Atomic<Int>(0), deletes = Atomic<Int>(0)
        let full = Atomic<Int>(0), wrong = Atomic<Int>(0), finished = Atomic<Int>(0)
    }

    func run() async throws -> Bool {
        let tables = try Self.formats.map { try ImageTable(format: $0, directory: directory) }
        let counters = Counters()
        let start = ContinuousClock.now
        let deadline = seconds > 0 ? start + .milliseconds(Int(seconds * 1000)) : nil
        let perTask = operationsPerTask
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<tasks {
                group.addTask {
                    await Self.work(worker: worker, tables: tables, counters: counters, deadline: deadline, operations: perTask)
                    counters.finished.add(1, ordering: .relaxed)
                }
            }
            if seconds > 0 {
                group.addTask {
                    var next = start + .seconds(1)
                    while counters.finished.load(ordering: .relaxed) < tasks {
                        try? await Task.sleep(until: next, clock: .continuous)
                        next += .seconds(1)
                        Self.report(start: start, tables: tables, counters: counters)
                    }
                }
            }
        }
        Self.report(start: start, tables: tables, counters: counters)
        var clean = counters.wrong.load(ordering: .relaxed) == 0
        for table in tables {
            let verification = table.verify()
            say("verify \(table.format.name): \(verification)")
            clean = clean && verification.isClean && table.usage.entryCount <= table.format.maximumCount
        }
        return clean
    }

    private static func work(worker: Int, tables: [ImageTable], counters: Counters, deadline: ContinuousClock.Instant?,
                             operations: Int) async {
        var random = SplitMix(state: UInt64(worker) &* 0x1234_5678_9ABC_DEF1 &+ UInt64(getpid()))
        var held: [TableImage] = []
        var n = 0
        while true {
            n += 1
            if let deadline { if n % 64 == 0, ContinuousClock.now >= deadline { break } } else if n > operations { break }
            let table = tables[random.next(tables.count)]
            let k = random.next(table.format.maximumCount * 3 / 2)
            let entity = StressPattern.entityID(k)
            switch random.next(10) {
            case 0:
                table.delete(entityID: entity)
                counters.deletes.add(1, ordering: .relaxed)
            case 1...5:
                if let image = table.image(for: entity) {
                    counters.hits.add(1, ordering: .relaxed)
                    if image.entityID != entity || !isExact(image) { counters.wrong.add(1, ordering: .relaxed) }
                    if random.next(8) == 0 { if held.count < 3 { held.append(image) } else { held[random.next(3)] = image } }
                }
            default:
                let source = StressPattern.sourceID(entity: k, serial: UInt64(worker) << 40 | UInt64(n))
                do {
                    let image = try table.store(entityID: entity, sourceID: source) { fill($0, entity: entity, source: source) }
                    counters.stores.add(1, ordering: .relaxed)
                    if !isExact(image) { counters.wrong.add(1, ordering: .relaxed) }
                } catch {
                    counters.full.add(1, ordering: .relaxed)   // every slot held by live images: allowed, typed
                    if case .storage(.allEntriesInUse) = (error as? TesseraError)?.reason {} else { counters.wrong.add(1, ordering: .relaxed) }
                }
            }
            if n % 97 == 0 { held.removeAll() }
            if n % 256 == 0 { await Task.yield() }   // let the once-a-second report run on a busy pool
            counters.ops.add(1, ordering: .relaxed)
        }
        for image in held where !isExact(image) { counters.wrong.add(1, ordering: .relaxed) }
    }

    /// The stress pattern, for any pixel style (it fills whole 8-byte words; every row stride here is a multiple of 64).
    static func fill(_ view: MutableBitmapView, entity: UUID, source: UUID) { StressPattern.fill(view, entity: entity, source: source) }

    static func isExact(_ image: TableImage) -> Bool { StressPattern.isExact(image) }

    private static func report(start: ContinuousClock.Instant, tables: [ImageTable], counters: Counters) {
        let elapsed = ContinuousClock.now - start
        let t = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let entries = tables.map(\.usage.entryCount).reduce(0, +)
        if tables.contains(where: { $0.usage.entryCount > $0.format.maximumCount }) { counters.wrong.add(1, ordering: .relaxed) }
        say(String(format: "load t=%.1f rss=%.1fMB ops=%d hits=%d stores=%d deletes=%d full=%d entries=%d wrong=%d", t,
                   Double(residentBytes()) / 1_048_576, counters.ops.load(ordering: .relaxed), counters.hits.load(ordering: .relaxed),
                   counters.stores.load(ordering: .relaxed), counters.deletes.load(ordering: .relaxed),
                   counters.full.load(ordering: .relaxed), entries, counters.wrong.load(ordering: .relaxed)))
    }

    /// Resident set size from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}
