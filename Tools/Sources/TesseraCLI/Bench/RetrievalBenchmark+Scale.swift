import ArgumentParser
import CHeapControl
import Foundation
import Tessera
import TesseraMeasurement

extension RetrievalBenchmark {
    /// Section 6, cost as a table grows: a table of `--entries` entries beside one of `--scale-entries`, made,
    /// opened and hit in one run, so that each figure of the large table stands beside the small one's.
    struct ScaleRows: Codable {
        /// The entries of the small and of the large table (100×100 bgra32 each).
        var entries: [Int]
        /// Opening each table, which reads every entry's record (median of 5 openings, after one).
        var openMilliseconds: [Double]
        /// A random hit in each (median of batches; the two tables' batches alternate).
        var hitNanoseconds: [Double]
        /// What opening each table added to the process's resident memory: its records and maps, none of
        /// its pixels (no page of them is read by opening). A reading of the whole process: for a small
        /// table it may come out below zero when something else in the process gave pages back meanwhile.
        var residentAfterOpenBytes: [Int]
        /// What the hits then added: the pixel pages the random hits read (clean mapped file pages).
        var residentAfterHitsBytes: [Int]
        /// Large ÷ small, for the open time, the hit and the memory after opening.
        var openRatio: Double
        var hitRatio: Double
        var residentAfterOpenRatio: Double

        var rows: [[String]] {
            func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
            return [
                ["open", String(format: "%.2f ms", openMilliseconds[0]), String(format: "%.2f ms", openMilliseconds[1]), String(format: "%.1fx", openRatio)],
                ["random hit", String(format: "%.0f ns", hitNanoseconds[0]), String(format: "%.0f ns", hitNanoseconds[1]), String(format: "%.2fx", hitRatio)],
                ["resident after open", mb(residentAfterOpenBytes[0]), mb(residentAfterOpenBytes[1]), String(format: "%.1fx", residentAfterOpenRatio)],
                ["resident added by the hits", mb(residentAfterHitsBytes[0]), mb(residentAfterHitsBytes[1]), ""],
            ]
        }
    }

    /// Fills a table of `small` and one of `large` entries of `picture` in `directory`, closes both, then
    /// opens each (timed, and its resident memory measured) and hits both in alternating batches of `batch`
    /// random hits.
    static func scaleRows(small: Int, large: Int, picture: Bitmap, batch: Int, batches: Int, directory: URL) throws -> ScaleRows {
        let counts = [small, large]
        let formats = counts.map { ImageFormat(name: "scale-\($0)", style: .bgra32, size: picture.layout.size, maximumCount: $0) }
        let ids = counts.map { count in (0..<count).map { UUID(hashing: "scale-\($0)") } }
        for (format, ids) in zip(formats, ids) {
            let table = try ImageTable(format: format, directory: directory)
            var progress = ProgressBar(total: ids.count, label: "filling \(ids.count) entries")
            for (i, id) in ids.enumerated() {
                if i % 1000 == 0 { progress.update(i) }
                try table.store(entityID: id, sourceID: id) { try copy(picture, into: $0) }
            }
            progress.finish()
            try table.flush(synchronously: true)
        }
        let open = try formats.map { format in
            Summary(try Stopwatch.samples(repetitions: 5, warmup: 1) { _ = try ImageTable(format: format, directory: directory) }).median * 1000
        }
        var tables: [ImageTable] = []
        var afterOpen: [Int] = []
        // Each reading counts what its step added, not what the heap gave back meanwhile: free heap
        // pages go back to the system before it (`malloc_trim`), and glibc's own trimming is off from
        // here on (-1), so a free inside the step cannot return the pages of the blocks the fills freed.
        _ = tessera_heap_set_trim_threshold(-1)
        for format in formats {
            _ = tessera_heap_trim()
            guard let before = MemoryUsage.current() else { throw ValidationError("/proc/self/smaps_rollup is unavailable") }
            tables.append(try ImageTable(format: format, directory: directory))
            guard let after = MemoryUsage.current() else { throw ValidationError("/proc/self/smaps_rollup is unavailable") }
            afterOpen.append(after.delta(since: before).residentBytes)
        }
        _ = tessera_heap_trim()
        guard let beforeHits = MemoryUsage.current() else { throw ValidationError("/proc/self/smaps_rollup is unavailable") }
        let orders = counts.map { randomOrder(count: batch, range: $0) }
        var sink: UInt8 = 0
        func hits(_ which: Int) throws {
            for i in orders[which] {
                guard let hit = tables[which].image(for: ids[which][i]) else { throw ValidationError("unexpected miss") }
                sink &+= hit.baseAddress.load(fromByteOffset: 0, as: UInt8.self)
            }
        }
        var middle: MemoryUsage?
        let (smallHit, largeHit) = try interleavedNanosecondsPerOp(batches: batches, batch: batch, {
            try hits(0)
            if middle == nil { middle = MemoryUsage.current() }   // after the small table's warm-up batch
        }, { try hits(1) })
        guard let afterHits = MemoryUsage.current(), let middle else { throw ValidationError("/proc/self/smaps_rollup is unavailable") }
        if sink == 42 { print("") }   // keep the reads
        // The warm-up batches run small, then large, before the timed ones: pages the small table's hits
        // read are those up to `middle`, the large one's those after it.
        let addedByHits = [middle.delta(since: beforeHits).residentBytes, afterHits.delta(since: middle).residentBytes]
        return ScaleRows(entries: counts, openMilliseconds: open, hitNanoseconds: [smallHit, largeHit],
                         residentAfterOpenBytes: afterOpen, residentAfterHitsBytes: addedByHits,
                         openRatio: open[1] / open[0], hitRatio: largeHit / smallHit,
                         residentAfterOpenRatio: Double(afterOpen[1]) / Double(max(afterOpen[0], 1)))
    }
}
