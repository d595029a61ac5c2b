import Foundation
import Synchronization
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport
import TesseraTesting

/// Coalescing, queueing and delivery are `ImageManager`'s own behaviour: those tests run on the scripted
/// `MockDataLoader` (no sockets). Cancelling a download and its progress are the HTTP loader's behaviour
/// too: those tests run against the real test origin.
@Suite("ImageManager: coalescing, cancellation, always-async delivery")
struct FetchCoalescingTests {
    static func url(_ name: String) -> URL { URL(string: "http://127.0.0.1/\(name)")! }

    @Test("100 concurrent requests for one URL: one request at the origin, every caller gets the image")
    func hundredRequestsOneDownload() async throws {
        do {
            let loader = MockDataLoader(), gate = LoadGate(), url = Self.url("a.png")
            loader.set(.image(try pngBytes(), gate: gate), for: url)
            let manager = try makeManager(loader: loader)
            try await withThrowingTaskGroup(of: PixelSize.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await manager.image(for: url).layout.size }
                }
                // Release the origin only when all 100 wait on the one job.
                await manager.waitForQueue { $0.waiters[url] == 100 }
                gate.open()
                var sizes: [PixelSize] = []
                for try await size in group { sizes.append(size) }
                #expect(sizes.count == 100)
                #expect(sizes.allSatisfy { $0 == PixelSize(width: 64, height: 48) })
            }
            #expect(loader.count(for: url) == 1)
            #expect(manager.statistics.downloads == 1)
            #expect(manager.statistics.coalesced == 99)
            #expect(manager.statistics.decodes == 1)
        }
    }

    @Test("N concurrent identical processed requests: one download, one decode, one processing run, N - 1 coalesced")
    func processedRequestsShareEverything() async throws {
        /// Counts the runs of the processor that carries it.
        final class Runs: Sendable {
            let count = Mutex(0)
        }
        let n = 20
        let loader = MockDataLoader(), gate = LoadGate(), url = Self.url("processed.png")
        loader.set(.image(try pngBytes(width: 200, height: 100), gate: gate), for: url)
        let manager = try makeManager(loader: loader)
        let runs = Runs()
        let counting = ImageProcessor(identifier: "test.counting") { image in
            runs.count.withLock { $0 += 1 }
            return image
        }
        let request = ImageRequest(url: url, processing: ImageProcessing(width: 80, height: 60, mode: .fill),
                                   processors: [.circle(), counting])
        try await withThrowingTaskGroup(of: Bitmap.self) { group in
            for _ in 0..<n {
                group.addTask { try await manager.image(for: request) }
            }
            // Every request waits on the one job before the origin answers.
            await manager.waitForQueue { $0.waiters[url] == n }
            #expect(loader.count(for: url) <= 1)
            gate.open()
            var images: [Bitmap] = []
            for try await image in group { images.append(image) }
            #expect(images.count == n)
            // The circle of the 80 × 60 fill is its centred 60 × 60 square.
            #expect(images.allSatisfy { $0.width == 60 && $0.height == 60 })
            #expect(images.dropFirst().allSatisfy { $0.hasSamePixels(as: images[0]) })
        }
        #expect(loader.count(for: url) == 1)
        #expect(manager.statistics.downloads == 1)
        #expect(manager.statistics.decodes == 1)
        #expect(runs.count.withLock { $0 } == 1, "the processors ran once for all the requests")
        #expect(manager.statistics.coalesced == n - 1)
        #expect(manager.statistics.networkResponses == n)
    }

    @Test("two sizes of one URL: one download, one decode per size")
    func sizesShareOneDownload() async throws {
        do {
            let loader = MockDataLoader(), gate = LoadGate(), url = Self.url("b.png")
            loader.set(.image(try pngBytes(width: 200, height: 100), gate: gate), for: url)
            let manager = try makeManager(loader: loader)
            async let full = manager.image(for: url)
            async let fit = manager.image(for: url, size: PixelSize(width: 50, height: 50), mode: .fit)
            async let fill = manager.image(for: url, size: PixelSize(width: 50, height: 50), mode: .fill)
            await manager.waitForQueue { $0.waiters[url] == 3 }
            gate.open()
            #expect(try await full.layout.size == PixelSize(width: 200, height: 100))
            #expect(try await fit.layout.size == PixelSize(width: 50, height: 25))
            #expect(try await fill.layout.size == PixelSize(width: 50, height: 50))
            #expect(loader.count(for: url) == 1)
            #expect(manager.statistics.decodes == 3)
        }
    }

    @Test("one requester cancelling leaves the download to the others; the last one cancels it")
    func cancellation() async throws {
        try await Origin.with { origin in
            let gate = OriginGate()
            origin.set("/c.png", .init(body: try pngBytes(), gate: gate))
            let loader = RecordingLoader()
            let manager = try makeManager(loader: loader)
            let url = origin.url("/c.png")

            let first = Task { try await manager.image(for: url) }
            let second = Task { try await manager.image(for: url) }
            await manager.waitForQueue { $0.waiters[url] == 2 }
            await origin.waitForArrivals("/c.png")
            first.cancel()
            await #expect(throws: TesseraError(.cancelled)) { try await first.value }
            await manager.waitForQueue { $0.waiters[url] == 1 }
            #expect(await manager.queueSnapshot().urgentRunning == [url])
            gate.open()
            #expect(try await second.value.layout.size == PixelSize(width: 64, height: 48))
            #expect(origin.count("/c.png") == 1)
            #expect(loader.recorded == [.success(200)])

            // Now every requester of a blocked download goes away: the download itself is cancelled.
            let blocked = OriginGate()
            origin.set("/d.png", .init(body: try pngBytes(), gate: blocked))
            let other = origin.url("/d.png")
            let third = Task { try await manager.image(for: other) }
            let fourth = Task { try await manager.image(for: other) }
            await origin.waitForArrivals("/d.png")
            await manager.waitForQueue { $0.waiters[other] == 2 }
            third.cancel()
            fourth.cancel()
            await #expect(throws: TesseraError(.cancelled)) { try await third.value }
            await #expect(throws: TesseraError(.cancelled)) { try await fourth.value }
            await manager.waitForQueue { $0.isIdle && $0.urgentRunning.isEmpty }
            #expect(loader.recorded == [.success(200), .cancelled])
            #expect(manager.isCachedOnDisk(other) == false)
        }
    }

    @Test("a request cancelled while queued never reaches the origin")
    func cancelWhileQueued() async throws {
        do {
            let loader = MockDataLoader(), gate = LoadGate()
            loader.set(.image(try pngBytes(), gate: gate), for: Self.url("busy.png"))
            loader.set(.image(try pngBytes()), for: Self.url("later.png"))
            let manager = try makeManager(loader: loader) { $0.maximumConcurrentDownloads = 1 }
            let busy = Task { try await manager.image(for: Self.url("busy.png")) }
            await loader.waitForLoads(of: Self.url("busy.png"))
            let later = Task { try await manager.image(for: Self.url("later.png")) }
            await manager.waitForQueue { $0.urgentQueued == [Self.url("later.png")] }
            later.cancel()
            await #expect(throws: TesseraError(.cancelled)) { try await later.value }
            await manager.waitForQueue { $0.urgentQueued.isEmpty }
            gate.open()
            _ = try await busy.value
            #expect(loader.count(for: Self.url("later.png")) == 0)
        }
    }

    @Test("memory hits are delivered asynchronously: the completion never runs inside loadImage")
    func alwaysAsync() async throws {
        do {
            let loader = MockDataLoader(), url = Self.url("e.png")
            loader.set(.image(try pngBytes()), for: url)
            let manager = try makeManager(loader: loader)
            _ = try await manager.image(for: url)
            #expect(manager.cachedImage(for: url) != nil)

            let returned = Mutex(false)
            let seen = Mutex<(afterReturn: Bool, size: PixelSize?)?>(nil)
            let ticket = manager.loadImage(for: url) { result in
                let after = returned.withLock { $0 }
                seen.withLock { $0 = (after, try? result.get().layout.size) }
            }
            returned.withLock { $0 = true }
            await ticket.wait()
            let observed = try #require(seen.withLock { $0 })
            #expect(observed.afterReturn)
            #expect(observed.size == PixelSize(width: 64, height: 48))
            #expect(manager.statistics.memoryHits == 1)
            #expect(loader.count(for: url) == 1)
        }
    }

    @Test("progress reports bytes received of expected, ending at the full size")
    func progress() async throws {
        try await Origin.with { origin in
            let body = try pngBytes(width: 300, height: 300)
            origin.set("/p.png", .init(body: body))
            origin.set("/q.png", .init(body: body, chunkSize: 1000))
            let manager = try makeManager()
            let reports = Mutex<[LoadProgress]>([])
            _ = try await manager.image(for: origin.url("/p.png"), progress: { p in reports.withLock { $0.append(p) } })
            let seen = reports.withLock { $0 }
            #expect(seen.last == LoadProgress(receivedBytes: body.count, expectedBytes: body.count))
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.receivedBytes <= $1.receivedBytes })

            let streamed = Mutex<[LoadProgress]>([])
            _ = try await manager.image(for: origin.url("/q.png"), progress: { p in streamed.withLock { $0.append(p) } })
            let chunks = streamed.withLock { $0 }
            #expect(chunks.last?.receivedBytes == body.count)
            #expect(chunks.allSatisfy { $0.expectedBytes == nil })
        }
    }
}
