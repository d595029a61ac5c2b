import Foundation
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

@Suite("ImageManager: fast and slow lanes, prefetch, demote, promote")
struct FetchQueueTests {
    /// Requests held at a gate must not time out while the test looks at the queues, however loaded the
    /// machine: the gates, not a clock, decide when they finish (30 s, the default, was reached once at load 20).
    static func gated(_ configuration: inout ImageManager.Configuration) { configuration.requestTimeout = .seconds(600) }

    @Test("200 prefetches behind a slow origin: an urgent request completes before the backlog")
    func urgentBeatsBacklog() async throws {
        try await Origin.with { origin in
            let slow = OriginGate()
            let png = try pngBytes()
            for i in 0..<200 { origin.set("/slow/\(i).png", .init(body: png, gate: slow)) }
            origin.set("/now.png", .init(body: png))
            let manager = try makeManager(Self.gated)
            let backlog = (0..<200).map { origin.url("/slow/\($0).png") }
            await manager.prefetch(backlog)
            // The slow lane runs one prefetch at a time: the first is stuck at the origin, 199 wait.
            await origin.waitForArrivals("/slow/0.png")
            let queued = await manager.queueSnapshot()
            #expect(queued.slowRunning == [backlog[0]])
            #expect(queued.slowQueued.count == 199)

            let image = try await manager.image(for: origin.url("/now.png"))
            #expect(image.layout.size == PixelSize(width: 64, height: 48))
            // Completed while the whole backlog was still pending: only one prefetch reached the origin.
            #expect(origin.paths.filter { $0.hasPrefix("/slow/") } == ["/slow/0.png"])
            #expect(await manager.queueSnapshot().slowQueued.count == 199)

            slow.open()
            await manager.waitForQueue { $0.isIdle }
            #expect(origin.paths.filter { $0.hasPrefix("/slow/") } == backlog.map(\.path))
            #expect(backlog.allSatisfy { manager.isCachedOnDisk($0) })
            #expect(origin.arrivals.count == 201)
        }
    }

