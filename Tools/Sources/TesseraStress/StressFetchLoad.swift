import Foundation
import Synchronization
import Tessera
import TesseraHTTP
import TesseraTestSupport

/// `TesseraStress --fetch-load --dir D [--seconds S | --operations N] [--tasks T]`: T tasks hammer one
/// ``ImageManager`` (small memory and disk caches, so that both evict all the time) against a local
/// ``Origin`` on 127.0.0.1 serving 120 PNGs (fresh for an hour, revalidated with an ETag on
/// every use, or `no-store`), while ``StressLoad`` runs on two image tables in the same process.
///
/// Operations: encoded bytes (must equal the origin's bytes exactly), decoded thumbnails (the
/// requested box, every pixel the image's colour), prefetches, cancelled requests, memory and disk
/// removals. Once a second: `fetch t=… rss=…MB ops=… wrong=… disk=COUNT/BYTES memory=COUNT downloads=…
/// notModified=… diskHits=… memoryHits=…`; the disk cache must stay within its size limit throughout,
/// and at the end its directory must hold exactly the indexed entry files. Exits 2 on any violation.
struct StressFetchLoad {
    let directory: URL
    let seconds: Double
    let operationsPerTask: Int
    let tasks: Int

    static let imageCount = 120
    static let diskLimit = 12 << 10

    static func color(_ k: Int) -> Color {
        Color(red: Double(k % 5) / 4, green: Double(k / 5 % 5) / 4, blue: Double(k / 25 % 5) / 4)
    }

    final class Counters: Sendable {
        let ops = Atomic<Int>(0), wrong = Atomic<Int>(0), failed = Atomic<Int>(0), finished = Atomic<Int>(0)
    }

