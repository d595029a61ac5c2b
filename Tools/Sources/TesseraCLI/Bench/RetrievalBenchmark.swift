import ArgumentParser
import Foundation
import Prometheus
import Synchronization
import Tessera
@_spi(Internal) import TesseraImaging
import TesseraMeasurement

/// `tessera bench retrieval [--json]`: what a table hit costs against decoding and against a dictionary.
struct RetrievalBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retrieval",
        abstract: "Table hit latency vs decoding the thumbnail from JPEG/PNG and vs a dictionary of decoded bitmaps; open time; memory.",
        discussion: """
        1. A 100x100 bgra32 table of --entries entries, its metrics on (a Prometheus registry, as in \
           `tessera serve`); hits by random entity id (each hit returns a view into the mapping and reads one \
           byte of it). Median ns per hit over --batches batches of --batch hits.
        2. The same 100x100 thumbnail decoded from its JPEG (q85) and PNG files (read + decode).
        3. A Mutex-guarded [UUID: Bitmap] of decoded thumbnails (the obvious in-memory alternative), the same \
           random ids. Its batches alternate with those of 1 (one of each in turn, which goes first switching \
           every round), so a change in the machine's load falls on both alike.
        3b. Concurrent hits: two threads hitting the table at once, without and then with a third thread
           storing new entries into the same table the whole time (ns per hit on each thread).
        3c. Processed URL requests (100x100 fill, one cache key per entry, at most --url-entries of them) through ImageManager's            cachedResponse(for:), answered from its memory cache and from its image table, each in batches            alternating with the dictionary's.
        4. Time to open a table holding --open-entries entries (8x8 gray8, one page each).
        5. Resident and private dirty memory before/after touching every page of a ~--large-table-mb table
           reopened from disk (the pages are clean mapped file pages: the kernel can drop them at will).
        6. With --scale-entries N: cost as a table grows, in one run. A 100x100 bgra32 table of --entries            entries and one of N are filled and closed; each is opened 5 times (median ms; opening reads every            entry's record), then opened for good (the resident memory that adds: records and maps, no pixels),            then both are hit at random in alternating batches (median ns per hit; each table's batches repeat            one random order, so the pages its warm-up batch reads are the resident memory its hits add).            Ratios large / small.
        """
    )

    @Option(help: "Entries in the hit-latency table.") var entries = 1000
    @Option(help: "Entries for the open-time measurement (0 skips it).") var openEntries = 100_000
    @Option(help: "Processed URL requests in section 3c: --entries, at most this many (their pixels are kept in the manager's memory and stored through its tables first).")
    var urlEntries = 1000
    @Option(help: "Size in MB of the table for the memory measurement (0 skips it).") var largeTableMb = 1024
    @Option(help: "A photograph for the thumbnail content (default: a MATE wallpaper when installed, else a synthetic gradient).")
    var image: String?
    @Option(help: "Entries of the large table of section 6, beside a table of --entries (0 skips it).") var scaleEntries = 0
    @Option(help: "Lookups per timed batch.") var batch = 100_000
    @Option(help: "Timed batches.") var batches = 9
    @Flag(help: "Print JSON.") var json = false

    struct Report: Codable {
        var entries: Int
        var tableHitNanoseconds: Double
        var tableHitsPerSecond: Double
        var dictionaryHitNanoseconds: Double
        /// tableHitNanoseconds / dictionaryHitNanoseconds.
        var tableHitToDictionaryRatio: Double
        /// Per-hit time on each of two threads hitting the table at once (median of batches).
        var concurrentHitNanoseconds: Double
        /// The same while a third thread stores into the table without pause.
        var concurrentHitWhileStoringNanoseconds: Double
        /// Stores the third thread completed during those batches.
        var storesDuringConcurrentHits: Int
        var jpegDecodeNanoseconds: Double
        var pngDecodeNanoseconds: Double
        var speedupOverJPEG: Double
        var speedupOverPNG: Double
        var openEntries: Int
        var openMilliseconds: Double?
        var largeTableBytes: Int?
        var memoryBeforeTouch: MemoryUsage?
        var memoryAfterTouch: MemoryUsage?
        /// Processed URL requests answered from memory and from a table (RetrievalBenchmark+URLRequests.swift).
        var urlRequests: URLRequestRows? = nil
        /// Section 6 (`--scale-entries`), absent without it.
        var scale: ScaleRows? = nil
    }

    func validate() throws {
        if scaleEntries < 0 { throw ValidationError("--scale-entries must be 0 (skip section 6) or more") }
    }

    func run() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-retrieval-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let size = PixelSize(width: 100, height: 100)
        let thumb = try Self.thumbnail(from: image, size: size)
        let jpeg = Data(try JPEGEncoder(quality: 85).encode(thumb)), png = Data(try PNGEncoder().encode(thumb))
        let jpegURL = scratch.appendingPathComponent("thumb.jpg"), pngURL = scratch.appendingPathComponent("thumb.png")
        try jpeg.write(to: jpegURL)
        try png.write(to: pngURL)

        // 1. Table hits.
        let storeIDs = (0..<64).map { UUID(hashing: "stored-\($0)") }
        let format = ImageFormat(name: "thumb", style: .bgra32, size: size, maximumCount: entries + storeIDs.count)
        let ids = (0..<entries).map { UUID(hashing: "entity-\($0)") }
        let source = UUID(hashing: "v1")
        var (tableHit, dictionaryHit) = (0.0, 0.0)
        var concurrent = (quiet: 0.0, storing: 0.0, stores: 0)
        do {
            let observability = Observability(metricsFactory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
            let table = try ImageTable(format: format, directory: scratch.appendingPathComponent("hits"), observability: observability)
            for id in ids { try table.store(entityID: id, sourceID: source) { view in try Self.copy(thumb, into: view) } }
            // 3. A dictionary of decoded bitmaps behind a mutex, its batches alternating with the table's. The
            // standard library's Mutex on purpose: the alternative measured is what an app would write.
            let dictionary = Mutex<[UUID: Bitmap]>(Dictionary(uniqueKeysWithValues: ids.map { ($0, thumb) }))
            let order = Self.randomOrder(count: batch, range: entries)
            var sink: UInt8 = 0
            (tableHit, dictionaryHit) = try Self.interleavedNanosecondsPerOp(batches: batches, batch: batch, {
                for i in order {
                    guard let hit = table.image(for: ids[i]) else { throw ValidationError("unexpected miss") }
                    sink &+= hit.baseAddress.load(fromByteOffset: 0, as: UInt8.self)
                }
            }, {
                for i in order {
                    guard let hit = dictionary.withLock({ $0[ids[i]] }) else { throw ValidationError("unexpected miss") }
                    sink &+= hit.withUnsafeBytes { $0[0] }
                }
            })
            if sink == 42 { print("") }   // keep the reads
            concurrent.quiet = Self.concurrentHits(table: table, ids: ids, batch: batch, batches: batches, storing: nil).nanoseconds
            let storing = Self.concurrentHits(table: table, ids: ids, batch: batch, batches: batches, storing: (storeIDs, source, thumb))
            concurrent.storing = storing.nanoseconds
            concurrent.stores = storing.stores
        }

        // 3c. Processed URL requests through ImageManager: memory cache and image table.
        let urlRequests = try Self.urlRequestRows(source: jpegURL, thumbnail: thumb, entries: min(entries, urlEntries), batch: batch, batches: batches,
                                                  directory: scratch.appendingPathComponent("urls"))

        // 2. Decoding the same thumbnail from its files.
        let decoder = ImageDecoder()
        let jpegDecode = Summary(try Stopwatch.samples(repetitions: 301) { _ = try decoder.decode(try Data(contentsOf: jpegURL)) }).median * 1e9
        let pngDecode = Summary(try Stopwatch.samples(repetitions: 301) { _ = try decoder.decode(try Data(contentsOf: pngURL)) }).median * 1e9

        // 4. Open time.
        var openMs: Double? = nil
        if openEntries > 0 { openMs = try Self.openTime(entries: openEntries, directory: scratch.appendingPathComponent("open")) }

        // 5. Memory after touching a large table.
        var large: (Int, MemoryUsage, MemoryUsage)? = nil
        if largeTableMb > 0 {
            large = try Self.touchLargeTable(megabytes: largeTableMb, picture: thumb, directory: scratch.appendingPathComponent("large"))
        }

        // 6. Cost as a table grows.
        var scale: ScaleRows? = nil
        if scaleEntries > 0 {
            scale = try Self.scaleRows(small: entries, large: scaleEntries, picture: thumb, batch: batch, batches: batches,
                                       directory: scratch.appendingPathComponent("scale"))
        }

        let report = Report(entries: entries, tableHitNanoseconds: tableHit, tableHitsPerSecond: 1e9 / tableHit,
                            dictionaryHitNanoseconds: dictionaryHit, tableHitToDictionaryRatio: tableHit / dictionaryHit,
                            concurrentHitNanoseconds: concurrent.quiet, concurrentHitWhileStoringNanoseconds: concurrent.storing,
                            storesDuringConcurrentHits: concurrent.stores, jpegDecodeNanoseconds: jpegDecode, pngDecodeNanoseconds: pngDecode,
                            speedupOverJPEG: jpegDecode / tableHit, speedupOverPNG: pngDecode / tableHit,
                            openEntries: openEntries, openMilliseconds: openMs, largeTableBytes: large?.0,
                            memoryBeforeTouch: large?.1, memoryAfterTouch: large?.2, urlRequests: urlRequests, scale: scale)
        if json { try Terminal.json(report); return }
        print("Retrieval benchmark: 100x100 bgra32 thumbnails, \(entries) entries, medians")
        Terminal.table(["method", "per image", "images/s", "table hit is"], [
            ["image table hit (view into the mapping)", String(format: "%.0f ns", tableHit), String(format: "%.2e", 1e9 / tableHit), "1x"],
            ["[UUID: Bitmap] behind a mutex", String(format: "%.0f ns", dictionaryHit), String(format: "%.2e", 1e9 / dictionaryHit),
             String(format: "%.2fx the cost", tableHit / dictionaryHit)],
            ["table hits, 2 threads at once (per thread)", String(format: "%.0f ns", concurrent.quiet),
             String(format: "%.2e", 2e9 / concurrent.quiet), String(format: "%.2fx one thread's cost", concurrent.quiet / tableHit)],
            ["table hits, 2 threads, a 3rd storing (\(concurrent.stores) stores)", String(format: "%.0f ns", concurrent.storing),
             String(format: "%.2e", 2e9 / concurrent.storing), String(format: "%.2fx one thread's cost", concurrent.storing / tableHit)],
            ["read + decode JPEG q85 (\(jpeg.count) B)", String(format: "%.1f µs", jpegDecode / 1000), String(format: "%.0f", 1e9 / jpegDecode),
             String(format: "%.0fx faster", jpegDecode / tableHit)],
            ["read + decode PNG (\(png.count) B)", String(format: "%.1f µs", pngDecode / 1000), String(format: "%.0f", 1e9 / pngDecode),
             String(format: "%.0fx faster", pngDecode / tableHit)],
        ] + urlRequests.rows)
        if let openMs { print(String(format: "open a table of %d entries: %.1f ms (median of 5)", openEntries, openMs)) }
        if let (bytes, before, after) = large {
            let delta = after.delta(since: before)
            func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
            print("touched every page of a \(mb(bytes)) table: RSS +\(mb(delta.residentBytes)), private dirty +\(mb(delta.privateDirtyBytes)), private clean +\(mb(delta.privateCleanBytes))")
        }
        if let scale {
            print("Cost as a table grows (100x100 bgra32):")
            Terminal.table(["", "\(scale.entries[0]) entries", "\(scale.entries[1]) entries", "large / small"], scale.rows)
        }
    }

    /// The median ns per operation of `first` and of `second`, each run `batches` times (after one warm-up
    /// run each) in alternation, which of the two goes first switching every round; `batch` operations a run.
    static func interleavedNanosecondsPerOp(batches: Int, batch: Int, _ first: () throws -> Void,
                                            _ second: () throws -> Void) throws -> (Double, Double) {
        try first()
        try second()
        var samples: ([Double], [Double]) = ([], [])
        for round in 0..<batches {
            for which in round % 2 == 0 ? [0, 1] : [1, 0] {
                let start = Stopwatch.now()
                try which == 0 ? first() : second()
                let nanoseconds = Double(Stopwatch.now() - start) / Double(batch)
                if which == 0 { samples.0.append(nanoseconds) } else { samples.1.append(nanoseconds) }
            }
        }
        return (Summary(samples.0).median, Summary(samples.1).median)
    }

    /// Two threads each make `batch` random hits per batch, `batches` times after one warm-up batch;
    /// with `storing`, a third thread stores those entities (copies of the picture) into the table
    /// without pause from before the hit threads start until they are done. Returns the median over batches of the mean
    /// per-hit time of the two threads, and the number of stores made.
    static func concurrentHits(table: ImageTable, ids: [UUID], batch: Int, batches: Int,
                               storing: (ids: [UUID], source: UUID, picture: Bitmap)?) -> (nanoseconds: Double, stores: Int) {
        let stop = LockedValue(false)
        let stores = LockedValue(0)
        let group = DispatchGroup()
        let firstStore = DispatchSemaphore(value: 0)
        if let storing {
            group.enter()
            Thread {
                var i = 0
                while !stop.withLock({ $0 }) {
                    _ = try? table.store(entityID: storing.ids[i % storing.ids.count], sourceID: storing.source) {
                        try copy(storing.picture, into: $0)
                    }
                    stores.withLock { $0 += 1 }
                    if i == 0 { firstStore.signal() }
                    i += 1
                }
                group.leave()
            }.start()
        }
        if storing != nil { firstStore.wait() }   // the store thread is running before any hit is timed
        let perThread = LockedValue<[[Double]]>([[], []])
        let hitters = DispatchGroup()
        for worker in 0..<2 {
            hitters.enter()
            let order = randomOrder(count: batch, range: ids.count)
            Thread {
                var sink: UInt8 = 0
                var samples: [Double] = []
                for round in 0...batches {
                    let start = Stopwatch.now()
                    for i in order {
                        if let hit = table.image(for: ids[i]) { sink &+= hit.baseAddress.load(fromByteOffset: 0, as: UInt8.self) }
                    }
                    if round > 0 { samples.append(Double(Stopwatch.now() - start) / Double(batch)) }
                }
                if sink == 42 { print("") }
                perThread.withLock { $0[worker] = samples }
                hitters.leave()
            }.start()
        }
        hitters.wait()
        stop.withLock { $0 = true }
        group.wait()
        let samples = perThread.withLock { $0 }
        let means = zip(samples[0], samples[1]).map { ($0 + $1) / 2 }
        return (Summary(means).median, stores.withLock { $0 })
    }

    static func randomOrder(count: Int, range: Int) -> [Int] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in Int.random(in: 0..<range, using: &generator) }
    }

    static func copy(_ bitmap: Bitmap, into view: MutableBitmapView) throws {
        try PixelConversion.convert(bitmap, to: view)
    }

    static func thumbnail(from path: String?, size: PixelSize) throws -> Bitmap {
        let candidates = [path, "/usr/share/backgrounds/mate/nature/Garden.jpg"].compactMap { $0 }
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate) {
            return try ImageDecoder().thumbnail(try ImageFiles.read(candidate), size: size)
        }
        return try Bitmap.drawing(size: size) { context in
            for x in 0..<size.width {
                context.fill(Rect(x: Double(x), y: 0, width: 1, height: Double(size.height)),
                             with: Color(red: Double(x) / Double(size.width), green: 0.5, blue: 1 - Double(x) / Double(size.width)))
            }
        }
    }

    static func openTime(entries: Int, directory: URL) throws -> Double {
        let format = ImageFormat(name: "open", style: .gray8, size: PixelSize(width: 8, height: 8), maximumCount: entries)
        do {
            let table = try ImageTable(format: format, directory: directory)
            let source = UUID(hashing: "v1")
            var progress = ProgressBar(total: entries, label: "filling \(entries) entries")
            for i in 0..<entries {
                if i % 1000 == 0 { progress.update(i) }
                try table.store(entityID: UUID(hashing: "open-\(i)"), sourceID: source) { $0.bytes[0] = UInt8(truncatingIfNeeded: i) }
            }
            progress.finish()
        }
        return Summary(try Stopwatch.samples(repetitions: 5, warmup: 1) {
            let table = try ImageTable(format: format, directory: directory)
            guard table.usage.entryCount == entries else { throw ValidationError("reopened \(table.usage.entryCount) of \(entries)") }
        }).median * 1000
    }

    static func touchLargeTable(megabytes: Int, picture: Bitmap, directory: URL) throws -> (Int, MemoryUsage, MemoryUsage) {
        let probe = ImageFormat(name: "large", style: .bgra32, size: picture.layout.size, maximumCount: 1)
        let count = max(1, megabytes * 1_048_576 / probe.bytesPerEntry)
        let format = ImageFormat(name: "large", style: .bgra32, size: picture.layout.size, maximumCount: count)
        let ids = (0..<count).map { UUID(hashing: "large-\($0)") }
        do {
            let table = try ImageTable(format: format, directory: directory)
            var progress = ProgressBar(total: count, label: "filling \(megabytes) MB")
            for (i, id) in ids.enumerated() {
                if i % 256 == 0 { progress.update(i) }
                try table.store(entityID: id, sourceID: id) { try copy(picture, into: $0) }
            }
            progress.finish()
            try table.flush(synchronously: true)
        }
        let table = try ImageTable(format: format, directory: directory)
        guard let before = MemoryUsage.current() else { throw ValidationError("/proc/self/smaps_rollup is unavailable") }
        var sink: UInt8 = 0
        for id in ids {
            guard let hit = table.image(for: id) else { throw ValidationError("miss in the large table") }
            hit.withUnsafeBytes { bytes in
                for offset in stride(from: 0, to: bytes.count, by: 4096) { sink &+= bytes[offset] }
            }
        }
        guard let after = MemoryUsage.current() else { throw ValidationError("/proc/self/smaps_rollup is unavailable") }
        if sink == 42 { print("") }
        return (format.maximumBytesOnDisk, before, after)
    }
}