    @Test("the slow lane starts nothing while an urgent download runs")
    func slowLanePausesWhileUrgentRuns() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            let png = try pngBytes()
            origin.set("/urgent.png", .init(body: png, gate: gate))
            for i in 0..<3 { origin.set("/pre/\(i).png", .init(body: png)) }
            let manager = try makeManager(Self.gated)
            let urgent = Task { try await manager.image(for: origin.url("/urgent.png")) }
            await origin.waitForArrivals("/urgent.png")
            let prefetched = (0..<3).map { origin.url("/pre/\($0).png") }
            await manager.prefetch(prefetched)
            await manager.waitForQueue { $0.slowQueued.count == 3 }
            let paused = await manager.queueSnapshot()
            #expect(paused.slowRunning.isEmpty)
            #expect(paused.urgentRunning == [origin.url("/urgent.png")])
            gate.open()
            _ = try await urgent.value
            await manager.waitForQueue { $0.isIdle }
            #expect(origin.paths == ["/urgent.png", "/pre/0.png", "/pre/1.png", "/pre/2.png"])
        }
    }

    @Test("demote moves a queued urgent request to the front of the slow lane; its caller still gets the image")
    func demote() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            let png = try pngBytes()
            origin.set("/a.png", .init(body: png, gate: gate))
            origin.set("/b.png", .init(body: png))
            origin.set("/c.png", .init(body: png))
            let manager = try makeManager { Self.gated(&$0); $0.maximumConcurrentDownloads = 1 }
            let (a, b, c) = (origin.url("/a.png"), origin.url("/b.png"), origin.url("/c.png"))
            let first = Task { try await manager.image(for: a) }
            await origin.waitForArrivals("/a.png")
            let second = Task { try await manager.image(for: b) }
            await manager.prefetch([c])
            await manager.waitForQueue { $0.urgentQueued == [b] && $0.slowQueued == [c] }

            await manager.demote(b)
            let demoted = await manager.queueSnapshot()
            #expect(demoted.urgentQueued.isEmpty)
            #expect(demoted.slowQueued == [b, c])

            gate.open()
            _ = try await first.value
            #expect(try await second.value.layout.size == PixelSize(width: 64, height: 48))
            await manager.waitForQueue { $0.isIdle }
            #expect(origin.paths == ["/a.png", "/b.png", "/c.png"])
        }
    }

    @Test("an urgent request for a prefetch promotes it without a second download")
    func promote() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            let png = try pngBytes()
            origin.set("/p0.png", .init(body: png, gate: gate))
            origin.set("/p1.png", .init(body: png))
            origin.set("/p2.png", .init(body: png))
            let manager = try makeManager(Self.gated)
            let urls = ["/p0.png", "/p1.png", "/p2.png"].map(origin.url)
            await manager.prefetch(urls)
            await origin.waitForArrivals("/p0.png")
            await manager.waitForQueue { $0.slowQueued == [urls[1], urls[2]] }

            // Queued on the slow lane: moves to the urgent lane and runs now, ahead of /p1.
            let promoted = try await manager.image(for: urls[2])
            #expect(promoted.layout.size == PixelSize(width: 64, height: 48))
            #expect(origin.paths == ["/p0.png", "/p2.png"])
            #expect(await manager.queueSnapshot().slowQueued == [urls[1]])

            // Running on the slow lane: relabelled urgent, the running download is shared.
            let running = Task { try await manager.image(for: urls[0]) }
            await manager.waitForQueue { $0.urgentRunning == [urls[0]] && $0.slowRunning.isEmpty }
            gate.open()
            _ = try await running.value
            await manager.waitForQueue { $0.isIdle }
            #expect(origin.count("/p0.png") == 1)
            #expect(origin.count("/p2.png") == 1)
            #expect(origin.paths == ["/p0.png", "/p2.png", "/p1.png"])
        }
    }

    @Test("a prefetched URL on disk is not downloaded again; cancelling a prefetch removes it from the queue")
    func prefetchSkipsCachedAndCancels() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            let png = try pngBytes()
            origin.set("/x.png", .init(body: png))
            origin.set("/y.png", .init(body: png, gate: gate))
            origin.set("/z.png", .init(body: png))
            let manager = try makeManager(Self.gated)
            let (x, y, z) = (origin.url("/x.png"), origin.url("/y.png"), origin.url("/z.png"))
            _ = try await manager.image(for: x)
            await manager.prefetch([x, y, z])
            await origin.waitForArrivals("/y.png")
            await manager.waitForQueue { $0.slowQueued == [z] }
            await manager.cancelPrefetch([z])
            await manager.waitForQueue { $0.slowQueued.isEmpty }
            gate.open()
            await manager.waitForQueue { $0.isIdle }
            #expect(origin.count("/x.png") == 1)
            #expect(origin.count("/z.png") == 0)
            #expect(manager.isCachedOnDisk(y))
        }
    }

    @Test("FIFO scheduling (the benchmark's baseline) serves an urgent request after the backlog")
    func fifoBaseline() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            let png = try pngBytes()
            for i in 0..<3 { origin.set("/f/\(i).png", .init(body: png, gate: gate)) }
            origin.set("/now.png", .init(body: png))
            let manager = try makeManager { Self.gated(&$0); $0.scheduling = .fifo; $0.maximumConcurrentDownloads = 1 }
            await manager.prefetch((0..<3).map { origin.url("/f/\($0).png") })
            await origin.waitForArrivals("/f/0.png")
            let urgent = Task { try await manager.image(for: origin.url("/now.png")) }
            await manager.waitForQueue { $0.urgentQueued.last == origin.url("/now.png") }
            gate.open()
            _ = try await urgent.value
            await manager.waitForQueue { $0.isIdle }
            #expect(origin.paths == ["/f/0.png", "/f/1.png", "/f/2.png", "/now.png"])
        }
    }
}
