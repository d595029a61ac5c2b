import ArgumentParser
import Foundation
import Tessera
import TesseraHTTP
import TesseraBenchSupport
@_spi(Internal) import TesseraRemote

/// `tessera bench fetch [--json]`: urgent requests behind a prefetch backlog, prioritized lanes against
/// one FIFO queue, against a local origin with injected latency; and origin requests per distinct URL.
struct FetchBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Time for urgent requests to complete behind a prefetch backlog: two lanes vs one FIFO queue.",
        discussion: """
        A local HTTP origin (Hummingbird on 127.0.0.1) answers every request after --latency-ms. Per \
        repetition and scheduling, a fresh ImageManager (empty caches, --width parallel downloads) gets \
        --backlog prefetches; once they are all queued, --urgent urgent requests are made at once (half \
        of them for URLs at the end of the backlog, which the prioritized lanes promote, half for new \
        URLs) and the time until all are decoded is measured. Then the backlog is cancelled.
          prioritized  urgent lane of --width, slow lane of 1 that starts nothing while urgent work exists
          fifo         one first-in-first-out queue of --width for everything (the baseline)
        A third scenario requests --distinct URLs --copies times each, all at once, and counts requests at \
        the origin. Reported: median and samples of the urgent completion time, the ratio fifo/prioritized, \
        origin requests per distinct URL.
        """
    )

    @Option(name: .customLong("latency-ms"), help: "Delay the origin adds to every response.") var latencyMilliseconds = 20
    @Option(help: "Prefetches queued before the urgent requests.") var backlog = 200
    @Option(help: "Urgent requests measured.") var urgent = 8
    @Option(help: "Parallel downloads (urgent lane width; the FIFO queue's width).") var width = 4
    @Option(help: "Repetitions per scheduling.") var repetitions = 5
    @Option(help: "Distinct URLs in the coalescing scenario.") var distinct = 20
    @Option(help: "Concurrent requests per distinct URL in the coalescing scenario.") var copies = 10
    @Flag(help: "Print JSON.") var json = false

    struct SchedulingResult: Codable {
        var scheduling: String
        var urgentMedianMs: Double
        var urgentSamplesMs: [Double]
        var originRequests: Int
        var originRequestsPerDistinctURL: Double
    }

    struct Report: Codable {
        var latencyMs: Int
        var backlog: Int
        var urgent: Int
        var width: Int
        var repetitions: Int
        var results: [SchedulingResult]
        var fifoOverPrioritized: Double
        var coalescingRequests: Int
        var coalescingDistinctURLs: Int
        var coalescingOriginRequests: Int
    }

    func run() async throws {
        guard backlog > 0, urgent > 0, width > 0, repetitions > 0 else { throw ValidationError("counts must be positive") }
        // Half of the urgent requests (rounded down) promote the last URLs of the backlog, so the backlog
        // must hold that many; otherwise `measure` would index before its first URL and trap.
        guard urgent / 2 <= backlog else {
            throw ValidationError("--urgent \(urgent) promotes \(urgent / 2) backlog URLs but --backlog is \(backlog)")
        }
        let png = try PNGEncoder().encode(try Bitmap.drawing(size: PixelSize(width: 256, height: 256)) {
            $0.fill(with: Color(red: 0.2, green: 0.5, blue: 0.8))
        })
        let origin = try await Self.startOrigin(body: png, latency: .milliseconds(latencyMilliseconds))
        let loader = HTTPDataLoader(configuration: .init(maximumConnectionsPerHost: max(8, width * 2)))
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-fetch-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }

        var results: [SchedulingResult] = []
        for scheduling in [FetchScheduling.prioritized, .fifo] {
            var samples: [Double] = []
            for repetition in 0..<repetitions {
                let prefix = "/\(scheduling.rawValue)/\(repetition)/"
                samples.append(try await measure(scheduling: scheduling, prefix: prefix, origin: origin, loader: loader,
                                                 directory: scratch.appendingPathComponent("\(scheduling.rawValue)-\(repetition)")))
            }
            let counts = origin.requests(under: "/\(scheduling.rawValue)/")
            results.append(SchedulingResult(scheduling: scheduling.rawValue, urgentMedianMs: Summary(samples).median * 1000,
                                            urgentSamplesMs: samples.map { $0 * 1000 }, originRequests: counts.values.reduce(0, +),
                                            originRequestsPerDistinctURL: Double(counts.values.reduce(0, +)) / Double(max(1, counts.count))))
        }

        // Coalescing: every distinct URL requested `copies` times at once, with a disk cache of this run's own
        // (the default directory is shared by every run: a port used again would find the images there).
        let manager = try ImageManager(configuration: .init(disk: DiskCache.Configuration(directory: scratch.appendingPathComponent("coalescing")),
                                                            diskSweepInterval: nil, maximumConcurrentDownloads: width), loader: loader)
        let urls = (0..<distinct).map { origin.url("/coalesce/\($0).png") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<copies { for url in urls { group.addTask { _ = try await manager.image(for: url) } } }
            try await group.waitForAll()
        }
        let coalesced = origin.requests(under: "/coalesce/").values.reduce(0, +)
        try await loader.shutdown()
        await origin.stop()

        let prioritized = results[0].urgentMedianMs, fifo = results[1].urgentMedianMs
        let report = Report(latencyMs: latencyMilliseconds, backlog: backlog, urgent: urgent, width: width, repetitions: repetitions,
                            results: results, fifoOverPrioritized: fifo / prioritized, coalescingRequests: distinct * copies,
                            coalescingDistinctURLs: distinct, coalescingOriginRequests: coalesced)
        if json { try Terminal.json(report); return }
        print("Fetch benchmark: origin latency \(latencyMilliseconds) ms, \(backlog) prefetches queued, then \(urgent) urgent requests; "
              + "width \(width); median of \(repetitions)")
        Terminal.table(["scheduling", "urgent done (ms, median)", "samples (ms)", "origin requests", "per distinct URL"], results.map {
            [$0.scheduling, String(format: "%.1f", $0.urgentMedianMs), $0.urgentSamplesMs.map { String(format: "%.0f", $0) }.joined(separator: " "),
             "\($0.originRequests)", String(format: "%.2f", $0.originRequestsPerDistinctURL)]
        })
        print(String(format: "urgent requests complete %.1fx sooner with prioritized lanes than with one FIFO queue", report.fifoOverPrioritized))
        print("coalescing: \(distinct * copies) concurrent requests for \(distinct) URLs -> \(coalesced) origin requests "
              + String(format: "(%.2f per distinct URL)", Double(coalesced) / Double(distinct)))
    }

    /// The benchmark's origin: every path answers `body` as `image/png` after `latency`; only counts
    /// per path are kept.
    private static func startOrigin(body: [UInt8], latency: Duration) async throws -> Origin {
        let origin = try await Origin.start(latency: latency, logsArrivals: false)
        origin.set("*", .init(body: body, contentType: "image/png"))
        return origin
    }

    /// One repetition: queue the backlog, wait until it is queued, time the urgent requests, cancel the rest.
    private func measure(scheduling: FetchScheduling, prefix: String, origin: Origin, loader: HTTPDataLoader,
                         directory: URL) async throws -> Double {
        var configuration = ImageManager.Configuration(disk: DiskCache.Configuration(directory: directory), diskSweepInterval: nil,
                                                       maximumConcurrentDownloads: width)
        configuration.scheduling = scheduling
        let manager = try ImageManager(configuration: configuration, loader: loader)
        let queued = (0..<backlog).map { origin.url("\(prefix)b/\($0).png") }
        await manager.prefetch(queued)
        // Every backlog URL is in a lane, or already downloaded: on a loaded machine the first prefetches can
        // finish before the last are queued, so the lanes alone may never hold the whole backlog at once.
        await manager.waitForQueue { snapshot in
            let lanes = Set(snapshot.slowQueued + snapshot.urgentQueued).union(snapshot.slowRunning).union(snapshot.urgentRunning)
            return queued.allSatisfy { lanes.contains($0) || manager.isCachedOnDisk($0) }
        }
        let promoted = (0..<(urgent / 2)).map { queued[backlog - 1 - $0] }
        let fresh = (0..<(urgent - urgent / 2)).map { origin.url("\(prefix)u/\($0).png") }
        let start = Stopwatch.now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for url in promoted + fresh { group.addTask { _ = try await manager.image(for: url) } }
            try await group.waitForAll()
        }
        let seconds = Double(Stopwatch.now() - start) / 1e9
        await manager.cancelPrefetch(queued)
        await manager.waitForQueue { $0.isIdle && $0.urgentRunning.isEmpty && $0.slowRunning.isEmpty }
        return seconds
    }
}