    func run() async throws -> Bool {
        let bodies = try (0..<Self.imageCount).map { k in
            try PNGEncoder().encode(try Bitmap.drawing(size: PixelSize(width: 40 + k % 23, height: 30 + k % 17)) { $0.fill(with: Self.color(k)) })
        }
        let origin = try await Self.startOrigin(bodies: bodies)
        let cacheDirectory = directory.appendingPathComponent("disk-cache", isDirectory: true)
        let manager = try ImageManager(configuration: .init(memory: .init(costLimit: 256 << 10, countLimit: 40),
                                                            disk: .init(directory: cacheDirectory, sizeLimit: Self.diskLimit),
                                                            diskSweepInterval: .seconds(1), requestTimeout: .seconds(30)),
                                       loader: HTTPDataLoader())
        let urls = (0..<Self.imageCount).map { origin.url("/img/\($0).png") }
        let counters = Counters()
        let start = ContinuousClock.now
        let deadline = seconds > 0 ? start + .milliseconds(Int(seconds * 1000)) : nil
        let perTask = operationsPerTask, workers = tasks
        let tables = StressLoad(directory: directory.appendingPathComponent("tables", isDirectory: true), seconds: seconds,
                                operationsPerTask: operationsPerTask, tasks: 2)
        try FileManager.default.createDirectory(at: tables.directory, withIntermediateDirectories: true)
        async let tablesClean = tables.run()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    await Self.work(worker: worker, manager: manager, urls: urls, bodies: bodies, counters: counters,
                                    deadline: deadline, operations: perTask)
                    counters.finished.add(1, ordering: .relaxed)
                }
            }
            group.addTask {
                var next = start + .seconds(1)
                while counters.finished.load(ordering: .relaxed) < workers {
                    try? await Task.sleep(until: next, clock: .continuous)
                    next += .seconds(1)
                    Self.report(start: start, manager: manager, counters: counters)
                }
            }
        }
        Self.report(start: start, manager: manager, counters: counters)
        guard let disk = manager.diskCache else { return false }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path)) ?? []
        let consistent = names.count == disk.statistics.count && names.allSatisfy { $0.utf8.count == 64 }
        say("fetch end files=\(names.count) indexed=\(disk.statistics.count) \(consistent ? "consistent" : "INCONSISTENT")")
        let tablesOK = try await tablesClean
        return counters.wrong.load(ordering: .relaxed) == 0 && consistent && tablesOK
    }

    private static func work(worker: Int, manager: ImageManager, urls: [URL], bodies: [[UInt8]], counters: Counters,
                             deadline: ContinuousClock.Instant?, operations: Int) async {
        var random = SplitMix(state: UInt64(worker) &* 0x9E37_79B9 &+ UInt64(getpid()))
        var n = 0
        while true {
            n += 1
            if let deadline { if ContinuousClock.now >= deadline { break } } else if n > operations { break }
            let k = random.next(imageCount)
            let url = urls[k]
            do {
                switch random.next(10) {
                case 0...3:
                    if try await manager.data(for: url) != Data(bodies[k]) { counters.wrong.add(1, ordering: .relaxed) }
                case 4...6:
                    let box = PixelSize(width: 8 + random.next(40), height: 8 + random.next(40))
                    let image = try await manager.image(for: url, size: box, mode: .fill)
                    if image.layout.size != box || !isSolid(image, color(k)) { counters.wrong.add(1, ordering: .relaxed) }
                case 7:
                    await manager.prefetch([urls[random.next(imageCount)], urls[random.next(imageCount)]])
                case 8:
                    manager.loadImage(for: url, size: PixelSize(width: 16, height: 16)) { _ in }.cancel()
                default:
                    if random.next(2) == 0 { manager.clearMemoryCache() } else { await manager.diskCache?.remove(url) }
                }
            } catch is CancellationError {
            } catch {
                counters.failed.add(1, ordering: .relaxed)
                counters.wrong.add(1, ordering: .relaxed)
                say("fetch error: \(error)")
            }
            counters.ops.add(1, ordering: .relaxed)
        }
    }

    /// Whether every pixel of `image` is `color` (±1 per channel: scaling a solid colour may round).
    static func isSolid(_ image: Bitmap, _ color: Color) -> Bool {
        guard let expected = try? Bitmap.drawing(size: PixelSize(width: 1, height: 1), { $0.fill(with: color) }),
              image.layout.style == expected.layout.style else { return true }
        let bytesPerPixel = expected.layout.style.bytesPerPixel
        return expected.withUnsafeBytes { want in
            image.withUnsafeBytes { got in
                for y in 0..<image.layout.height {
                    let row = y * image.layout.bytesPerRow
                    for x in 0..<image.layout.width {
                        for c in 0..<bytesPerPixel where abs(Int(got[row + x * bytesPerPixel + c]) - Int(want[c])) > 1 { return false }
                    }
                }
                return true
            }
        }
    }

    private static func report(start: ContinuousClock.Instant, manager: ImageManager, counters: Counters) {
        let elapsed = ContinuousClock.now - start
        let t = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let disk = manager.diskCache?.statistics
        if let disk, disk.totalBytes > diskLimit { counters.wrong.add(1, ordering: .relaxed); say("disk over its limit: \(disk.totalBytes)") }
        let stats = manager.statistics
        let memory = manager.memoryCache?.statistics.count ?? -1
        say(String(format: "fetch t=%.1f rss=%.1fMB ops=%d wrong=%d failed=%d disk=%d/%d memory=%d downloads=%d notModified=%d diskHits=%d memoryHits=%d",
                   t, Double(StressLoad.residentBytes()) / 1_048_576, counters.ops.load(ordering: .relaxed),
                   counters.wrong.load(ordering: .relaxed), counters.failed.load(ordering: .relaxed), disk?.count ?? -1, disk?.totalBytes ?? -1,
                   memory, stats.downloads, stats.notModified, stats.diskHits, stats.memoryHits))
    }

    /// The origin: `/img/K.png` is body K; K % 3 == 0 fresh for an hour, 1 revalidated by ETag every time, 2 `no-store`.
    /// It keeps no arrival log (only counts), so that its memory stays flat however long the load runs,
    /// and listens until the process exits.
    private static func startOrigin(bodies: [[UInt8]]) async throws -> Origin {
        let origin = try await Origin.start(logsArrivals: false)
        for (k, body) in bodies.enumerated() {
            switch k % 3 {
            case 0: origin.set("/img/\(k).png", .init(body: body, cacheControl: "max-age=3600"))
            case 1: origin.set("/img/\(k).png", .init(body: body, cacheControl: "no-cache", etag: "\"\(k)\""))
            default: origin.set("/img/\(k).png", .init(body: body, cacheControl: "no-store"))
            }
        }
        return origin
    }
}
